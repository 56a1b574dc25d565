// Package dms serves game direct messages: a channel per pair of players, messages sent, edited
// and deleted through the SDK, their history, the backend's moderation metadata, and the
// realtime and webhook events they cause.
//
// # Routes (relative to the API base)
//
//	POST   /users/@me/channels {recipient_id}                       open (or find) the DM channel
//	GET    /users/@me/channels                                      the player's conversations
//	GET    /channels/{channel_id}                                   one of them (dm_channels.read)
//	POST   /channels/{channel_id}/messages {content, metadata, flags, message_reference}
//	GET    /channels/{channel_id}/messages?limit=                   newest first, 1..200, 72 hours
//	PATCH  /channels/{channel_id}/messages/{message_id} {content}   the author edits
//	DELETE /channels/{channel_id}/messages/{message_id}             the author deletes
//	PUT    /partner-sdk/dms/{user1}/{user2}/messages/{message_id}/moderation-metadata  (Bot)
//
// A player may message another player of the same game (a user who authorized the
// application), never themself. Bodies follow the lobby message rules (lobbies.ParseMessageBody).
//
// # Events
//
// MESSAGE_CREATE, MESSAGE_UPDATE (the wire.Message) and MESSAGE_DELETE (wire.MessageDelete) go
// to every gateway session of both players, of any application: a message's application_id
// tells a sibling application's messages apart (rule MSG-1). GAME_DIRECT_MESSAGE_CREATE, _UPDATE
// and _DELETE go to the sending application's webhook in the change's transaction (rule WH-2);
// setting moderation metadata sends no webhook, as for lobby messages.
package dms

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"net/http"
	"strconv"
	"time"

	gwire "sdkpp/wire/gateway"

	"sdkpp/internal/clock"
	"sdkpp/server/httpx"
	"sdkpp/server/internal/outbox"
	"sdkpp/server/lobbies"
	"sdkpp/server/order"
	"sdkpp/server/scopes"
	"sdkpp/server/snowflake"
	"sdkpp/server/store"
	"sdkpp/server/token"
	"sdkpp/server/users"
	"sdkpp/server/webhook"
	"sdkpp/wire"
)

// History limits: the same as lobby messages (rule LOB-3).
const (
	HistoryWindow      = lobbies.HistoryWindow
	DefaultMessageList = lobbies.DefaultMessageList
	MaxMessageList     = lobbies.MaxMessageList
)

// Notifier delivers events to the gateway sessions of the given users (DispatchMany: every
// session; DispatchBots: the bot sessions whose intents include intent). It is called after the
// commit and must not block. A Notifier that is also an outbox.Stager (the gateway) is given
// the events in the change's transaction instead (Stage).
type Notifier interface {
	DispatchMany(userIDs []uint64, event string, data any)
	DispatchBots(userIDs []uint64, intent uint64, event string, data any)
}

// Service serves the direct-message routes. Set its fields before Register.
type Service struct {
	Store    store.Store
	Clock    clock.Clock
	IDs      *snowflake.Generator // channel, message and webhook delivery ids
	Logger   *slog.Logger
	Kick     func() // wakes the webhook dispatcher after a commit that queued a webhook; may be nil
	Notifier Notifier

	// order holds a channel's key (channelKey) from a transaction's start until its events are
	// handed on, so that both players get the channel's events in commit order (the SDK drops a
	// message not newer than the last one it delivered in the channel); other channels' changes
	// go on meanwhile.
	order order.Local
	// Order, when set, is the cluster's order lock (package order), held as order is, so that
	// the nodes of a cluster send a channel's events in commit order with increasing message
	// ids. Nil for a node alone.
	Order order.Lock
}

