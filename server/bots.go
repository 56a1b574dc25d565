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
		shards, conc, err := guilds.RecommendedShards(r.Context(), s.store, app)
		if err != nil {
			return nil, err
		}
		return wire.GatewayBot{URL: s.gatewayWS(), Shards: shards, SessionStartLimit: s.hub.SessionStartLimit(app.ID, conc)}, nil
	}()
	httpx.Answer(w, r, s.log, out, err)
}

// SetMaxConcurrency sets an application's max_concurrency: above 1, the application uses large
// bot sharding (rule GLD-1).
func (s *Server) SetMaxConcurrency(appID uint64, n int) error {
	return guilds.SetMaxConcurrency(context.Background(), s.store, appID, n)
}
