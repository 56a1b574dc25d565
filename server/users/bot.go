package users

import (
	"fmt"
	"net/http"

	"sdkpp/server/httpx"
)

// isBot tells whether r authenticates with a bot token ("Authorization: Bot <token>").
func isBot(r *http.Request) bool { return httpx.Credential(r, "Bot") != "" }

// botMe answers GET /users/@me for a bot token: the application's bot user. A wrong bot token is
// a 401.
func (h *Handler) botMe(w http.ResponseWriter, r *http.Request) {
	app, err := h.auth().Bot(r)
	if err != nil {
		httpx.Error(w, r, h.Logger, err)
		return
	}
	u, err := h.Store.GetUser(r.Context(), app.BotUserID)
	if err != nil {
		httpx.Error(w, r, h.Logger, fmt.Errorf("bot user of application %d: %w", app.ID, err))
		return
	}
	httpx.JSON(w, http.StatusOK, Object(u, false))
}