// Register adds the routes to mux.
func (s *Service) Register(mux httpx.Router) {
	mux.HandleFunc("POST /users/@me/channels", s.route(scopes.DMMessagesWrite, s.open))
	mux.HandleFunc("GET /users/@me/channels", s.route(scopes.DMChannelsRead, s.list))
	mux.HandleFunc("GET /channels/{channel_id}", s.route(scopes.DMChannelsRead, s.get))
	mux.HandleFunc("POST /channels/{channel_id}/messages", s.route(scopes.DMMessagesWrite, s.send))
	mux.HandleFunc("GET /channels/{channel_id}/messages", s.route(scopes.DMChannelsMessagesRead, s.history))
	mux.HandleFunc("PATCH /channels/{channel_id}/messages/{message_id}", s.route(scopes.DMMessagesWrite, s.edit))
	mux.HandleFunc("DELETE /channels/{channel_id}/messages/{message_id}", s.route(scopes.DMMessagesWrite, s.delete))
	mux.HandleFunc("PUT /partner-sdk/dms/{user1}/{user2}/messages/{message_id}/moderation-metadata", s.moderate)
	s.registerPins(mux)
}

// request is a player's or a bot's authenticated request.
type request struct {
	*http.Request
	ctx           context.Context
	appID, userID uint64
	bot           bool // a bot token: userID is the application's bot user
}

// route authenticates a Bearer token carrying scope (401; 403 50001 without the scope) or a
// bot token (the application's bot user, which needs no scope), runs h and answers: h's value
// as JSON, nil as 204, an error in the platform's shape.
func (s *Service) route(scope string, h func(q *request) (any, error)) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		s.answer(w, r, func() (any, error) {
			auth := token.Auth{Store: s.Store, Clock: s.Clock}
			if httpx.Credential(r, "Bot") != "" {
				app, err := auth.Bot(r)
				if err != nil {
					return nil, err
				}
				return h(&request{Request: r, ctx: r.Context(), appID: app.ID, userID: app.BotUserID, bot: true})
			}
			t, err := auth.Bearer(r)
			if err != nil {
				return nil, err
			}
			if !scopes.Has(t.Scopes, scope) {
				return nil, wire.MissingAccess()
			}
			return h(&request{Request: r, ctx: r.Context(), appID: t.AppID, userID: t.UserID})
		})
	}
}

func (s *Service) answer(w http.ResponseWriter, r *http.Request, h func() (any, error)) {
	out, err := h()
	httpx.Answer(w, r, s.Logger, out, err)
}

// event is a realtime event waiting for the commit: to every session of users, and to the bot
// sessions of bots that have the DIRECT_MESSAGES intent.
type event struct {
	users, bots []uint64
	name        string
	data        any
}

// channelKey is the order lock (package order) and outbox key of the changes of DM channel id.
func channelKey(id uint64) string { return "dm:" + strconv.FormatUint(id, 10) }

// tx runs fn in one transaction under the order lock of channel's key (channelKey) and, once
// committed, delivers the events it collected and wakes the webhook dispatcher. With a Notifier
// that is an outbox.Stager (the gateway), the events are staged in the transaction and
// published from it: on a cluster, a node that dies after the commit leaves them for the next
// holder of the order lock to publish.
func (s *Service) tx(ctx context.Context, channel uint64, fn func(st store.Store, emit func(event)) error) error {
	key := channelKey(channel)
	defer s.order.Lock(key)()
	held, err := order.Hold(ctx, s.Order, key, s.IDs, s.Store)
	if err != nil {
		return err
	}
	defer held.Release() // once the events are sent
	stager, staging := s.Notifier.(outbox.Stager)
	var (
		events  []event
		publish func()
	)
	// On a cluster the commit runs on the lock's session: the next holder sees it.
	err = held.Store.WithTx(ctx, func(st store.Store) error {
		events = events[:0]
		if err := fn(st, func(e event) { events = append(events, e) }); err != nil || !staging {
			return err
		}
		var err error
		publish, err = stager.Stage(ctx, st, key, dispatches(events))
		return err
	})
	if err != nil {
		return err
	}
	if s.Kick != nil {
		s.Kick()
	}
	switch {
	case publish != nil:
		publish()
	case s.Notifier != nil:
		for _, d := range dispatches(events) {
			if d.Intent != 0 {
				s.Notifier.DispatchBots(d.Users, d.Intent, d.Event, d.Data)
			} else {
				s.Notifier.DispatchMany(d.Users, d.Event, d.Data)
			}
		}
	}
	return nil
}

