package messages

import (
	"context"
	"errors"
	"net/http"
	"regexp"
	"unicode/utf8"

	"sdkpp/server/counters"
	"sdkpp/server/guildaccess"
	"sdkpp/server/httpx"
	"sdkpp/server/store"
	"sdkpp/wire"
	gwire "sdkpp/wire/gateway"
)

// Limits of the message routes (the platform's).
const (
	MaxMessagesList = 100 // GET /channels/{id}/messages?limit=
	DefaultMessages = 50
)

// Service serves the messages of guild channels. Set its fields before Register.
type Service struct {
	*guildaccess.Base
	// Search builds guilds' search indexes (rule GLD-3); nil leaves unindexed guilds so.
	Search SearchIndexer
	// PublicURL is the web base the URLs of attachments start with (RegisterAttachments serves
	// them), e.g. http://127.0.0.1:7710.
	PublicURL string
	// Counter counts slowmode's messages (package counters); nil counts in memory.
	Counter counters.Counter

	slow slowmode // when members last sent in each channel (slowmode.go)
}

// Register adds the message routes of guild channels to mux (paths relative to the API base):
// GET /channels/{channel_id}/messages/{message_id}, the pins (registerPins) and Search Guild
// Messages. The other message routes share their patterns with the DM routes: see Shared.
func (s *Service) Register(mux httpx.Router) {
	mux.HandleFunc("GET /channels/{channel_id}/messages/{message_id}", s.Route(s.getMessage))
	mux.HandleFunc("GET /guilds/{guild_id}/messages/search", s.Route(s.searchMessages))
	s.registerPins(mux)
}

// Shared are the message routes of guild channels whose patterns the DM routes share (see
// guildaccess.Base.Shared).
func (s *Service) Shared() guildaccess.Routes {
	return guildaccess.Routes{
		"POST /channels/{channel_id}/messages":                s.sendMessage,
		"GET /channels/{channel_id}/messages":                 s.listMessages,
		"PATCH /channels/{channel_id}/messages/{message_id}":  s.editMessage,
		"DELETE /channels/{channel_id}/messages/{message_id}": s.deleteMessage,
	}
}

var mentionRE = regexp.MustCompile(`<@!?([0-9]{1,20})>`)

// mentions returns the members of the guild the content mentions, once each.
func (s *Service) mentions(ctx context.Context, guildID uint64, content string) ([]uint64, error) {
	var out []uint64
	seen := map[uint64]bool{}
	for _, m := range mentionRE.FindAllStringSubmatch(content, 100) {
		id, ok := wire.ParseSnowflake(m[1])
		if !ok || seen[uint64(id)] {
			continue
		}
		seen[uint64(id)] = true
		_, err := s.Store.GetGuildMember(ctx, guildID, uint64(id))
		if errors.Is(err, store.ErrNotFound) {
			continue
		}
		if err != nil {
			return nil, err
		}
		out = append(out, uint64(id))
	}
	return out, nil
}

// messageObject is the wire form of a guild message, with its author's member and its
// mentions' members, its message_reference and message_snapshots, and for a reply the message
// it answers (referenced_message, null once deleted; without its own referenced_message).
func (s *Service) messageObject(ctx context.Context, m *store.GuildMessage) (wire.GuildMessage, error) {
	out, err := s.messageFields(ctx, m)
	if err != nil || m.Reference == nil || m.Reference.Type != store.ReferenceReply {
		return out, err
	}
	out.ReferencedMessage.Present = true
	ref, err := s.Store.GetGuildMessage(ctx, m.Reference.ChannelID, m.Reference.MessageID)
	if errors.Is(err, store.ErrNotFound) {
		return out, nil
	}
	if err != nil {
		return out, err
	}
	r, err := s.messageFields(ctx, ref)
	out.ReferencedMessage.Message = &r
	return out, err
}

