package guildaccess

import (
	"context"
	"errors"
	"log/slog"
	"net/http"

	"sdkpp/internal/clock"
	"sdkpp/server/apps"
	"sdkpp/server/httpx"
	"sdkpp/server/scopes"
	"sdkpp/server/snowflake"
	"sdkpp/server/store"
	"sdkpp/server/token"
	"sdkpp/wire"
	gwire "sdkpp/wire/gateway"
)

// MaxMembersList is the most members one page of GET /guilds/{id}/members?limit= lists (the
// platform's limit), and the page size the service reads members in.
const MaxMembersList = 1000

// Base is what every guild resource service shares: the store, the clock, ids, the logger and the
// bots' event delivery. One Base serves all of them; set its fields before serving.
type Base struct {
	Store  store.Store
	Clock  clock.Clock
	IDs    *snowflake.Generator
	Logger *slog.Logger
	// Bots delivers guild events to bot sessions (set before serving); nil sends none.
	Bots BotNotifier
}

// Caller is who a guild route serves: a bot (Bot token) or a user (Bearer token with guilds).
type Caller struct {
	*http.Request
	Ctx    context.Context
	UserID uint64
	AppID  uint64
	Bot    bool
	// ReadsContent tells whether the caller may read every message's content: a user always,
	// a bot when its application may read message content (AppReadsMessageContent).
	ReadsContent bool
}

// Handler serves a guild route to an authenticated caller: its value is answered as JSON, nil
// as 204 (see Base.Route).
type Handler func(q *Caller) (any, error)

// Routes are handlers by route pattern (Base.Shared) or by action (Base.Actions).
type Routes map[string]Handler

// Merge returns the union of sets of routes; a key given twice panics, as a pattern registered
// twice does.
func Merge(sets ...Routes) Routes {
	out := Routes{}
	for _, set := range sets {
		for k, h := range set {
			if _, dup := out[k]; dup {
				panic("guildaccess: route " + k + " given twice")
			}
			out[k] = h
		}
	}
	return out
}

// Who authenticates a bot or a user with the guilds scope.
func (s *Base) Who(r *http.Request) (*Caller, error) {
	auth := token.Auth{Store: s.Store, Clock: s.Clock}
	if httpx.Credential(r, "Bot") != "" {
		app, err := auth.Bot(r)
		if err != nil {
			return nil, err
		}
		return &Caller{Request: r, Ctx: r.Context(), UserID: app.BotUserID, AppID: app.ID, Bot: true,
			ReadsContent: AppReadsMessageContent(app.Flags)}, nil
	}
	t, err := auth.Bearer(r)
	if err != nil {
		return nil, err
	}
	if !scopes.Has(t.Scopes, scopes.Guilds) {
		return nil, wire.MissingAccess()
	}
	return &Caller{Request: r, Ctx: r.Context(), UserID: t.UserID, AppID: t.AppID, ReadsContent: true}, nil
}

// Route authenticates (Who) and answers with h's value as JSON, nil as 204.
func (s *Base) Route(h Handler) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		out, err := func() (any, error) {
			q, err := s.Who(r)
			if err != nil {
				return nil, err
			}
			return h(q)
		}()
		httpx.Answer(w, r, s.Logger, out, err)
	}
}

// Shared wraps the router the DM routes register on (package dms): a request to a route of
// guild whose pattern the DM routes share goes to the guild channel handler when its channel is
// a guild channel, or it comes with a bot token and its channel is no DM channel; else to the DM
// handler.
func (s *Base) Shared(dm httpx.Router, guild Routes) httpx.Router {
	return sharedRouter{Router: dm, s: s, guild: guild}
}

type sharedRouter struct {
	httpx.Router
	s     *Base
	guild Routes
}

func (c sharedRouter) HandleFunc(pattern string, h func(http.ResponseWriter, *http.Request)) {
	guild, ok := c.guild[pattern]
	if !ok {
		c.Router.HandleFunc(pattern, h)
		return
	}
	g := c.s.Route(guild)
	c.Router.HandleFunc(pattern, func(w http.ResponseWriter, r *http.Request) {
		if c.s.IsGuildChannel(r) || (httpx.Credential(r, "Bot") != "" && !c.s.isDMChannel(r)) {
			g(w, r)
			return
		}
		h(w, r)
	})
}

