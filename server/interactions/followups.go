package interactions

import (
	"context"
	"crypto/subtle"
	"encoding/json"
	"net/http"
	"time"

	"sdkpp/server/guildaccess"
	"sdkpp/server/httpx"
	"sdkpp/wire"
	gwire "sdkpp/wire/gateway"
)

// sendableFlags are the message flags a response or follow-up may set: EPHEMERAL and
// SUPPRESS_NOTIFICATIONS.
const sendableFlags = wire.MessageFlagEphemeral | wire.MessageFlagSuppressNotifications

// responseMessage is the message of a response or follow-up, as read from its body.
type responseMessage struct {
	content *string
	flags   int
}

// readResponseMessage reads a message body (content, flags) at path: content of 1 to 2000
// characters, required when needContent (50006 when absent or empty); flags among sendableFlags.
// Other fields of the platform's (embeds, components, allowed_mentions, ...) are ignored.
func readResponseMessage(path string, raw json.RawMessage, needContent bool) (responseMessage, error) {
	var body struct {
		Content *string `json:"content"`
		Flags   *int    `json:"flags"`
	}
	if len(raw) > 0 && string(raw) != "null" {
		if err := json.Unmarshal(raw, &body); err != nil {
			return responseMessage{}, wire.InvalidAt(path+"content", "MODEL_TYPE_CONVERT", "Not a message object.")
		}
	}
	out := responseMessage{content: body.Content}
	if body.Flags != nil {
		if *body.Flags&^sendableFlags != 0 {
			return out, wire.InvalidAt(path+"flags", "BASE_TYPE_CHOICES", "Only EPHEMERAL and SUPPRESS_NOTIFICATIONS may be set.")
		}
		out.flags = *body.Flags
	}
	if body.Content == nil || *body.Content == "" {
		if needContent {
			return out, &wire.APIError{Status: http.StatusBadRequest, Code: 50006, Message: "Cannot send an empty message"}
		}
		return out, nil
	}
	return out, length(path+"content", *body.Content, 1, wire.MaxMessageContentChars)
}

// postResponse posts a message of interaction p: its original response when original, else a
// follow-up. An ephemeral one is kept in p and goes to the invoking user's sessions only.
func (s *Service) postResponse(ctx context.Context, p *pending, msg responseMessage, original bool) (wire.GuildMessage, error) {
	meta := p.meta
	out, err := s.Messages.PostInteractionMessage(ctx, p.channel, p.bot, p.app, *msg.content, msg.flags, &meta)
	if err != nil {
		return out, err
	}
	s.mu.Lock()
	if original {
		p.original = uint64(out.ID)
	} else {
		if p.followups == nil {
			p.followups = map[uint64]bool{}
		}
		p.followups[uint64(out.ID)] = true
	}
	ephemeral := out.Flags&wire.MessageFlagEphemeral != 0
	if ephemeral {
		if p.ephemeral == nil {
			p.ephemeral = map[uint64]wire.GuildMessage{}
		}
		p.ephemeral[uint64(out.ID)] = out
	}
	s.mu.Unlock()
	if ephemeral && s.Notifier != nil {
		s.Notifier.Dispatch(p.user, gwire.EventMessageCreate, withChannelType(out, p))
	}
	return out, nil
}

// withChannelType is m as a dispatch carries it.
func withChannelType(m wire.GuildMessage, p *pending) wire.GuildMessage {
	t := p.channel.Type
	m.ChannelType = &t
	return m
}

// RegisterWebhooks adds the routes of interaction webhooks, whose token (the interaction's) is
// the credential, for 15 minutes:
//
//	POST   /webhooks/{application_id}/{token}                          a follow-up message
//	GET    /webhooks/{application_id}/{token}/messages/{message_id}    @original or a follow-up
//	PATCH  /webhooks/{application_id}/{token}/messages/{message_id}    {content}
//	DELETE /webhooks/{application_id}/{token}/messages/{message_id}    204
//
// An unknown application, token or expired interaction is 404 10015; so is an interaction not
// yet answered. A message id that is not the interaction's is 404 10008.
func (s *Service) RegisterWebhooks(mux httpx.Router) {
	mux.HandleFunc("POST /webhooks/{application_id}/{token}", s.webhook(s.followup))
	mux.HandleFunc("GET /webhooks/{application_id}/{token}/messages/{message_id}", s.webhook(s.getResponse))
	mux.HandleFunc("PATCH /webhooks/{application_id}/{token}/messages/{message_id}", s.webhook(s.editResponse))
	mux.HandleFunc("DELETE /webhooks/{application_id}/{token}/messages/{message_id}", s.webhook(s.deleteResponse))
}

func unknownWebhook() error {
	return &wire.APIError{Status: http.StatusNotFound, Code: wire.CodeUnknownWebhook, Message: "Unknown Webhook"}
}

// webhook finds the interaction of the path's application and token, answered and within its
// 15 minutes, and runs h.
func (s *Service) webhook(h func(r *http.Request, p *pending) (any, error)) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		out, err := func() (any, error) {
			app, err := httpx.PathID(r, "application_id")
			if err != nil {
				return nil, err
			}
			p := s.byToken(r.PathValue("token"), s.Clock.Now())
			if p == nil || p.app != app {
				return nil, unknownWebhook()
			}
			return h(r, p)
		}()
		httpx.Answer(w, r, s.Logger, out, err)
	}
}