// pathTx is tx under the order lock of the path's channel (whether q's caller is in it, fn
// checks).
func (s *Service) pathTx(q *request, fn func(st store.Store, emit func(event)) error) error {
	id, err := httpx.PathID(q.Request, "channel_id")
	if err != nil {
		return err
	}
	return s.tx(q.ctx, id, fn)
}

// dispatches are the gateway's dispatches of events, in their order: each to the sessions of
// its users, and to the bot sessions of its bots that have the DIRECT_MESSAGES intent.
func dispatches(events []event) []outbox.Dispatch {
	ds := make([]outbox.Dispatch, 0, 2*len(events))
	for _, e := range events {
		if len(e.users) > 0 {
			ds = append(ds, outbox.Dispatch{Users: e.users, Event: e.name, Data: e.data})
		}
		if len(e.bots) > 0 {
			ds = append(ds, outbox.Dispatch{Users: e.bots, Intent: gwire.IntentDirectMessages, Event: e.name, Data: e.data})
		}
	}
	return ds
}

// userObject returns the user object of id; a deleted user is a bare id.
func userObject(ctx context.Context, st store.Store, id uint64) (wire.User, error) {
	u, err := st.GetUser(ctx, id)
	if errors.Is(err, store.ErrNotFound) {
		return wire.User{ID: wire.Snowflake(id), Discriminator: "0"}, nil
	}
	if err != nil {
		return wire.User{}, err
	}
	return users.Object(u, false), nil
}

// messageObject is the wire form of m; a reply carries message_reference and the message it
// answers (referenced_message, null once deleted; without its own referenced_message).
func messageObject(ctx context.Context, st store.Store, m *store.DirectMessage) (wire.Message, error) {
	out, err := messageFields(ctx, st, m)
	if err != nil || m.ReplyTo == 0 {
		return out, err
	}
	out.Type = wire.MessageTypeReply
	out.MessageReference = &wire.MessageReference{Type: wire.MessageReferenceDefault, MessageID: wire.Snowflake(m.ReplyTo),
		ChannelID: wire.Snowflake(m.ChannelID)}
	out.ReferencedMessage.Present = true
	ref, err := st.GetDirectMessage(ctx, m.ChannelID, m.ReplyTo)
	if errors.Is(err, store.ErrNotFound) {
		return out, nil
	}
	if err != nil {
		return out, err
	}
	r, err := messageFields(ctx, st, ref)
	out.ReferencedMessage.Message = &r
	return out, err
}

// messageFields is messageObject without the message a reply answers.
func messageFields(ctx context.Context, st store.Store, m *store.DirectMessage) (wire.Message, error) {
	author, err := userObject(ctx, st, m.AuthorID)
	if err != nil {
		return wire.Message{}, err
	}
	out := wire.Message{ID: wire.Snowflake(m.ID), Content: m.Content, ChannelID: wire.Snowflake(m.ChannelID), Author: author,
		RecipientID: wire.Snowflake(m.RecipientID), Metadata: m.Metadata, ModerationMetadata: m.ModerationMetadata,
		Flags: m.Flags, ApplicationID: wire.Snowflake(m.AppID), Timestamp: timestamp(m.CreatedAt),
		Mentions: []wire.User{}, MentionRoles: []string{}, Attachments: []struct{}{}, Embeds: []struct{}{},
		Components: []struct{}{}}
	pinnedAt, err := st.DirectMessagePinnedAt(ctx, m.ChannelID, m.ID)
	if err != nil {
		return wire.Message{}, err
	}
	out.Pinned = !pinnedAt.IsZero()
	if !m.EditedAt.IsZero() {
		e := timestamp(m.EditedAt)
		out.EditedTimestamp = &e
	}
	// The users of the channel the content mentions: the only users a DM can ping.
	for _, id := range wire.MentionedUserIDs(m.Content) {
		if id != m.AuthorID && id != m.RecipientID {
			continue
		}
		u := author
		if id != m.AuthorID {
			if u, err = userObject(ctx, st, id); err != nil {
				return wire.Message{}, err
			}
		}
		out.Mentions = append(out.Mentions, u)
	}
	return out, nil
}

