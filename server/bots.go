package server

import (
	"context"
	"errors"
	"net/http"
	"strings"

	"sdkpp/server/gateway"
	"sdkpp/server/guilds"
	"sdkpp/server/httpx"
	"sdkpp/server/secret"
	"sdkpp/server/store"
	"sdkpp/server/token"
	"sdkpp/server/users"
	"sdkpp/wire"
	gwire "sdkpp/wire/gateway"
)

// guildsPerShard is how many guilds GET /gateway/bot plans per shard (the platform's 1000,
// rounded to a multiple of max_concurrency for large bot sharding).
const guildsPerShard = 1000

// ResolveBot resolves an application's bot token for the gateway: the bot user of the
// application.
func (g gatewayTokens) ResolveBot(ctx context.Context, tok string) (gateway.Identity, bool, error) {
	app, err := g.s.store.GetApplicationByBotToken(ctx, secret.Hash(tok))
	if errors.Is(err, store.ErrNotFound) {
		return gateway.Identity{}, false, nil
	}
	if err != nil {
		return gateway.Identity{}, false, err
	}
	return gateway.Identity{UserID: app.BotUserID, AppID: app.ID, Bot: true}, true, nil
}

// botReadyUser is READY's user for a bot session: its bot user.
func (s *Server) botReadyUser(ctx context.Context, who gateway.Identity) (wire.User, error) {
	u, err := s.store.GetUser(ctx, who.UserID)
	if err != nil {
		return wire.User{}, err
	}
	return users.Object(u, false), nil
}

// botGuilds gives a bot session its guilds (of its shard), with their GUILD_CREATE when the
// intents include GUILDS: channels and roles, and all members with GUILD_MEMBERS.
func (s *Server) botGuilds(ctx context.Context, who gateway.Identity, intents uint64, shard []int) ([]gateway.BotGuild, error) {
	list, err := s.store.ListUserGuilds(ctx, who.UserID)
	if err != nil {
		return nil, err
	}
	app, err := s.store.GetApplication(ctx, who.AppID)
	if err != nil {
		return nil, err
	}
	obfuscate := guilds.ObfuscationOn(who.Capabilities, app) // rule GW-1
	out := make([]gateway.BotGuild, 0, len(list))
	for i := range list {
		g := &list[i]
		if shard != nil && !guilds.InShard(g.ID, shard[0], shard[1]) {
			continue
		}
		bg := gateway.BotGuild{ID: g.ID}
		if intents&gwire.IntentGuilds != 0 {
			gc, err := guilds.GuildCreate(ctx, s.store, g, who.UserID, intents&gwire.IntentGuildMembers != 0, obfuscate)
			if err != nil {
				return nil, err
			}
			if intents&gwire.IntentGuildVoiceStates != 0 {
				gc.VoiceStates = s.guildVoice.States(g.ID)
			}
			bg.Create = gc
		}
		out = append(out, bg)
	}
	return out, nil
}

// botMembers serves the gateway's Request Guild Members: the members of a guild the bot is in
// whose username or nick starts with query (case-insensitive), up to limit (0: all), or those
// of userIDs.
func (s *Server) botMembers(ctx context.Context, who gateway.Identity, guildID uint64, query string, limit int, userIDs []uint64) ([]wire.Member, []uint64, error) {
	if _, err := s.store.GetGuildMember(ctx, guildID, who.UserID); err != nil {
		if errors.Is(err, store.ErrNotFound) {
			return nil, nil, wire.UnknownGuild()
		}
		return nil, nil, err
	}
	var out []wire.Member
	var missing []uint64
	if userIDs != nil {
		for _, id := range userIDs {
			m, err := guilds.LoadMember(ctx, s.store, guildID, id, true)
			var apiErr *wire.APIError
			switch {
			case errors.As(err, &apiErr):
				missing = append(missing, id)
			case err != nil:
				return nil, nil, err
			default:
				out = append(out, m)
			}
		}
		return out, missing, nil
	}
	query = strings.ToLower(query)
	after := uint64(0)
	for {
		page, err := s.store.ListGuildMembers(ctx, guildID, after, guilds.MaxMembersList)
		if err != nil {
			return nil, nil, err
		}
		for i := range page {
			m, err := guilds.LoadMember(ctx, s.store, guildID, page[i].UserID, true)
			if err != nil {
				return nil, nil, err
			}
			nick := ""
			if m.Nick != nil {
				nick = *m.Nick
			}
			if query != "" && !strings.HasPrefix(strings.ToLower(m.User.Username), query) && !strings.HasPrefix(strings.ToLower(nick), query) {
				continue
			}
			out = append(out, m)
			if limit > 0 && len(out) == limit {
				return out, nil, nil
			}
		}
		if len(page) < guilds.MaxMembersList {
			return out, nil, nil
		}
		after = page[len(page)-1].UserID
	}
}

// gatewayBot answers GET /gateway/bot (Bot token): the gateway URL, the recommended shards and
// the bot's session_start_limit, counted by the gateway on the service's clock.
func (s *Server) gatewayBot(w http.ResponseWriter, r *http.Request) {
	out, err := func() (any, error) {
		app, err := token.Auth{Store: s.store, Clock: s.cfg.Clock}.Bot(r)
		if err != nil {
			return nil, err
		}
		conc, err := guilds.MaxConcurrency(r.Context(), s.store, app.ID)
		if err != nil {
			return nil, err
		}
		list, err := s.store.ListUserGuilds(r.Context(), app.BotUserID)
		if err != nil {
			return nil, err
		}
		shards := max(1, (len(list)+guildsPerShard-1)/guildsPerShard)
		shards = (shards + conc - 1) / conc * conc
		return wire.GatewayBot{URL: s.gatewayWS(), Shards: shards, SessionStartLimit: s.hub.SessionStartLimit(app.ID, conc)}, nil
	}()
	if err != nil {
		httpx.Error(w, r, s.log, err)
		return
	}
	httpx.JSON(w, http.StatusOK, out)
}

// SetMaxConcurrency sets an application's max_concurrency: above 1, the application uses large
// bot sharding (rule GLD-1).
func (s *Server) SetMaxConcurrency(appID uint64, n int) error {
	return guilds.SetMaxConcurrency(context.Background(), s.store, appID, n)
}