// byToken is the answered interaction of token within its lifetime, nil when none.
func (s *Service) byToken(token string, now time.Time) *pending {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.sweepLocked(now)
	for _, p := range s.pending {
		if subtle.ConstantTimeCompare([]byte(p.token), []byte(token)) == 1 {
			if !p.answered || p.kind == wire.InteractionAutocomplete {
				return nil
			}
			return p
		}
	}
	return nil
}

// followup serves POST /webhooks/{application_id}/{token}: a follow-up message, 200 with it (as
// with wait=true, which interaction follow-ups always are). After a deferred response, the first
// one is the original response, with the flags the deferral gave.
func (s *Service) followup(r *http.Request, p *pending) (any, error) {
	var raw json.RawMessage
	if err := httpx.DecodeJSON(r, &raw); err != nil {
		return nil, err
	}
	msg, err := readResponseMessage("", raw, true)
	if err != nil {
		return nil, err
	}
	s.mu.Lock()
	original := p.deferred && p.original == 0
	if original {
		p.deferred = false
		msg.flags |= p.deferFlags & wire.MessageFlagEphemeral
	}
	s.mu.Unlock()
	return s.postResponse(r.Context(), p, msg, original)
}

// target is the message id of the path for p: @original's id (0 while there is none), or a
// follow-up's; 404 10008 for another.
func (s *Service) target(r *http.Request, p *pending) (uint64, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if r.PathValue("message_id") == "@original" {
		return p.original, nil
	}
	id, err := httpx.PathID(r, "message_id")
	if err != nil {
		return 0, err
	}
	if id != p.original && !p.followups[id] {
		return 0, wire.UnknownMessage()
	}
	return id, nil
}

// ephemeralMessage returns p's ephemeral message id, if it is one.
func (s *Service) ephemeralMessage(p *pending, id uint64) (wire.GuildMessage, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	m, ok := p.ephemeral[id]
	return m, ok
}

// getResponse serves GET .../messages/{message_id}: the original response or a follow-up.
func (s *Service) getResponse(r *http.Request, p *pending) (any, error) {
	id, err := s.target(r, p)
	if err != nil {
		return nil, err
	}
	if id == 0 {
		return nil, wire.UnknownMessage()
	}
	if m, ok := s.ephemeralMessage(p, id); ok {
		return m, nil
	}
	return s.Messages.InteractionMessage(r.Context(), p.channel, id)
}

// editResponse serves PATCH .../messages/{message_id}: a new content for the original response
// or a follow-up; after a deferred response, PATCH @original brings its message. 200 with the
// message.
func (s *Service) editResponse(r *http.Request, p *pending) (any, error) {
	var raw json.RawMessage
	if err := httpx.DecodeJSON(r, &raw); err != nil {
		return nil, err
	}
	id, err := s.target(r, p)
	if err != nil {
		return nil, err
	}
	msg, err := readResponseMessage("", raw, id == 0)
	if err != nil {
		return nil, err
	}
	if id == 0 {
		s.mu.Lock()
		deferred := p.deferred
		p.deferred = false
		s.mu.Unlock()
		if !deferred {
			return nil, wire.UnknownMessage()
		}
		msg.flags = p.deferFlags
		return s.postResponse(r.Context(), p, msg, true)
	}
	m, ephemeral := s.ephemeralMessage(p, id)
	if msg.content == nil { // nothing this service keeps changes
		if ephemeral {
			return m, nil
		}
		return s.Messages.InteractionMessage(r.Context(), p.channel, id)
	}
	if !ephemeral {
		return s.Messages.EditInteractionMessage(r.Context(), p.channel, id, *msg.content)
	}
	edited := guildaccess.Timestamp(s.Clock.Now())
	m.Content, m.EditedTimestamp = *msg.content, &edited
	s.mu.Lock()
	p.ephemeral[id] = m
	s.mu.Unlock()
	if s.Notifier != nil {
		s.Notifier.Dispatch(p.user, gwire.EventMessageUpdate, withChannelType(m, p))
	}
	return m, nil
}

// deleteResponse serves DELETE .../messages/{message_id}: 204.
func (s *Service) deleteResponse(r *http.Request, p *pending) (any, error) {
	id, err := s.target(r, p)
	if err != nil {
		return nil, err
	}
	if id == 0 {
		return nil, wire.UnknownMessage()
	}
	_, ephemeral := s.ephemeralMessage(p, id)
	if !ephemeral {
		if err := s.Messages.DeleteInteractionMessage(r.Context(), p.channel, id); err != nil {
			return nil, err
		}
	}
	s.mu.Lock()
	delete(p.ephemeral, id)
	delete(p.followups, id)
	if p.original == id {
		p.original = 0
	}
	s.mu.Unlock()
	if ephemeral && s.Notifier != nil {
		s.Notifier.Dispatch(p.user, gwire.EventMessageDelete, wire.GuildMessageDelete{ID: wire.Snowflake(id),
			ChannelID: wire.Snowflake(p.channel.ID), GuildID: wire.Snowflake(p.channel.GuildID)})
	}
	return nil, nil
}
