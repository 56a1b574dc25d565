package messages

import (
	"errors"
	"net/http"

	"sdkpp/server/guildaccess"
	"sdkpp/server/store"
	"sdkpp/wire"
)

// mayReadContent is the MESSAGE_CONTENT rule, the one answer to "may this reader read this
// message's content" for gateway dispatches, REST reads and forwards (rule FWD-1). The content
// (content, embeds, attachments, components, and a forward's snapshot) is readable by:
//   - a privileged reader: a user (never a bot); a bot's gateway session with the
//     MESSAGE_CONTENT intent; over REST, a bot whose application may read message content
//     (AppReadsMessageContent);
//   - the message's author;
//   - a user the message mentions, or, for a forward, the forwarded message mentioned.
func mayReadContent(reader uint64, privileged bool, m *wire.GuildMessage) bool {
	if privileged || uint64(m.Author.ID) == reader {
		return true
	}
	for _, men := range m.Mentions {
		if uint64(men.ID) == reader {
			return true
		}
	}
	for _, snap := range m.MessageSnapshots {
		for _, u := range snap.Message.Mentions {
			if uint64(u.ID) == reader {
				return true
			}
		}
	}
	return false
}

// contentFor is m as reader sees it (mayReadContent): without content, embeds, attachments,
// components and snapshot content when the reader may not read them, and likewise for a reply's
// referenced_message, by its own author and mentions. changed tells whether anything was
// removed. m's slices are not changed.
func contentFor(m wire.GuildMessage, reader uint64, privileged bool) (out wire.GuildMessage, changed bool) {
	if !mayReadContent(reader, privileged, &m) {
		m.Content, m.Embeds, m.Attachments, m.Components = "", []struct{}{}, []wire.Attachment{}, []struct{}{}
		if len(m.MessageSnapshots) > 0 {
			snaps := make([]wire.MessageSnapshot, len(m.MessageSnapshots))
			for i, s := range m.MessageSnapshots {
				s.Message.Content, s.Message.Embeds, s.Message.Attachments = "", []struct{}{}, []wire.Attachment{}
				snaps[i] = s
			}
			m.MessageSnapshots = snaps
		}
		changed = true
	}
	if ref := m.ReferencedMessage.Message; ref != nil {
		if r, c := contentFor(*ref, reader, privileged); c {
			m.ReferencedMessage.Message = &r
			changed = true
		}
	}
	return m, changed
}

// forwardContentError refuses content on a forward (400 50035 at content): a forward carries
// only its snapshot.
func forwardContentError() *wire.APIError {
	return wire.InvalidAt("content", "MESSAGE_FORWARD_CONTENT_NOT_ALLOWED", "A forwarded message cannot have content.")
}

// readSend reads the body of POST /channels/{id}/messages (readMessageRequest): its content
// (required, but for a forward, which may have none, and for a message with files), nonce,
// message_reference and attachments. A forward carries neither content nor files. The caller
// closes the request it returns.
func readSend(r *http.Request) (*messageRequest, string, *wire.MessageReferenceRequest, error) {
	req, err := readMessageRequest(r)
	if err != nil {
		return nil, "", nil, err
	}
	ok := false
	defer func() {
		if !ok {
			req.Close()
		}
	}()
	body := &req.body
	ref, err := wire.ParseMessageReference(body.MessageReference)
	if err != nil {
		return nil, "", nil, err
	}
	if ref != nil && ref.Type == wire.MessageReferenceForward {
		if body.Content != nil && *body.Content != "" {
			return nil, "", nil, forwardContentError()
		}
		if len(req.files) > 0 || len(req.attachments) > 0 {
			return nil, "", nil, wire.InvalidAt("attachments", "MESSAGE_FORWARD_ATTACHMENTS_NOT_ALLOWED",
				"A forwarded message cannot have attachments.")
		}
		ok = true
		return req, "", ref, nil
	}
	if len(req.files) > 0 && (body.Content == nil || *body.Content == "") {
		ok = true
		return req, "", ref, nil // attachments without content
	}
	if err := checkContent(body.Content, true); err != nil {
		return nil, "", nil, err
	}
	ok = true
	return req, *body.Content, ref, nil
}

