// Package token issues and checks the service's opaque bearer tokens, and decides what a grant
// may still do. A token is 32 random bytes (base64url); only its SHA-256 is stored. Access
// tokens live AccessTTL (7 days, the "expires_in": 604800 of the token response); refresh tokens
// live RefreshTTL and are rotated on every use.
//
// The tokens issued from one authorization code or device approval, and from their refresh
// tokens' rotations, form a grant (store.Grant, RFC 9700 4.14.2). A grant is revoked whole, and
// issues nothing more, when its authorization code is redeemed again (RFC 6749 4.1.2) or one of
// its used refresh tokens is presented again (RFC 9700 2.2.2, 4.14.2): either means that
// someone other than the client may hold its tokens.
package token

import (
	"context"
	"errors"
	"log/slog"
	"net/http"
	"time"

	"sdkpp/internal/clock"
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
	// Grant is the grant the tokens belong to (0: none); a revoked grant issues nothing
	// (ErrGrantRevoked).
	Grant uint64
}

// Errors of grants and refresh tokens.
var (
	// ErrGrantRevoked is returned when tokens are asked for under a revoked grant.
	ErrGrantRevoked = errors.New("token: the grant was revoked")
	// ErrReused is returned by UseRefresh for a refresh token that was used before; the caller
	// must revoke its grant (RevokeGrant).
	ErrReused = errors.New("token: the refresh token was used before")
)

// NewGrant opens grant id of app for user.
func NewGrant(ctx context.Context, st store.Store, id uint64, now time.Time, appID, userID uint64) error {
	return st.CreateGrant(ctx, &store.Grant{ID: id, AppID: appID, UserID: userID, CreatedAt: now})
}

// UseRefresh spends the refresh token tok: it returns the stored token once; a second
// presentation of it gives the stored token with ErrReused, and an unknown or expired token
// ErrInvalid. Call it in the transaction that issues the new pair.
func UseRefresh(ctx context.Context, st store.Store, now time.Time, tok string) (*store.Token, error) {
	if tok == "" {
		return nil, ErrInvalid
	}
	t, err := st.GetToken(ctx, secret.Hash(tok))
	switch {
	case errors.Is(err, store.ErrNotFound):
		return nil, ErrInvalid
	case err != nil:
		return nil, err
	case t.Kind != store.RefreshToken || !now.Before(t.ExpiresAt):
		return nil, ErrInvalid
	case !t.UsedAt.IsZero():
		return t, ErrReused
	}
	if err := st.UseToken(ctx, t.Hash, now); errors.Is(err, store.ErrNotFound) {
		return t, ErrReused // a racing request spent it between the read and now
	} else if err != nil {
		return nil, err
	}
	return t, nil
}

// RevokeGrant revokes grant id: it issues nothing more and its tokens are gone. It returns the
// grant, so that the caller can end the sessions that its access tokens opened.
func RevokeGrant(ctx context.Context, st store.Store, now time.Time, id uint64) (*store.Grant, error) {
	if id == 0 {
		return nil, store.ErrNotFound
	}
	return st.RevokeGrant(ctx, id, now)
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
	access := &store.Token{Hash: secret.Hash(out.Access), Kind: store.AccessToken,
		AuthorizationID: a.ID, AppID: a.AppID, UserID: a.UserID, Scopes: scopes,
		ExpiresAt: expiresAt, CreatedAt: now, GrantID: o.Grant}
	if o.Grant == 0 && !o.Refresh { // one write: no transaction (a round trip each way less)
		return out, st.InsertToken(ctx, access)
	}
	err := st.WithTx(ctx, func(tx store.Store) error {
		if o.Grant != 0 { // read in the transaction that inserts: a revocation cannot slip between
			g, err := tx.GetGrant(ctx, o.Grant)
			if err != nil {
				return err
			}
			if !g.RevokedAt.IsZero() {
				return ErrGrantRevoked
			}
		}
		if err := tx.InsertToken(ctx, access); err != nil {
			return err
		}
		if !o.Refresh {
			return nil
		}
		out.Refresh = secret.Token()
		return tx.InsertToken(ctx, &store.Token{Hash: secret.Hash(out.Refresh), Kind: store.RefreshToken,
			AuthorizationID: a.ID, AppID: a.AppID, UserID: a.UserID, Scopes: scopes,
			ExpiresAt: now.Add(RefreshTTL), CreatedAt: now, GrantID: o.Grant})
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
	if !t.UsedAt.IsZero() {
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