// messageFields is messageObject without referenced_message.
func (s *Service) messageFields(ctx context.Context, m *store.GuildMessage) (wire.GuildMessage, error) {
	out := wire.GuildMessage{ID: wire.Snowflake(m.ID), ChannelID: wire.Snowflake(m.ChannelID), GuildID: wire.Snowflake(m.GuildID),
		Content: m.Content, Timestamp: guildaccess.Timestamp(m.CreatedAt), Mentions: []wire.Mention{}, MentionRoles: []string{},
		Attachments: []wire.Attachment{}, Embeds: []struct{}{}, Components: []struct{}{}}
	if !m.EditedAt.IsZero() {
		e := guildaccess.Timestamp(m.EditedAt)
		out.EditedTimestamp = &e
	}
	pinnedAt, err := s.Store.GuildMessagePinnedAt(ctx, m.ChannelID, m.ID)
	if err != nil {
		return out, err
	}
	out.Pinned = !pinnedAt.IsZero()
	author, err := s.Store.GetUser(ctx, m.AuthorID)
	switch {
	case errors.Is(err, store.ErrNotFound):
		out.Author = wire.User{ID: wire.Snowflake(m.AuthorID), Discriminator: "0"}
	case err != nil:
		return out, err
	default:
		out.Author = guildaccess.UserObject(author)
	}
	if mem, err := guildaccess.LoadMember(ctx, s.Store, m.GuildID, m.AuthorID, false); err == nil {
		out.Member = &mem
	} else if !isAPIError(err) {
		return out, err
	}
	for _, id := range m.Mentions {
		u, err := s.Store.GetUser(ctx, id)
		if errors.Is(err, store.ErrNotFound) {
			continue
		}
		if err != nil {
			return out, err
		}
		men := wire.Mention{User: guildaccess.UserObject(u)}
		if mem, err := guildaccess.LoadMember(ctx, s.Store, m.GuildID, id, false); err == nil {
			men.Member = &mem
		} else if !isAPIError(err) {
			return out, err
		}
		out.Mentions = append(out.Mentions, men)
	}
	if out.Attachments, err = s.attachmentObjects(ctx, m); err != nil {
		return out, err
	}
	return out, s.referenceFields(ctx, m, &out)
}

func isAPIError(err error) bool {
	var e *wire.APIError
	return errors.As(err, &e)
}

// checkContent checks a message body's content: 1 to 2000 characters (50006 when empty).
func checkContent(content *string, required bool) error {
	switch {
	case content == nil && !required:
		return nil
	case content == nil || *content == "":
		return &wire.APIError{Status: http.StatusBadRequest, Code: 50006, Message: "Cannot send an empty message"}
	case utf8.RuneCountInString(*content) > wire.MaxMessageContentChars || !utf8.ValidString(*content):
		return wire.InvalidAt("content", "BASE_TYPE_MAX_LENGTH", "Must be 2000 or fewer in length.")
	}
	return nil
}

// sendMessage serves POST /channels/{channel_id}/messages for a guild text channel: needs
// VIEW_CHANNEL and SEND_MESSAGES; the guild's bots that can view the channel get MESSAGE_CREATE
// with guild_id, channel_type, mentions and member. A message_reference makes it a reply or a
// forward (see reference).
func (s *Service) sendMessage(q *guildaccess.Caller) (any, error) {
	req, content, ref, err := readSend(q.Request)
	if err != nil {
		return nil, err
	}
	ch, _, perms, err := s.GuildChannel(q)
	if err != nil {
		return nil, err
	}
	if !guildaccess.TextChannel(ch.Type) {
		return nil, &wire.APIError{Status: http.StatusBadRequest, Code: 50008, Message: "Cannot send messages in a non-text channel"}
	}
	if perms&guildaccess.PermSendMessages == 0 || (len(req.files) > 0 && perms&PermAttachFiles == 0) {
		return nil, wire.MissingPermissions()
	}
	claim, slow, err := s.slowmodeCheck(q, ch, perms)
	if slow != nil || err != nil {
		return slow, err
	}
	atts, err := s.attachmentsOf(req, nil)
	if err != nil {
		return nil, err
	}
	m := &store.GuildMessage{ID: s.IDs.Next(), ChannelID: ch.ID, GuildID: ch.GuildID, AuthorID: q.UserID, Content: content,
		CreatedAt: s.Clock.Now()}
	if err := s.reference(q, ch, perms, ref, m); err != nil {
		return nil, err
	}
	if m.Mentions, err = s.mentions(q.Ctx, ch.GuildID, m.Content); err != nil {
		return nil, err
	}
	if slow, err := s.slowmodeClaim(q, claim); slow != nil || err != nil {
		return slow, err
	}
	if err := s.saveMessage(q.Ctx, m, true, atts); err != nil {
		return nil, err
	}
	s.MemberSeen(q, ch.GuildID)
	out, err := s.messageObject(q.Ctx, m)
	if err != nil {
		return nil, err
	}
	out.Nonce = req.body.Nonce
	s.messageEvent(q.Ctx, ch, gwire.EventMessageCreate, out)
	out, _ = contentFor(out, q.UserID, q.ReadsContent)
	return out, nil
}

