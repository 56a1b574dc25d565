package messages

import (
	"context"
	"errors"
	"net/http"
	"slices"
	"unicode/utf8"

	"sdkpp/server/counters"
	"sdkpp/server/guildaccess"
	"sdkpp/server/httpx"
	"sdkpp/server/signedurl"
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
	// URLs signs the URLs of attachments with an expiry, and RegisterAttachments serves only
	// those it signed and that have not expired.
	URLs *signedurl.Signer

	slow slowmode // when members last sent in each channel (slowmode.go)
}

// Register adds the message routes of guild channels to mux (paths relative to the API base):
// GET /channels/{channel_id}/messages/{message_id}, the pins (registerPins) and Search Guild
// Messages. The other message routes share their patterns with the DM routes: see Shared.
func (s *Service) Register(mux httpx.Router) {
	mux.HandleFunc("GET /channels/{channel_id}/messages/{message_id}", s.Route(s.getMessage))
	mux.HandleFunc("GET /guilds/{guild_id}/messages/search", s.Route(s.searchMessages))
}

// Shared are the message routes of guild channels whose patterns the DM routes share (see
// guildaccess.Base.Shared).
func (s *Service) Shared() guildaccess.Routes {
	return guildaccess.Merge(guildaccess.Routes{
		"POST /channels/{channel_id}/messages":                s.sendMessage,
		"GET /channels/{channel_id}/messages":                 s.listMessages,
		"PATCH /channels/{channel_id}/messages/{message_id}":  s.editMessage,
		"DELETE /channels/{channel_id}/messages/{message_id}": s.deleteMessage,
	}, s.pinRoutes())
}

// mentions returns the members of the guild the content mentions, once each.
func (s *Service) mentions(ctx context.Context, guildID uint64, content string) ([]uint64, error) {
	var out []uint64
	for _, id := range wire.MentionedUserIDs(content) {
		_, err := s.Store.GetGuildMember(ctx, guildID, id)
		if errors.Is(err, store.ErrNotFound) {
			continue
		}
		if err != nil {
			return nil, err
		}
		out = append(out, id)
	}
	return out, nil
}

// pings returns the users m mentions and pings under allowed (nil: all): the guild's members
// its content mentions that allowed lets ping and, for a reply that allowed lets mention the
// replied-to author (it does unless allowed_mentions is given without replied_user), that
// author when still a member and not m's own.
func (s *Service) pings(ctx context.Context, m *store.GuildMessage, allowed *wire.AllowedMentions) ([]uint64, error) {
	all, err := s.mentions(ctx, m.GuildID, m.Content)
	if err != nil {
		return nil, err
	}
	out := slices.DeleteFunc(all, func(id uint64) bool { return !allowed.Pings(id) })
	r := m.Reference
	if r == nil || r.Type != store.ReferenceReply || !allowed.PingsRepliedUser() {
		return out, nil
	}
	ref, err := s.Store.GetGuildMessage(ctx, r.ChannelID, r.MessageID)
	if errors.Is(err, store.ErrNotFound) {
		return out, nil
	}
	if err != nil {
		return nil, err
	}
	if ref.AuthorID == m.AuthorID || slices.Contains(out, ref.AuthorID) {
		return out, nil
	}
	switch _, err := s.Store.GetGuildMember(ctx, m.GuildID, ref.AuthorID); {
	case err == nil:
		return append(out, ref.AuthorID), nil
	case errors.Is(err, store.ErrNotFound):
		return out, nil
	default:
		return nil, err
	}
}

// messageObject is the wire form of a guild message, with its author's member and its
// mentions' members, its message_reference and message_snapshots, and for a reply the message
// it answers (referenced_message, null once deleted; without its own referenced_message).
func (s *Service) messageObject(ctx context.Context, m *store.GuildMessage) (wire.GuildMessage, error) {
	out, err := s.messageObjects(ctx, []*store.GuildMessage{m})
	if err != nil {
		return wire.GuildMessage{}, err
	}
	return out[0], nil
}

// messageFields is messageObject without referenced_message.
func (s *Service) messageFields(ctx context.Context, m *store.GuildMessage) (wire.GuildMessage, error) {
	p, err := s.loadPage(ctx, []*store.GuildMessage{m})
	if err != nil {
		return wire.GuildMessage{}, err
	}
	return s.fields(p, m)
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
	defer req.Close()
	allowed, err := wire.ParseAllowedMentions(req.body.AllowedMentions)
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
	if m.Mentions, err = s.pings(q.Ctx, m, allowed); err != nil {
		return nil, err
	}
	if slow, err := s.slowmodeClaim(q, claim); slow != nil || err != nil {
		return slow, err
	}
	if err := s.saveMessage(q.Ctx, m, true, atts); err != nil {
		return nil, err
	}
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

// readerMessages is readerMessage of the message of each item of list, read as one page
// (loadPage); the list encodes itself (wire.GuildMessages).
func readerMessages[T any](s *Service, q *guildaccess.Caller, list []T, message func(*T) *store.GuildMessage) (wire.GuildMessages, error) {
	msgs := make([]*store.GuildMessage, len(list))
	for i := range list {
		msgs[i] = message(&list[i])
	}
	out, err := s.messageObjects(q.Ctx, msgs)
	if err != nil {
		return nil, err
	}
	for i := range out {
		out[i], _ = contentFor(out[i], q.UserID, q.ReadsContent)
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
	defer req.Close()
	content := req.body.Content
	allowed, err := wire.ParseAllowedMentions(req.body.AllowedMentions)
	if err != nil {
		return nil, err
	}
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
		if m.Mentions, err = s.pings(q.Ctx, m, allowed); err != nil {
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
