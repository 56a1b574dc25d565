package interactions

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"time"

	"sdkpp/server/guildaccess"
	"sdkpp/server/httpx"
	"sdkpp/server/secret"
	"sdkpp/server/store"
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
	allowed *wire.AllowedMentions // nil: every mention in content pings
}

// readResponseMessage reads a message body (content, flags, allowed_mentions) at path: content
// of 1 to 2000 characters, required when needContent (50006 when absent or empty); flags among
// sendableFlags. Other fields of the platform's (embeds, components, ...) are ignored.
func readResponseMessage(path string, raw json.RawMessage, needContent bool) (responseMessage, error) {
	var body struct {
		Content         *string         `json:"content"`
		Flags           *int            `json:"flags"`
		AllowedMentions json.RawMessage `json:"allowed_mentions"`
	}
	if len(raw) > 0 && string(raw) != "null" {
		if err := json.Unmarshal(raw, &body); err != nil {
			return responseMessage{}, wire.InvalidAt(path+"content", "MODEL_TYPE_CONVERT", "Not a message object.")
		}
	}
	out := responseMessage{content: body.Content}
	var err error
	if out.allowed, err = wire.ParseAllowedMentions(body.AllowedMentions); err != nil {
		return out, err
	}
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
// follow-up, and records it as p's in the store. An ephemeral one is kept there whole and goes
// to the invoking user's sessions only.
func (s *Service) postResponse(ctx context.Context, p *pending, msg responseMessage, original bool) (wire.GuildMessage, error) {
	meta := p.meta
	out, err := s.Messages.PostInteractionMessage(ctx, p.channel, p.BotUserID, p.AppID, *msg.content, msg.flags, msg.allowed, &meta)
	if err != nil {
		return out, err
	}
	im := &store.InteractionMessage{InteractionID: p.ID, MessageID: uint64(out.ID)}
	ephemeral := out.Flags&wire.MessageFlagEphemeral != 0
	if ephemeral {
		if im.Ephemeral, err = encodeMessage(out); err != nil {
			return out, err
		}
	}
	err = s.Store.WithTx(ctx, func(tx store.Store) error {
		if err := tx.PutInteractionMessage(ctx, im); err != nil {
			return err
		}
		if original {
			return tx.SetInteractionOriginal(ctx, p.ID, im.MessageID)
		}
		return nil
	})
	if err != nil {
		return out, fmt.Errorf("interactions: record message of %d: %w", p.ID, err)
	}
	if original {
		p.OriginalID = im.MessageID
	}
	if ephemeral && s.Notifier != nil {
		s.Notifier.Dispatch(p.UserID, gwire.EventMessageCreate, withChannelType(out, p))
	}
	return out, nil
}

// encodeMessage is an ephemeral message as the store keeps it.
func encodeMessage(m wire.GuildMessage) (string, error) {
	b, err := json.Marshal(m)
	if err != nil {
		return "", fmt.Errorf("interactions: encode ephemeral message: %w", err)
	}
	return string(b), nil
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

// webhook finds the interaction of the path's application and token (by the token's hash, in
// the store, so on any node), answered and within its 15 minutes, and runs h.
func (s *Service) webhook(h func(r *http.Request, p *pending) (any, error)) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		out, err := func() (any, error) {
			app, err := httpx.PathID(r, "application_id")
			if err != nil {
				return nil, err
			}
			p, err := s.byToken(r.Context(), r.PathValue("token"), s.Clock.Now())
			if err != nil {
				return nil, err
			}
			if p == nil || p.AppID != app {
				return nil, unknownWebhook()
			}
			return h(r, p)
		}()
		httpx.Answer(w, r, s.Logger, out, err)
	}
}

// byToken is the answered interaction of token within its lifetime, nil when none (or when its
// channel is deleted).
func (s *Service) byToken(ctx context.Context, token string, now time.Time) (*pending, error) {
	if err := s.sweep(ctx, now); err != nil {
		return nil, err
	}
	p, err := s.Store.InteractionByToken(ctx, secret.Hash(token))
	switch {
	case errors.Is(err, store.ErrNotFound):
		return nil, nil
	case err != nil:
		return nil, err
	case !p.Answered || p.Kind == wire.InteractionAutocomplete || now.Sub(p.CreatedAt) >= TokenLifetime:
		return nil, nil
	}
	lp, err := s.loaded(ctx, p)
	if errors.Is(err, store.ErrNotFound) {
		return nil, nil
	}
	return lp, err
}

// takeDeferral ends p's deferral for the message that completes it: false when p is not deferred
// or another request (maybe on another node) took it first.
func (s *Service) takeDeferral(ctx context.Context, p *pending) (bool, error) {
	if !p.Deferred || p.OriginalID != 0 {
		return false, nil
	}
	switch err := s.Store.TakeDeferral(ctx, p.ID); {
	case errors.Is(err, store.ErrConflict), errors.Is(err, store.ErrNotFound):
		return false, nil
	case err != nil:
		return false, err
	}
	p.Deferred = false
	return true, nil
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
	original, err := s.takeDeferral(r.Context(), p)
	if err != nil {
		return nil, err
	}
	if original {
		msg.flags |= p.DeferFlags & wire.MessageFlagEphemeral
	}
	return s.postResponse(r.Context(), p, msg, original)
}

