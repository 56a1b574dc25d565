package oauth

import (
	"errors"
	"net/http"

	"sdkpp/server/httpx"
	"sdkpp/server/store"
	"sdkpp/server/token"
	"sdkpp/wire"
)

// revoke serves POST /oauth2/token/revoke (RFC 7009): revoking any token revokes the whole
// authorization and its children and queues APPLICATION_DEAUTHORIZED (rules AU-4, AU-7, ST-2,
// WH-1).
func (h *Handler) revoke(w http.ResponseWriter, r *http.Request) {
	form, c, err := h.formClient(r)
	if err != nil {
		httpx.Error(w, r, h.Logger, err)
		return
	}
	tok := form.Get("token")
	if tok == "" {
		httpx.Error(w, r, h.Logger, oauthErr(wire.OAuthInvalidRequest, "token is required"))
		return
	}
	t, err := token.Find(r.Context(), h.Store, tok)
	switch {
	case errors.Is(err, store.ErrNotFound):
		// RFC 7009 2.2: an unknown token is not an error.
	case err != nil:
		httpx.Error(w, r, h.Logger, err)
		return
	case t.AppID != c.app.ID:
		h.Logger.InfoContext(r.Context(), "revocation of another client's token ignored", "application_id", c.app.ID)
	default:
		if err := h.Accounts.Revoke(r.Context(), t.AuthorizationID); err != nil {
			httpx.Error(w, r, h.Logger, err)
			return
		}
	}
	httpx.JSON(w, http.StatusOK, struct{}{})
}