// messageEvent sends a message event to the guild's bots with GUILD_MESSAGES that can view the
// channel, with the channel's type. A message's content reaches a bot session only with the
// MESSAGE_CONTENT intent, or when the bot is its author or mentioned in it (mayReadContent); the
// others get it without content, embeds, attachments and components (contentFor).
func (s *Service) messageEvent(ctx context.Context, ch *store.GuildChannel, event string, m any) {
	if s.Bots == nil {
		return
	}
	to := s.ChannelViewers(ctx, ch)
	msg, ok := m.(wire.GuildMessage)
	if !ok {
		s.Bots.DispatchBots(to, gwire.IntentGuildMessages, event, m)
		return
	}
	t := ch.Type
	msg.ChannelType = &t
	var always []uint64
	for _, id := range to {
		// A session with MESSAGE_CONTENT reads everything; what one without it reads depends on
		// the bot (its own messages, its mentions).
		redacted, changed := contentFor(msg, id, false)
		if !changed {
			always = append(always, id)
			continue
		}
		s.Bots.DispatchBotsSplit([]uint64{id}, gwire.IntentGuildMessages, gwire.IntentMessageContent, event, msg, redacted)
	}
	s.Bots.DispatchBots(always, gwire.IntentGuildMessages, event, msg)
}

// readable loads the path's channel for reading its messages: VIEW_CHANNEL and
// READ_MESSAGE_HISTORY.
func (s *Service) readable(q *guildaccess.Caller) (*store.GuildChannel, error) {
	ch, _, perms, err := s.GuildChannel(q)
	if err != nil {
		return nil, err
	}
	if perms&guildaccess.PermReadMessageHistory == 0 {
		return nil, wire.MissingPermissions()
	}
	return ch, nil
}

// listMessages serves GET /channels/{channel_id}/messages?limit=&before=|after=|around=:
// newest first, limit 1 to 100 (default 50). A bot whose application may not read message
// content gets them as a gateway session without MESSAGE_CONTENT does (contentFor).
func (s *Service) listMessages(q *guildaccess.Caller) (any, error) {
	limit, err := httpx.QueryLimit(q.URL.Query(), DefaultMessages, MaxMessagesList)
	if err != nil {
		return nil, err
	}
	var page [3]uint64
	given := 0
	for i, name := range []string{"before", "after", "around"} {
		if page[i], err = httpx.QueryID(q.URL.Query(), name); err != nil {
			return nil, err
		}
		if q.URL.Query().Has(name) {
			given++
		}
	}
	if given > 1 {
		return nil, wire.InvalidAt("around", "PAGINATION_EXCLUSIVE", "Give at most one of before, after and around.")
	}
	ch, err := s.readable(q)
	if err != nil {
		return nil, err
	}
	var list []store.GuildMessage
	if around := page[2]; around != 0 {
		older, err := s.Store.ListGuildMessages(q.Ctx, ch.ID, store.MessagePage{Before: around + 1, Limit: (limit + 1) / 2})
		if err != nil {
			return nil, err
		}
		newer, err := s.Store.ListGuildMessages(q.Ctx, ch.ID, store.MessagePage{After: around, Limit: limit / 2})
		if err != nil {
			return nil, err
		}
		list = append(newer, older...)
	} else if list, err = s.Store.ListGuildMessages(q.Ctx, ch.ID, store.MessagePage{Before: page[0], After: page[1], Limit: limit}); err != nil {
		return nil, err
	}
	return readerMessages(s, q, list, func(m *store.GuildMessage) *store.GuildMessage { return m })
}

// message loads the path's message of ch: 404 10008 when it is not there.
func (s *Service) message(q *guildaccess.Caller, ch *store.GuildChannel) (*store.GuildMessage, error) {
	id, err := httpx.PathID(q.Request, "message_id")
	if err != nil {
		return nil, err
	}
	m, err := s.Store.GetGuildMessage(q.Ctx, ch.ID, id)
	if errors.Is(err, store.ErrNotFound) {
		return nil, wire.UnknownMessage()
	}
	return m, err
}

// channelMessage loads the path's channel (GuildChannel: the caller may view it), the caller's
// permissions there and the path's message (message).
func (s *Service) channelMessage(q *guildaccess.Caller) (*store.GuildChannel, uint64, *store.GuildMessage, error) {
	ch, _, perms, err := s.GuildChannel(q)
	if err != nil {
		return nil, 0, nil, err
	}
	m, err := s.message(q, ch)
	return ch, perms, m, err
}

// getMessage serves GET /channels/{channel_id}/messages/{message_id}, with content as
// listMessages.
func (s *Service) getMessage(q *guildaccess.Caller) (any, error) {
	ch, err := s.readable(q)
	if err != nil {
		return nil, err
	}
	m, err := s.message(q, ch)
	if err != nil {
		return nil, err
	}
	return s.readerMessage(q, m)
}

