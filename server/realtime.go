package server

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"strings"

	"sdkpp/server/gateway"
	"sdkpp/server/guilds"
	"sdkpp/server/guildvoice"
	"sdkpp/server/httpx"
	"sdkpp/server/presence"
	"sdkpp/server/relationships"
	"sdkpp/server/store"
	"sdkpp/server/token"
	"sdkpp/server/users"
	"sdkpp/server/voice"
	"sdkpp/wire"
)

// GatewayPath is where the WebSocket gateway is served, below the root.
const GatewayPath = "/gateway"

// gatewayTokens adapts the token store to the gateway: bearer access tokens of users.
type gatewayTokens struct{ s *Server }

func (g gatewayTokens) ResolveBearer(ctx context.Context, tok string) (gateway.Identity, bool, error) {
	t, err := token.Lookup(ctx, g.s.store, g.s.cfg.Clock.Now(), tok, store.AccessToken)
	if errors.Is(err, token.ErrInvalid) {
		return gateway.Identity{}, false, nil
	}
	if err != nil {
		return gateway.Identity{}, false, err
	}
	return gateway.Identity{UserID: t.UserID, AppID: t.AppID, Scopes: t.Scopes, Grant: t.GrantID}, true, nil
}

// gatewayUsers gives READY the user object /users/@me would give the same token.
type gatewayUsers struct{ s *Server }

func (g gatewayUsers) ReadyUser(ctx context.Context, who gateway.Identity) (wire.User, error) {
	if who.Bot {
		return g.s.botReadyUser(ctx, who)
	}
	u, err := g.s.store.GetUser(ctx, who.UserID)
	if err != nil {
		return wire.User{}, err
	}
	app, err := g.s.store.GetApplication(ctx, who.AppID)
	if err != nil {
		return wire.User{}, err
	}
	obj := users.Object(u, users.PremiumVisible(app, who.Scopes))
	if obj.ApplicationProfiles, err = users.Profiles(ctx, g.s.store, u, who.AppID); err != nil {
		return wire.User{}, err
	}
	return obj, nil
}

// newHub makes the gateway of the service.
func (s *Server) newHub() *gateway.Hub {
	s.presence = &presence.Service{Store: s.store, Clock: s.cfg.Clock, IDs: s.ids, Logger: s.log.With("component", "presence")}
	s.social = &relationships.Service{Store: s.store, Clock: s.cfg.Clock, Logger: s.log.With("component", "relationships"),
		Order: s.orderLock}
	cfg := gateway.Config{
		Counter: s.counter, // bots' session starts and member requests, across nodes when shared
		// A bot session has none of a player's social state: no presence, relationships or lobbies.
		OnPresence: func(who gateway.Identity, d json.RawMessage) {
			if !who.Bot {
				s.presence.OnPresence(who.UserID, who.AppID, d)
			}
		},
		OnSession: func(who gateway.Identity) {
			if !who.Bot {
				s.presence.OnSession(who.UserID, who.AppID)
			}
		},
		ReadyExtra:        s.readySocial,
		ChannelInfo:       s.channelInfo,
		AppFlags:          s.appFlags,
		AllowIntents:      s.allowIntents,
		Tokens:            gatewayTokens{s},
		Users:             gatewayUsers{s},
		Clock:             s.cfg.Clock,
		HeartbeatInterval: s.cfg.GatewayHeartbeat,
		Logger:            s.log.With("component", "gateway"),
		OnConnection:      s.memberConnection,
		Requests:          s.gatewayRequests(),
		Accept:            s.gatewayAccept(),
		Accepted:          s.lobbies.DeliverAccepted,
		AnswerInline:      true, // on PostgreSQL too: the group's statement leaves in DeliverAccepted
		Voice:             voiceRouter{calls: s.voiceCalls, guilds: s.guildVoice},
		Guilds:            s.guilds.guilds.BotGuilds,
		Members:           s.guilds.guilds.RequestMembers,
	}
	if s.cfg.IdentifyWindow >= 0 {
		cfg.IdentifyWindow = s.cfg.IdentifyWindow
		cfg.MaxConcurrency = func(ctx context.Context, appID uint64) (int, error) {
			return guilds.MaxConcurrency(ctx, s.store, appID)
		}
	}
	if s.bus != nil {
		cfg.Bus, cfg.Node, cfg.Outbox = s.bus, s.cfg.NodeID, s.store
		if s.cfg.WrapBus != nil {
			cfg.Bus = s.cfg.WrapBus(s.bus)
		}
		cfg.Replay = func(ctx context.Context, first, last uint64, handle func(uint64, []byte)) error {
			return s.bus.Read(ctx, first, last, handle)
		}
		cfg.OnShared = s.shared
		cfg.OnNodeStarted = s.reshare
		cfg.OnBusDelivered = s.metrics.BusDelivered // nil metrics record nothing
	}
	hub := gateway.New(cfg)
	if s.bus != nil { // every node knows every user's presence, pending invites and guild voice states
		s.presence.Share = func(userID uint64, p *presence.Shared) {
			hub.Share(sharedPresence, sharedUser{User: userID, Presence: p})
		}
		s.presence.ShareInvite = func(inv presence.SharedInvite) { hub.Share(sharedInvite, inv) }
		s.presence.CatchUp = s.catchUp
		s.guildVoice.Share = func(c guildvoice.Change) { hub.Share(sharedGuildVoice, c) }
	}
	s.voice.Hub = hub
	if s.voiceCluster != nil {
		s.voiceCluster.Share = func(op voice.Op) { hub.Share(voice.SharedKind, op) }
		s.voiceCluster.Connected = hub.SessionConnected
	}
	return hub
}