// dispatched is m as the gateway's MESSAGE_CREATE and MESSAGE_UPDATE carry it, with
// channel_type.
func dispatched(m wire.Message) wire.Message {
	t := wire.ChannelTypeDM
	m.ChannelType = &t
	return m
}

func timestamp(t time.Time) string { return t.UTC().Format("2006-01-02T15:04:05.000000+00:00") }

// channelObject is the wire form of c as q's caller sees it: a player sees both users among the
// recipients, a bot (as on the platform) the other user only.
func channelObject(q *request, st store.Store, c *store.DMChannel) (wire.DMChannel, error) {
	ctx := q.ctx
	out := wire.DMChannel{ID: wire.Snowflake(c.ID), Type: wire.ChannelTypeDM}
	for _, id := range []uint64{c.UserLow, c.UserHigh} {
		if q.bot && id == q.userID {
			continue
		}
		u, err := userObject(ctx, st, id)
		if err != nil {
			return out, err
		}
		out.Recipients = append(out.Recipients, u)
	}
	if c.LastMessageID != 0 {
		last := wire.Snowflake(c.LastMessageID)
		out.LastMessageID = &last
	}
	return out, nil
}

// open serves POST /users/@me/channels: the DM channel with a player of the same game.
func (s *Service) open(q *request) (any, error) {
	var body map[string]json.RawMessage
	if err := httpx.DecodeJSON(q.Request, &body); err != nil {
		return nil, err // 415, 413, or 400 50109 for malformed JSON
	}
	raw, ok := body["recipient_id"]
	if !ok || string(raw) == "null" {
		return nil, wire.InvalidAt("recipient_id", "BASE_TYPE_REQUIRED", "This field is required")
	}
	var rid wire.Snowflake
	if err := json.Unmarshal(raw, &rid); err != nil || rid == 0 {
		return nil, wire.InvalidAt("recipient_id", "NUMBER_TYPE_COERCE", "The value is not snowflake.")
	}
	other := uint64(rid)
	if other == q.userID {
		return nil, wire.CannotMessageUser()
	}
	// Opening sends no event, and two opens of one pair find one channel (PutDMChannel): no order
	// lock.
	var out wire.DMChannel
	err := s.Store.WithTx(q.ctx, func(st store.Store) error {
		u, err := st.GetUser(q.ctx, other)
		if errors.Is(err, store.ErrNotFound) {
			return wire.UnknownUser()
		} else if err != nil {
			return err
		}
		if err := s.mayOpen(q, st, u); err != nil {
			return err
		}
		c, err := st.PutDMChannel(q.ctx, &store.DMChannel{ID: s.IDs.Next(), UserLow: q.userID, UserHigh: other, CreatedAt: s.Clock.Now()})
		if err != nil {
			return err
		}
		out, err = channelObject(q, st, c)
		return err
	})
	return out, err
}

// mayOpen tells whether q's caller may open a DM with u (403 50007 when not): a player with
// another player of the same game (a user who authorized the application), a bot with a user
// (not a bot) it shares a guild with.
func (s *Service) mayOpen(q *request, st store.Store, u *store.User) error {
	if !q.bot {
		if _, err := st.FindAuthorization(q.ctx, q.appID, u.ID); errors.Is(err, store.ErrNotFound) {
			return wire.CannotMessageUser()
		} else if err != nil {
			return err
		}
		return nil
	}
	if u.Bot {
		return wire.CannotMessageUser()
	}
	guilds, err := st.ListUserGuilds(q.ctx, q.userID)
	if err != nil {
		return err
	}
	for _, g := range guilds {
		switch _, err := st.GetGuildMember(q.ctx, g.ID, u.ID); {
		case err == nil:
			return nil
		case !errors.Is(err, store.ErrNotFound):
			return err
		}
	}
	return wire.CannotMessageUser()
}

