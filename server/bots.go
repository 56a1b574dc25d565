package server

import (
	"context"
	"errors"
	"net/http"

	"sdkpp/server/gateway"
	"sdkpp/server/guilds"
	"sdkpp/server/httpx"
	"sdkpp/server/secret"
	"sdkpp/server/store"
	"sdkpp/server/token"
	"sdkpp/server/users"
	"sdkpp/wire"
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