// reference makes m, about to be sent in ch where the caller has perms, the reply or forward
// ref asks for (nothing when ref is nil).
//
// A reply (type 0) answers a message of ch: a channel_id other than ch's is 400 50035
// REPLIES_CANNOT_REFERENCE_OTHER_CHANNEL; it needs READ_MESSAGE_HISTORY in ch (403 50013); a
// message that is not there (or a guild_id other than ch's) is 400 50035
// MESSAGE_REFERENCE_UNKNOWN_MESSAGE, unless fail_if_not_exists is false: then m is sent as a plain
// message. m gets type REPLY (19).
//
// A forward (type 1, rule FWD-1) carries a message of any guild channel the caller may view
// (else 404 10003 / 403 50001, as for the path's channel) and read (READ_MESSAGE_HISTORY, else
// 403 50013), channel_id defaulting to ch. A message that is not there is 400 50035
// MESSAGE_REFERENCE_UNKNOWN_MESSAGE whatever fail_if_not_exists says (a forward without its
// message would be empty). The caller must be able to read the message's content
// (mayReadContent, with the caller's REST privilege), else 403 160014. m gets a snapshot of the
// message as it is now (of the message it forwards, when that is itself a forward) and no
// content of its own.
func (s *Service) reference(q *guildaccess.Caller, ch *store.GuildChannel, perms uint64, ref *wire.MessageReferenceRequest, m *store.GuildMessage) error {
	if ref == nil {
		return nil
	}
	if ref.Type == wire.MessageReferenceForward {
		return s.forward(q, ref, m)
	}
	if ref.ChannelID != 0 && uint64(ref.ChannelID) != ch.ID {
		return wire.InvalidAt("message_reference", "REPLIES_CANNOT_REFERENCE_OTHER_CHANNEL", "Cannot reply to a message in a different channel")
	}
	if perms&guildaccess.PermReadMessageHistory == 0 {
		return wire.MissingPermissions()
	}
	_, err := s.Store.GetGuildMessage(q.Ctx, ch.ID, uint64(ref.MessageID))
	if errors.Is(err, store.ErrNotFound) || (err == nil && ref.GuildID != 0 && uint64(ref.GuildID) != ch.GuildID) {
		if !ref.FailIfNotExists {
			return nil
		}
		return wire.UnknownReferencedMessage()
	}
	if err != nil {
		return err
	}
	m.Reference = &store.MessageReference{Type: store.ReferenceReply, MessageID: uint64(ref.MessageID), ChannelID: ch.ID,
		GuildID: ch.GuildID}
	return nil
}

// forward is reference for a forward.
func (s *Service) forward(q *guildaccess.Caller, ref *wire.MessageReferenceRequest, m *store.GuildMessage) error {
	from := m.ChannelID
	if ref.ChannelID != 0 {
		from = uint64(ref.ChannelID)
	}
	src, _, perms, err := s.ChannelAccess(q, from)
	if err != nil {
		return err
	}
	if perms&guildaccess.PermReadMessageHistory == 0 {
		return wire.MissingPermissions()
	}
	if ref.GuildID != 0 && uint64(ref.GuildID) != src.GuildID {
		return wire.UnknownReferencedMessage()
	}
	orig, err := s.Store.GetGuildMessage(q.Ctx, src.ID, uint64(ref.MessageID))
	if errors.Is(err, store.ErrNotFound) {
		return wire.UnknownReferencedMessage()
	}
	if err != nil {
		return err
	}
	obj, err := s.messageFields(q.Ctx, orig)
	if err != nil {
		return err
	}
	if !mayReadContent(q.UserID, q.ReadsContent, &obj) {
		return wire.CannotForwardUnreadable() // rule FWD-1
	}
	snap := orig.Snapshot
	if snap == nil {
		snap = &store.MessageSnapshot{Type: obj.Type, Content: orig.Content, Mentions: orig.Mentions, Flags: obj.Flags,
			CreatedAt: orig.CreatedAt, EditedAt: orig.EditedAt}
	}
	m.Content, m.Snapshot = "", snap
	m.Reference = &store.MessageReference{Type: store.ReferenceForward, MessageID: orig.ID, ChannelID: src.ID, GuildID: src.GuildID}
	return nil
}

// referenceFields fills out's type, flags, message_reference and message_snapshots from m's
// reference and snapshot.
func (s *Service) referenceFields(p *page, m *store.GuildMessage, out *wire.GuildMessage) {
	if r := m.Reference; r != nil {
		out.MessageReference = &wire.MessageReference{Type: r.Type, MessageID: wire.Snowflake(r.MessageID),
			ChannelID: wire.Snowflake(r.ChannelID), GuildID: wire.Snowflake(r.GuildID)}
		if r.Type == store.ReferenceReply {
			out.Type = wire.MessageTypeReply
		}
	}
	snap := m.Snapshot
	if snap == nil {
		return
	}
	out.Flags |= wire.MessageFlagHasSnapshot
	sm := wire.SnapshotMessage{Type: snap.Type, Content: snap.Content, Embeds: []struct{}{}, Attachments: []wire.Attachment{},
		Timestamp: guildaccess.Timestamp(snap.CreatedAt), Flags: snap.Flags, Mentions: []wire.User{}, MentionRoles: []string{}}
	if !snap.EditedAt.IsZero() {
		e := guildaccess.Timestamp(snap.EditedAt)
		sm.EditedTimestamp = &e
	}
	for _, id := range snap.Mentions {
		if u, ok := p.user(id); ok {
			sm.Mentions = append(sm.Mentions, u)
		}
	}
	out.MessageSnapshots = []wire.MessageSnapshot{{Message: sm}}
}