// gatewayRequests is the handler of API requests over the gateway (gwire.OpRequest): the API
// handler that routes sets; nil when the configuration turns them off.
func (s *Server) gatewayRequests() http.Handler {
	if s.cfg.NoGatewayRequests {
		return nil
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { s.gatewayAPI.ServeHTTP(w, r) })
}

// gatewayURL answers GET /gateway with the WebSocket URL, as the platform does.
func (s *Server) gatewayURL(w http.ResponseWriter, r *http.Request) {
	httpx.JSON(w, http.StatusOK, map[string]string{"url": s.gatewayWS()})
}

// gatewayWS is the gateway's WebSocket URL.
func (s *Server) gatewayWS() string {
	u := s.url
	switch {
	case strings.HasPrefix(u, "https://"):
		u = "wss://" + strings.TrimPrefix(u, "https://")
	case strings.HasPrefix(u, "http://"):
		u = "ws://" + strings.TrimPrefix(u, "http://")
	}
	return u + GatewayPath
}

// Hub is the service's WebSocket gateway, through which other parts dispatch events.
func (s *Server) Hub() *gateway.Hub { return s.hub }

// memberConnection tells the user's lobby co-members of that game that the member's connected
// flag changed (LOBBY_MEMBER_UPDATE): the user's first gateway session of the game started or
// the last one ended.
func (s *Server) memberConnection(who gateway.Identity, _ bool) {
	if who.Bot {
		return
	}
	if s.guilds != nil { // a session's start and end count as activity in the user's guilds (prune)
		s.guilds.base.UserSeen(context.Background(), who.UserID)
		// A member who joined through a temporary invite leaves when they disconnect without a role.
		if !s.hub.Online(who.UserID) {
			if err := s.guilds.guilds.RemoveTemporary(context.Background(), who.UserID); err != nil {
				s.log.Warn("temporary memberships not ended", "user_id", who.UserID, "err", err)
			}
		}
	}
	if err := s.lobbies.MemberConnection(context.Background(), who.AppID, who.UserID); err != nil {
		s.log.Warn("lobby member connection update failed", "user_id", who.UserID, "err", err)
	}
	// The lobbies' idle time counts from the last member's disconnection.
	if err := s.lobbies.KeepAlive(context.Background(), who.AppID, who.UserID); err != nil {
		s.log.Warn("lobby keep-alive failed", "user_id", who.UserID, "err", err)
	}
}

// wireSocial connects relationships and presence to the gateway once the hub exists.
func (s *Server) wireSocial() {
	s.presence.Hub = s.hub
	s.social.Notifier = s.hub
	s.social.OnChange = func(a, b uint64) {
		if err := s.presence.SendPair(context.Background(), a, b); err != nil {
			s.log.Warn("presence after a relationship change failed", "err", err)
		}
	}
}

// readySocial gives READY the user's relationships, game relationships (of the session's game)
// with the other users' game profiles in that game, and friends' presences, so that a fresh
// session starts complete.
func (s *Server) readySocial(ctx context.Context, who gateway.Identity) (map[string]any, error) {
	if who.Bot {
		return nil, nil
	}
	rows, err := s.store.ListRelationships(ctx, who.UserID, who.AppID)
	if err != nil {
		return nil, err
	}
	platform, game := []wire.Relationship{}, []wire.Relationship{}
	for i := range rows {
		obj, err := s.social.Object(ctx, s.store, &rows[i], who.AppID)
		if err != nil {
			return nil, err
		}
		if rows[i].AppID == 0 {
			platform = append(platform, obj)
		} else {
			game = append(game, obj)
		}
	}
	pres, err := s.presence.ReadyPresences(ctx, who.UserID)
	if err != nil {
		return nil, err
	}
	return map[string]any{"relationships": platform, "game_relationships": game, "presences": pres}, nil
}

// The kinds of state the nodes of a cluster share through the gateway's bus (besides voice
// calls' ops, voice.SharedKind).
const (
	sharedPresence   = "presence"   // a user's presence: sharedUser
	sharedInvite     = "invite"     // an activity invite sent or accepted: presence.SharedInvite
	sharedGuildVoice = "guildvoice" // a user's voice state in a guild: guildvoice.Change
)

// sharedUser is a user's presence as the nodes share it.
type sharedUser struct {
	User     uint64           `json:"user"`
	Presence *presence.Shared `json:"presence"`
}

// reshare shares again what this node shared of its players: another node started, and read only
// what the bus still held.
func (s *Server) reshare() {
	here := func(userID uint64) bool { return s.hub.Sessions(userID) > 0 }
	s.presence.Reshare(here)
	s.guildVoice.Reshare(here)
}

// shared takes what another node shared through the gateway's bus.
func (s *Server) shared(kind string, data json.RawMessage) {
	var err error
	switch kind {
	case voice.SharedKind:
		s.voiceCluster.Receive(data)
	case sharedPresence:
		var u sharedUser
		if err = json.Unmarshal(data, &u); err == nil {
			s.presence.Apply(u.User, u.Presence)
		}
	case sharedInvite:
		var inv presence.SharedInvite
		if err = json.Unmarshal(data, &inv); err == nil {
			s.presence.ApplyInvite(inv)
		}
	case sharedGuildVoice:
		var c guildvoice.Change
		if err = json.Unmarshal(data, &c); err == nil {
			s.guildVoice.Apply(c)
		}
	}
	if err != nil {
		s.log.Warn("shared state cannot be read", "kind", kind, "err", err)
	}
}