// list serves GET /users/@me/channels: the player's conversations, newest message first.
func (s *Service) list(q *request) (any, error) {
	chans, err := s.Store.ListDMChannels(q.ctx, q.userID)
	if err != nil {
		return nil, err
	}
	out := make([]wire.DMChannel, 0, len(chans))
	for i := range chans {
		c, err := channelObject(q, s.Store, &chans[i])
		if err != nil {
			return nil, err
		}
		out = append(out, c)
	}
	return out, nil
}

// get serves GET /channels/{channel_id} for a DM channel the player is in (404 10003 for any
// other).
func (s *Service) get(q *request) (any, error) {
	c, err := q.channel(s.Store)
	if err != nil {
		return nil, err
	}
	return channelObject(q, s.Store, c)
}

// channel loads the channel of the path; one the player is not in is unknown (404 10003).
func (q *request) channel(st store.Store) (*store.DMChannel, error) {
	id, err := httpx.PathID(q.Request, "channel_id")
	if err != nil {
		return nil, err
	}
	c, err := st.GetDMChannel(q.ctx, id)
	if errors.Is(err, store.ErrNotFound) || (err == nil && c.UserLow != q.userID && c.UserHigh != q.userID) {
		return nil, wire.UnknownChannel()
	}
	return c, err
}

// message loads the message of the path in channel c.
func (q *request) message(st store.Store, c *store.DMChannel) (*store.DirectMessage, error) {
	id, err := httpx.PathID(q.Request, "message_id")
	if err != nil {
		return nil, err
	}
	m, err := st.GetDirectMessage(q.ctx, c.ID, id)
	if errors.Is(err, store.ErrNotFound) {
		return nil, wire.UnknownMessage()
	}
	return m, err
}

// channelMessage loads the channel (channel) and message (message) of the path.
func (q *request) channelMessage(st store.Store) (*store.DMChannel, *store.DirectMessage, error) {
	c, err := q.channel(st)
	if err != nil {
		return nil, nil, err
	}
	m, err := q.message(st, c)
	return c, m, err
}

// ownMessage loads the channel and message of the path: a message the caller sent from this
// application (403 50005 for another user's, 404 for one sent from another application).
func (q *request) ownMessage(st store.Store) (*store.DMChannel, *store.DirectMessage, error) {
	c, m, err := q.channelMessage(st)
	if err != nil {
		return nil, nil, err
	}
	if m.AuthorID != q.userID {
		return nil, nil, cannotEdit()
	}
	if m.AppID != q.appID { // the author's token of another game acts on none of this game's messages
		return nil, nil, wire.UnknownMessage()
	}
	return c, m, nil
}

// notify queues the event to both users (a bot's sessions get it by the DIRECT_MESSAGES intent;
// a message with channel_type) and, when hook is set and neither user is a bot, the webhook of
// the message's application.
func (s *Service) notify(ctx context.Context, st store.Store, emit func(event), m *store.DirectMessage, dispatch, hook string, data any) error {
	e := event{name: dispatch, data: data}
	if msg, ok := data.(wire.Message); ok {
		e.data = dispatched(msg)
	}
	e, err := audience(ctx, st, e, m.AuthorID, m.RecipientID)
	if err != nil {
		return err
	}
	emit(e)
	if hook == "" || len(e.bots) > 0 { // a bot's DMs are no game's direct messages
		return nil
	}
	app, err := st.GetApplication(ctx, m.AppID)
	if err != nil {
		return err
	}
	return webhook.Enqueue(ctx, st, s.IDs, s.Clock.Now(), app, hook, data)
}

