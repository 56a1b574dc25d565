package guilds

import (
	"net/http"

	"sdkpp/server/httpx"
	"sdkpp/server/token"
	"sdkpp/wire"
)

// registerRemoved adds the routes of Create Guild, which the platform removed: apps cannot create
// guilds (rule GLD-5). POST /guilds and POST /guilds/templates/{code} answer a bot with 403
// 20001 and a user's token with 403 50001, after the usual 401 for a missing or wrong credential.
func (s *Service) registerRemoved(mux httpx.Router) {
	mux.HandleFunc("POST /guilds", s.createRemoved)
	mux.HandleFunc("POST /guilds/templates/{code}", s.createRemoved)
}

func (s *Service) createRemoved(w http.ResponseWriter, r *http.Request) {
	auth := token.Auth{Store: s.Store, Clock: s.Clock}
	err := error(wire.MissingAccess())
	if httpx.Credential(r, "Bot") != "" {
		if _, err = auth.Bot(r); err == nil {
			err = wire.BotsCannotUse()
		}
	} else if _, err = auth.Bearer(r); err == nil {
		err = wire.MissingAccess()
	}
	httpx.Error(w, r, s.Logger, err)
}