// target is the message of the path for p: @original (id 0 while there is none), or a
// follow-up; 404 10008 for another.
func (s *Service) target(r *http.Request, p *pending) (uint64, *store.InteractionMessage, error) {
	id := p.OriginalID
	if r.PathValue("message_id") != "@original" {
		var err error
		if id, err = httpx.PathID(r, "message_id"); err != nil {
			return 0, nil, err
		}
		if id == 0 {
			return 0, nil, wire.UnknownMessage()
		}
	} else if id == 0 {
		return 0, nil, nil
	}
	im, err := s.Store.GetInteractionMessage(r.Context(), p.ID, id)
	switch {
	case errors.Is(err, store.ErrNotFound):
		return 0, nil, wire.UnknownMessage()
	case err != nil:
		return 0, nil, err
	}
	return id, im, nil
}

// ephemeralMessage is im's message when it is an ephemeral one.
func ephemeralMessage(im *store.InteractionMessage) (wire.GuildMessage, bool, error) {
	var m wire.GuildMessage
	if im.Ephemeral == "" {
		return m, false, nil
	}
	if err := json.Unmarshal([]byte(im.Ephemeral), &m); err != nil {
		return m, false, fmt.Errorf("interactions: stored ephemeral message %d: %w", im.MessageID, err)
	}
	return m, true, nil
}

// getResponse serves GET .../messages/{message_id}: the original response or a follow-up.
func (s *Service) getResponse(r *http.Request, p *pending) (any, error) {
	id, im, err := s.target(r, p)
	if err != nil {
		return nil, err
	}
	if id == 0 {
		return nil, wire.UnknownMessage()
	}
	if m, ok, err := ephemeralMessage(im); ok || err != nil {
		return m, err
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
	id, im, err := s.target(r, p)
	if err != nil {
		return nil, err
	}
	msg, err := readResponseMessage("", raw, id == 0)
	if err != nil {
		return nil, err
	}
	if id == 0 {
		deferred, err := s.takeDeferral(r.Context(), p)
		if err != nil {
			return nil, err
		}
		if !deferred {
			return nil, wire.UnknownMessage()
		}
		msg.flags = p.DeferFlags
		return s.postResponse(r.Context(), p, msg, true)
	}
	m, ephemeral, err := ephemeralMessage(im)
	if err != nil {
		return nil, err
	}
	if msg.content == nil { // nothing this service keeps changes
		if ephemeral {
			return m, nil
		}
		return s.Messages.InteractionMessage(r.Context(), p.channel, id)
	}
	if !ephemeral {
		return s.Messages.EditInteractionMessage(r.Context(), p.channel, id, *msg.content, msg.allowed)
	}
	edited := guildaccess.Timestamp(s.Clock.Now())
	m.Content, m.EditedTimestamp = *msg.content, &edited
	enc, err := encodeMessage(m)
	if err != nil {
		return nil, err
	}
	switch err := s.Store.SetInteractionEphemeral(r.Context(), p.ID, id, enc); {
	case errors.Is(err, store.ErrNotFound): // deleted meanwhile
		return nil, wire.UnknownMessage()
	case err != nil:
		return nil, err
	}
	if s.Notifier != nil {
		s.Notifier.Dispatch(p.UserID, gwire.EventMessageUpdate, withChannelType(m, p))
	}
	return m, nil
}

// deleteResponse serves DELETE .../messages/{message_id}: 204.
func (s *Service) deleteResponse(r *http.Request, p *pending) (any, error) {
	ctx := r.Context()
	id, im, err := s.target(r, p)
	if err != nil {
		return nil, err
	}
	if id == 0 {
		return nil, wire.UnknownMessage()
	}
	ephemeral := im.Ephemeral != ""
	if !ephemeral {
		if err := s.Messages.DeleteInteractionMessage(ctx, p.channel, id); err != nil {
			return nil, err
		}
	}
	err = s.Store.WithTx(ctx, func(tx store.Store) error {
		if err := tx.DeleteInteractionMessage(ctx, p.ID, id); err != nil {
			return err
		}
		if p.OriginalID == id {
			return tx.SetInteractionOriginal(ctx, p.ID, 0)
		}
		return nil
	})
	switch {
	case errors.Is(err, store.ErrNotFound): // deleted meanwhile, maybe on another node
		return nil, wire.UnknownMessage()
	case err != nil:
		return nil, err
	}
	if ephemeral && s.Notifier != nil {
		s.Notifier.Dispatch(p.UserID, gwire.EventMessageDelete, wire.GuildMessageDelete{ID: wire.Snowflake(id),
			ChannelID: wire.Snowflake(p.channel.ID), GuildID: wire.Snowflake(p.channel.GuildID)})
	}
	return nil, nil
}