// replyTo checks a DM's message_reference (nil: none) and returns the message of channel c it
// answers: 0 for none, or for a missing one with fail_if_not_exists false. A forward, another
// channel's message or a missing one is a 400 50035.
func replyTo(ctx context.Context, st store.Store, c *store.DMChannel, ref *wire.MessageReferenceRequest) (uint64, error) {
	switch {
	case ref == nil:
		return 0, nil
	case ref.Type != wire.MessageReferenceDefault:
		return 0, wire.InvalidAt("message_reference.type", "BASE_TYPE_CHOICES", "A direct message replies (type 0); it does not forward.")
	case ref.ChannelID != 0 && uint64(ref.ChannelID) != c.ID, ref.GuildID != 0:
		return 0, wire.InvalidAt("message_reference", "REPLIES_CANNOT_REFERENCE_OTHER_CHANNEL", "Cannot reply to a message in a different channel")
	}
	_, err := st.GetDirectMessage(ctx, c.ID, uint64(ref.MessageID))
	switch {
	case errors.Is(err, store.ErrNotFound) && !ref.FailIfNotExists:
		return 0, nil
	case errors.Is(err, store.ErrNotFound):
		return 0, wire.UnknownReferencedMessage()
	case err != nil:
		return 0, err
	}
	return uint64(ref.MessageID), nil
}

// audience sets e's users and bots: of ids, the bots (whose sessions get e by the
// DIRECT_MESSAGES intent) and the others.
func audience(ctx context.Context, st store.Store, e event, ids ...uint64) (event, error) {
	for _, id := range ids {
		u, err := st.GetUser(ctx, id)
		switch {
		case err == nil && u.Bot:
			e.bots = append(e.bots, id)
		case err == nil || errors.Is(err, store.ErrNotFound):
			e.users = append(e.users, id)
		default:
			return e, err
		}
	}
	return e, nil
}

// send serves POST /channels/{channel_id}/messages: a message_reference (type 0) makes a reply to
// a message of the channel.
func (s *Service) send(q *request) (any, error) {
	body, err := lobbies.ParseMessageBody(q.Request)
	if err != nil {
		return nil, err
	}
	ref, err := wire.ParseMessageReference(body.Reference)
	if err != nil {
		return nil, err
	}
	var out wire.Message
	err = s.pathTx(q, func(st store.Store, emit func(event)) error {
		c, err := q.channel(st)
		if err != nil {
			return err
		}
		m := &store.DirectMessage{ID: s.IDs.Next(), ChannelID: c.ID, AppID: q.appID, AuthorID: q.userID, RecipientID: c.Other(q.userID),
			Content: body.Content, Metadata: body.Metadata, Flags: body.Flags, CreatedAt: s.Clock.Now()}
		if m.ReplyTo, err = replyTo(q.ctx, st, c, ref); err != nil {
			return err
		}
		if err := st.InsertDirectMessage(q.ctx, m); err != nil {
			return err
		}
		if out, err = messageObject(q.ctx, st, m); err != nil {
			return err
		}
		return s.notify(q.ctx, st, emit, m, gwire.EventMessageCreate, wire.EventGameDirectMessageCreate, out)
	})
	return out, err
}

// history serves GET /channels/{channel_id}/messages?limit=: newest first, at most limit (1 to
// 200, default 50) messages of the last 72 hours.
func (s *Service) history(q *request) (any, error) {
	limit, err := httpx.QueryLimit(q.URL.Query(), DefaultMessageList, MaxMessageList)
	if err != nil {
		return nil, err
	}
	c, err := q.channel(s.Store)
	if err != nil {
		return nil, err
	}
	msgs, err := s.Store.ListDirectMessages(q.ctx, c.ID, s.Clock.Now().Add(-HistoryWindow), int(limit))
	if err != nil {
		return nil, err
	}
	out := make([]wire.Message, 0, len(msgs))
	for i := range msgs {
		m, err := messageObject(q.ctx, s.Store, &msgs[i])
		if err != nil {
			return nil, err
		}
		out = append(out, m)
	}
	return out, nil
}