// IsGuildChannel tells whether the request's channel_id names a guild channel.
func (s *Base) IsGuildChannel(r *http.Request) bool { return pathNames(r, s.Store.GetGuildChannel) }

// isDMChannel tells whether the request's channel_id names a DM channel.
func (s *Base) isDMChannel(r *http.Request) bool { return pathNames(r, s.Store.GetDMChannel) }

// pathNames tells whether get finds the request's channel_id.
func pathNames[T any](r *http.Request, get func(context.Context, uint64) (T, error)) bool {
	id, ok := wire.ParseSnowflake(r.PathValue("channel_id"))
	if !ok {
		return false
	}
	_, err := get(r.Context(), uint64(id))
	return err == nil
}

// MemberGuild loads the path's guild and the caller's access: 404 10004 for an unknown guild,
// 403 50001 for a non-member.
func (s *Base) MemberGuild(q *Caller) (*Access, error) {
	id, err := httpx.PathID(q.Request, "guild_id")
	if err != nil {
		return nil, err
	}
	return s.MemberAccess(q, id)
}

// MemberAccess loads guild id and the caller's access: 404 10004 for an unknown guild, 403 50001
// for a non-member.
func (s *Base) MemberAccess(q *Caller, id uint64) (*Access, error) {
	g, err := s.Store.GetGuild(q.Ctx, id)
	if errors.Is(err, store.ErrNotFound) {
		return nil, wire.UnknownGuild()
	}
	if err != nil {
		return nil, err
	}
	a, err := LoadAccess(q.Ctx, s.Store, g, q.UserID)
	if err != nil {
		return nil, err
	}
	if !a.IsMember() {
		return nil, wire.MissingAccess()
	}
	return a, nil
}

// GuildChannel loads the path's channel of a guild the caller is in, with the caller's
// permissions there: 404 10003 for an unknown channel (or a DM channel), 403 50001 for one the
// caller cannot view.
func (s *Base) GuildChannel(q *Caller) (*store.GuildChannel, *Access, uint64, error) {
	id, err := httpx.PathID(q.Request, "channel_id")
	if err != nil {
		return nil, nil, 0, err
	}
	return s.ChannelAccess(q, id)
}

// ChannelAccess is guildChannel for channel id.
func (s *Base) ChannelAccess(q *Caller, id uint64) (*store.GuildChannel, *Access, uint64, error) {
	ch, err := s.Store.GetGuildChannel(q.Ctx, id)
	if errors.Is(err, store.ErrNotFound) {
		return nil, nil, 0, wire.UnknownChannel()
	}
	if err != nil {
		return nil, nil, 0, err
	}
	g, err := s.Store.GetGuild(q.Ctx, ch.GuildID)
	if err != nil {
		return nil, nil, 0, err
	}
	a, err := LoadAccess(q.Ctx, s.Store, g, q.UserID)
	if err != nil {
		return nil, nil, 0, err
	}
	perms, err := a.Channel(q.Ctx, s.Store, ch)
	if err != nil {
		return nil, nil, 0, err
	}
	if perms&PermViewChannel == 0 {
		return nil, nil, 0, wire.MissingAccess()
	}
	return ch, a, perms, nil
}

// Actions serves POST /guilds/{guild_id}/{action} with the handler of the path's action (404
// for another action). These routes are served through one pattern: a pattern
// /guilds/{guild_id}/emojis would conflict with the removed route POST /guilds/templates/{code},
// which stays more specific than /guilds/{guild_id}/{action}.
func (s *Base) Actions(actions Routes) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		h, ok := actions[r.PathValue("action")]
		if !ok {
			httpx.Answer(w, r, s.Logger, nil, &wire.APIError{Status: http.StatusNotFound, Code: 0, Message: "404: Not Found"})
			return
		}
		s.Route(h)(w, r)
	}
}

// AppReadsMessageContent tells whether an application with these flags may read the content of
// every message over REST: it has the MESSAGE_CONTENT privileged intent, approved
// (GATEWAY_MESSAGE_CONTENT) or enabled below the review threshold
// (GATEWAY_MESSAGE_CONTENT_LIMITED).
func AppReadsMessageContent(flags uint64) bool {
	return apps.AllowsIntents(flags, gwire.IntentMessageContent)
}