// readerMessage is the wire form of m as the caller may read it (contentFor).
func (s *Service) readerMessage(q *guildaccess.Caller, m *store.GuildMessage) (wire.GuildMessage, error) {
	out, err := s.messageObject(q.Ctx, m)
	if err != nil {
		return out, err
	}
	out, _ = contentFor(out, q.UserID, q.ReadsContent)
	return out, nil
}

// readerMessages is readerMessage of the message of each item of list.
func readerMessages[T any](s *Service, q *guildaccess.Caller, list []T, message func(*T) *store.GuildMessage) ([]wire.GuildMessage, error) {
	out := make([]wire.GuildMessage, 0, len(list))
	for i := range list {
		m, err := s.readerMessage(q, message(&list[i]))
		if err != nil {
			return nil, err
		}
		out = append(out, m)
	}
	return out, nil
}

// editMessage serves PATCH /channels/{channel_id}/messages/{message_id}: the author replaces
// the content (50005 for another's message) and, with an attachments array, the attachments the
// message keeps, with their description and is_spoiler (rule ATT-1); new files may come with a
// multipart body (ATTACH_FILES). MESSAGE_UPDATE follows.
func (s *Service) editMessage(q *guildaccess.Caller) (any, error) {
	req, err := readMessageRequest(q.Request)
	if err != nil {
		return nil, err
	}
	content := req.body.Content
	if content != nil && *content != "" { // "" may leave a message of attachments only: checked below
		if err := checkContent(content, false); err != nil {
			return nil, err
		}
	}
	ch, perms, m, err := s.channelMessage(q)
	if err != nil {
		return nil, err
	}
	if m.AuthorID != q.UserID {
		return nil, &wire.APIError{Status: http.StatusForbidden, Code: 50005, Message: "Cannot edit a message authored by another user"}
	}
	if content != nil && m.Snapshot != nil {
		return nil, forwardContentError()
	}
	if len(req.files) > 0 && perms&PermAttachFiles == 0 {
		return nil, wire.MissingPermissions()
	}
	var atts []store.GuildAttachment // nil: unchanged
	if req.listed || len(req.files) > 0 {
		if m.Snapshot != nil && len(req.files) > 0 {
			return nil, wire.InvalidAt("attachments", "MESSAGE_FORWARD_ATTACHMENTS_NOT_ALLOWED",
				"A forwarded message cannot have attachments.")
		}
		existing, err := s.Store.ListGuildAttachments(q.Ctx, ch.ID, m.ID)
		if err != nil {
			return nil, err
		}
		if atts, err = s.attachmentsOf(req, existing); err != nil {
			return nil, err
		}
		if atts == nil {
			atts = []store.GuildAttachment{} // all removed
		}
	}
	if content != nil {
		m.Content = *content
		if m.Mentions, err = s.mentions(q.Ctx, ch.GuildID, m.Content); err != nil {
			return nil, err
		}
	}
	if m.Content == "" && m.Snapshot == nil {
		n := len(atts)
		if atts == nil {
			kept, err := s.Store.ListGuildAttachments(q.Ctx, ch.ID, m.ID)
			if err != nil {
				return nil, err
			}
			n = len(kept)
		}
		if n == 0 {
			return nil, &wire.APIError{Status: http.StatusBadRequest, Code: 50006, Message: "Cannot send an empty message"}
		}
	}
	m.EditedAt = s.Clock.Now()
	if err := s.saveMessage(q.Ctx, m, false, atts); err != nil {
		return nil, err
	}
	out, err := s.messageObject(q.Ctx, m)
	if err != nil {
		return nil, err
	}
	s.messageEvent(q.Ctx, ch, gwire.EventMessageUpdate, out)
	out, _ = contentFor(out, q.UserID, q.ReadsContent)
	return out, nil
}

// deleteMessage serves DELETE /channels/{channel_id}/messages/{message_id}: the author, or a
// member with MANAGE_MESSAGES; 204, and MESSAGE_DELETE.
func (s *Service) deleteMessage(q *guildaccess.Caller) (any, error) {
	ch, perms, m, err := s.channelMessage(q)
	if err != nil {
		return nil, err
	}
	if m.AuthorID != q.UserID && perms&guildaccess.PermManageMessages == 0 {
		return nil, wire.MissingPermissions()
	}
	if err := s.Store.DeleteGuildMessage(q.Ctx, ch.ID, m.ID); err != nil {
		return nil, err
	}
	s.messageEvent(q.Ctx, ch, gwire.EventMessageDelete, wire.GuildMessageDelete{ID: wire.Snowflake(m.ID),
		ChannelID: wire.Snowflake(ch.ID), GuildID: wire.Snowflake(ch.GuildID)})
	return nil, nil
}
