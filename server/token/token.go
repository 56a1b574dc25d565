// Package token issues and checks the service's opaque bearer tokens. A token is 32 random bytes
// (base64url); only its SHA-256 is stored. Access tokens live AccessTTL (7 days, the
// "expires_in": 604800 of the token response); refresh tokens live RefreshTTL and are rotated on
// every use.
package token

import (
	"context"
	"errors"
	"log/slog"
	"net/http"
	"time"

	"sdkpp/server/clock"
	"sdkpp/server/httpx"
	"sdkpp/server/secret"
	"sdkpp/server/store"
	"sdkpp/wire"
)

// Lifetimes.
const (
	AccessTTL  = 7 * 24 * time.Hour
	RefreshTTL = 365 * 24 * time.Hour
)

// Issued is a freshly made token pair.
type Issued struct {
	Access    string
	Refresh   string // "" when none was asked for
	ExpiresAt time.Time
	Scopes    []string
}

// Response returns the token response body (without id_token) for i at now.
func (i Issued) Response(now time.Time, scope string) wire.TokenResponse {
	return wire.TokenResponse{
		AccessToken:  i.Access,
		TokenType:    "Bearer",
		ExpiresIn:    int64(i.ExpiresAt.Sub(now).Round(time.Second) / time.Second),
		RefreshToken: i.Refresh,
		Scope:        scope,
	}
}

// Options shape an issued token.
type Options struct {
	Scopes    []string  // nil: the authorization's scopes
	Refresh   bool      // also issue a refresh token
	ExpiresAt time.Time // zero: now+AccessTTL
}

// Issue makes an access token (and a refresh token when asked) under authorization a.
func Issue(ctx context.Context, st store.Store, now time.Time, a *store.Authorization, o Options) (Issued, error) {
	expiresAt, scopes := o.ExpiresAt, o.Scopes
	if expiresAt.IsZero() {
		expiresAt = now.Add(AccessTTL)
	}
	if scopes == nil {
		scopes = a.Scopes
	}
	out := Issued{Access: secret.Token(), ExpiresAt: expiresAt, Scopes: scopes}
	err := st.WithTx(ctx, func(tx store.Store) error {
		if err := tx.InsertToken(ctx, &store.Token{Hash: secret.Hash(out.Access), Kind: store.AccessToken,
			AuthorizationID: a.ID, AppID: a.AppID, UserID: a.UserID, Scopes: scopes,
			ExpiresAt: expiresAt, CreatedAt: now}); err != nil {
			return err
		}
		if !o.Refresh {
			return nil
		}
		out.Refresh = secret.Token()
		return tx.InsertToken(ctx, &store.Token{Hash: secret.Hash(out.Refresh), Kind: store.RefreshToken,
			AuthorizationID: a.ID, AppID: a.AppID, UserID: a.UserID, Scopes: scopes,
			ExpiresAt: now.Add(RefreshTTL), CreatedAt: now})
	})
	return out, err
}

// ErrInvalid is returned for an unknown, expired or wrong-kind token.
var ErrInvalid = errors.New("token: invalid or expired")

// Lookup returns the stored token of kind for the plaintext tok, if it exists and has not expired.
func Lookup(ctx context.Context, st store.Store, now time.Time, tok, kind string) (*store.Token, error) {
	if tok == "" {
		return nil, ErrInvalid
	}
	t, err := st.GetToken(ctx, secret.Hash(tok))
	if errors.Is(err, store.ErrNotFound) {
		return nil, ErrInvalid
	}
	if err != nil {
		return nil, err
	}
	if t.Kind != kind || !now.Before(t.ExpiresAt) {
		return nil, ErrInvalid
	}
	return t, nil
}

// Auth authenticates requests by their Authorization header.
type Auth struct {
	Store store.Store
	Clock clock.Clock
}

// Bearer returns the access token of "Authorization: Bearer <token>", or a 401 APIError.
func (a Auth) Bearer(r *http.Request) (*store.Token, error) {
	t, err := Lookup(r.Context(), a.Store, a.Clock.Now(), httpx.Credential(r, "Bearer"), store.AccessToken)
	if errors.Is(err, ErrInvalid) {
		return nil, wire.Unauthorized()
	}
	return t, err
}

// Bot returns the application of "Authorization: Bot <bot token>" (rule AU-8), or a 401
// APIError.
func (a Auth) Bot(r *http.Request) (*store.Application, error) {
	tok := httpx.Credential(r, "Bot")
	if tok == "" {
		return nil, wire.Unauthorized()
	}
	app, err := a.Store.GetApplicationByBotToken(r.Context(), secret.Hash(tok))
	if errors.Is(err, store.ErrNotFound) {
		return nil, wire.Unauthorized()
	}
	return app, err
}

// BotRoute authenticates a bot token (Bot) and answers with h's result (httpx.Answer).
func (a Auth) BotRoute(log *slog.Logger, h func(r *http.Request, app *store.Application) (any, error)) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		app, err := a.Bot(r)
		if err != nil {
			httpx.Error(w, r, log, err)
			return
		}
		out, err := h(r, app)
		httpx.Answer(w, r, log, out, err)
	}
}