// cannotEdit is the 403 of a change to another user's message.
func cannotEdit() *wire.APIError {
	return &wire.APIError{Status: http.StatusForbidden, Code: 50005, Message: "Cannot edit a message authored by another user"}
}

// edit serves PATCH /channels/{channel_id}/messages/{message_id}: the author replaces the
// content (and the metadata, when given).
func (s *Service) edit(q *request) (any, error) {
	body, err := lobbies.ParseMessageBody(q.Request)
	if err != nil {
		return nil, err
	}
	var out wire.Message
	err = s.pathTx(q, func(st store.Store, emit func(event)) error {
		_, m, err := q.ownMessage(st)
		if err != nil {
			return err
		}
		m.Content, m.EditedAt = body.Content, s.Clock.Now()
		if body.Metadata != nil {
			m.Metadata = body.Metadata
		}
		if err := st.UpdateDirectMessage(q.ctx, m); err != nil {
			return err
		}
		if out, err = messageObject(q.ctx, st, m); err != nil {
			return err
		}
		return s.notify(q.ctx, st, emit, m, gwire.EventMessageUpdate, wire.EventGameDirectMessageUpdate, out)
	})
	return out, err
}

// delete serves DELETE /channels/{channel_id}/messages/{message_id}: the author deletes; 204.
func (s *Service) delete(q *request) (any, error) {
	return nil, s.pathTx(q, func(st store.Store, emit func(event)) error {
		c, m, err := q.ownMessage(st)
		if err != nil {
			return err
		}
		if err := st.DeleteDirectMessage(q.ctx, c.ID, m.ID); err != nil {
			return err
		}
		d := wire.MessageDelete{ID: wire.Snowflake(m.ID), ChannelID: wire.Snowflake(c.ID), AuthorID: wire.Snowflake(m.AuthorID),
			RecipientID: wire.Snowflake(m.RecipientID), ApplicationID: wire.Snowflake(m.AppID)}
		return s.notify(q.ctx, st, emit, m, gwire.EventMessageDelete, wire.EventGameDirectMessageDelete, d)
	})
}

// moderate serves PUT /partner-sdk/dms/{user1}/{user2}/messages/{message_id}/moderation-metadata
// (rules MODR-1, MSG-3): the application's backend replaces the moderation metadata of a
// message its game sent between the two users; 204. Both players get MESSAGE_UPDATE; no webhook.
func (s *Service) moderate(w http.ResponseWriter, r *http.Request) {
	s.answer(w, r, func() (any, error) {
		app, err := token.Auth{Store: s.Store, Clock: s.Clock}.Bot(r)
		if err != nil {
			return nil, err
		}
		var ids [3]uint64
		for i, name := range []string{"user1", "user2", "message_id"} {
			if ids[i], err = httpx.PathID(r, name); err != nil {
				return nil, err
			}
		}
		meta, err := lobbies.ParseModerationBody(r)
		if err != nil {
			return nil, err
		}
		// A channel's users never change: it is found before its order lock is taken.
		c, err := s.Store.FindDMChannel(r.Context(), ids[0], ids[1])
		if errors.Is(err, store.ErrNotFound) {
			return nil, wire.UnknownChannel()
		} else if err != nil {
			return nil, err
		}
		return nil, s.tx(r.Context(), c.ID, func(st store.Store, emit func(event)) error {
			m, err := st.GetDirectMessage(r.Context(), c.ID, ids[2])
			if errors.Is(err, store.ErrNotFound) || (err == nil && m.AppID != app.ID) {
				return wire.UnknownMessage() // another game's messages are not this backend's to moderate
			} else if err != nil {
				return err
			}
			m.ModerationMetadata = meta
			if len(meta) == 0 {
				m.ModerationMetadata = nil
			}
			if err := st.UpdateDirectMessage(r.Context(), m); err != nil {
				return err
			}
			obj, err := messageObject(r.Context(), st, m)
			if err != nil {
				return err
			}
			return s.notify(r.Context(), st, emit, m, gwire.EventMessageUpdate, "", obj)
		})
	})
}
