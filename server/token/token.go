// Package token issues and checks the service's opaque bearer tokens, and decides what a grant
// may still do. A token is its row's id (8 bytes, big-endian, base64url), a dot and a secret of
// 32 random bytes (base64url): the store finds the row by the id, and only the secret's SHA-256
// is stored, compared in constant time. The id is a snowflake, so the store appends each new
// token at the end of its key. Tokens issued before this format (32 random bytes alone, no dot)
// are found by the SHA-256 of the whole token until they expire. Access tokens live AccessTTL (7 days, the "expires_in": 604800 of the token response); refresh tokens
// live RefreshTTL and are rotated on every use.
//
// A client_credentials access token is signed instead (Options.Signed, signed.go), as many
// providers' machine-to-machine tokens are (RFC 9068 in spirit, though no JWT): its id (a
// snowflake, as above), a dot, its claims (the authorization, application and bot user, scopes,
// creation and expiry), a dot, and an HMAC-SHA256 of both under the store's TokenKey (one key per
// database, made once and shared by every node and restart). Issuing one writes nothing: a token
// endpoint's request is CPU alone. Checking one checks its MAC (in constant time), its expiry and
// its authorization: the top-level authorization of its application and bot user must still be
// the one it names. That is the trade-off: such a token has no row of its own to delete, so it is
// revoked with its authorization, not alone; every path that revoked it as a row did (the
// revocation endpoint, RFC 7009, which revokes the whole authorization, an unlink, a ban, an
// operator's revocation) deletes the authorization, and one made again has a new id. A
// revocation of one token alone, were one ever needed, would keep its id in a table until its
// expiry; none is needed today. The authorization is read as a token's row was, from the
// store's memo under the same rules (store.MayBeBehind): no weaker across nodes.
//
// The tokens issued from one authorization code or device approval, and from their refresh
// tokens' rotations, form a grant (store.Grant, RFC 9700 4.14.2). A grant is revoked whole, and
// issues nothing more, when its authorization code is redeemed again (RFC 6749 4.1.2) or one of
// its used refresh tokens is presented again (RFC 9700 2.2.2, 4.14.2): either means that
// someone other than the client may hold its tokens.
package token

import (
	"context"
	"encoding/base64"
	"encoding/binary"
	"errors"
	"log/slog"
	"net/http"
	"strings"
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
	// Signed issues a signed access token, which writes nothing (client_credentials' tokens);
	// it takes neither Refresh nor Grant.
	Signed bool
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
	t, err := Find(ctx, st, tok)
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
	if err := st.UseToken(ctx, t.ID, now); errors.Is(err, store.ErrNotFound) {
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

// IDs gives the ids of new tokens (a snowflake.Generator).
type IDs interface{ Next() uint64 }

// Issue makes an access token (and a refresh token when asked) under authorization a, with ids
// from ids.
func Issue(ctx context.Context, st store.Store, ids IDs, now time.Time, a *store.Authorization, o Options) (Issued, error) {
	expiresAt, scopes := o.ExpiresAt, o.Scopes
	if expiresAt.IsZero() {
		expiresAt = now.Add(AccessTTL)
	}
	if scopes == nil {
		scopes = a.Scopes
	}
	access := &store.Token{Kind: store.AccessToken,
		AuthorizationID: a.ID, AppID: a.AppID, UserID: a.UserID, Scopes: scopes,
		ExpiresAt: expiresAt, CreatedAt: now, GrantID: o.Grant}
	if o.Signed {
		if o.Refresh || o.Grant != 0 {
			return Issued{}, errors.New("token: a signed token has no refresh token and no grant")
		}
		tok, err := sign(st.TokenKey(), ids, access)
		return Issued{Access: tok, ExpiresAt: expiresAt, Scopes: scopes}, err
	}
	out := Issued{Access: mint(ids, access), ExpiresAt: expiresAt, Scopes: scopes}
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
		refresh := &store.Token{Kind: store.RefreshToken,
			AuthorizationID: a.ID, AppID: a.AppID, UserID: a.UserID, Scopes: scopes,
			ExpiresAt: now.Add(RefreshTTL), CreatedAt: now, GrantID: o.Grant}
		out.Refresh = mint(ids, refresh)
		return tx.InsertToken(ctx, refresh)
	})
	return out, err
}

// idLen is the length of a token's encoded id, before its dot.
var idLen = base64.RawURLEncoding.EncodedLen(8)

// mint gives t a new id and secret and returns the token that carries them: its id, encoded,
// a dot and the secret (secret.NewToken, which makes the token and the hash in two
// allocations: the token endpoint mints one at every request).
func mint(ids IDs, t *store.Token) string {
	t.ID = ids.Next()
	var id [8]byte
	var prefix [16]byte // idLen (11) and the dot
	binary.BigEndian.PutUint64(id[:], t.ID)
	base64.RawURLEncoding.Encode(prefix[:idLen], id[:])
	prefix[idLen] = '.'
	tok, hash := secret.NewToken(prefix[:idLen+1])
	t.Hash = hash
	return tok
}

// Find returns the stored token that tok names, of any kind, expired or not: by the id it
// carries, when its secret matches the stored hash, or, for a token issued before tokens carried
// their id, by the hash of the whole token; for a signed token, the token its claims carry when
// its MAC matches and its authorization stands (findSigned). Anything else is
// store.ErrNotFound.
func Find(ctx context.Context, st store.Store, tok string) (*store.Token, error) {
	if tok == "" {
		return nil, store.ErrNotFound
	}
	enc, sec, ok := strings.Cut(tok, ".")
	if !ok { // no legacy token has a dot
		return st.GetLegacyToken(ctx, secret.Hash(tok))
	}
	if strings.Contains(sec, ".") { // an opaque token's secret has none
		return findSigned(ctx, st, tok)
	}
	raw, err := base64.RawURLEncoding.DecodeString(enc)
	if len(enc) != idLen || err != nil {
		return nil, store.ErrNotFound
	}
	t, err := st.GetToken(ctx, binary.BigEndian.Uint64(raw))
	if err != nil {
		return nil, err
	}
	if t.Legacy || !secret.Matches(t.Hash, sec) {
		return nil, store.ErrNotFound
	}
	return t, nil
}

// ErrInvalid is returned for an unknown, expired or wrong-kind token.
var ErrInvalid = errors.New("token: invalid or expired")

// Lookup returns the stored token of kind for the plaintext tok, if it exists and has not expired.
func Lookup(ctx context.Context, st store.Store, now time.Time, tok, kind string) (*store.Token, error) {
	t, err := Find(ctx, st, tok)
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
//
// A request served for a gateway session carries the session's httpx.SessionMemo: the token is
// then read once for the session, and checked again only for its expiry. The session ends when
// its token is revoked (its grant, its authorization, its user), so a request on it is refused
// once the session has ended, where a request over HTTP is refused at once: on a cluster, a
// notice on the bus later.
func (a Auth) Bearer(r *http.Request) (*store.Token, error) {
	return a.BearerOf(r.Context(), r.Header.Get("Authorization"))
}

// BearerOf is Bearer of a request that another carrier than net/http brought (a gateway
// session's), with its context and its Authorization header's value.
func (a Auth) BearerOf(ctx context.Context, authorization string) (*store.Token, error) {
	if t, ok := a.SessionBearer(ctx, authorization); ok {
		c := *t // the caller's own
		return &c, nil
	}
	cred, now := httpx.CredentialOf(authorization, "Bearer"), a.Clock.Now()
	t, err := Lookup(ctx, a.Store, now, cred, store.AccessToken)
	if errors.Is(err, ErrInvalid) {
		return nil, wire.Unauthorized()
	}
	if memo := httpx.SessionMemoOf(ctx); err == nil && memo != nil && cred != "" {
		c := *t // the memo's, which the caller may not modify
		memo.Keep(cred, &c)
	}
	return t, err
}

// SessionBearer returns the access token of authorization that the gateway session's memo in ctx
// (httpx.SessionMemo) holds, when it has not expired; false when there is no memo, it holds
// another credential or the token has expired (BearerOf then reads the store). The token is the
// memo's, shared by the session's requests, and must not be modified: it spares a request on an
// identified session a copy of it, and the context a read of the store would need.
func (a Auth) SessionBearer(ctx context.Context, authorization string) (*store.Token, bool) {
	memo := httpx.SessionMemoOf(ctx)
	if memo == nil {
		return nil, false
	}
	cred := httpx.CredentialOf(authorization, "Bearer")
	if cred == "" {
		return nil, false
	}
	v, ok := memo.Get(cred)
	if !ok {
		return nil, false
	}
	t, ok := v.(*store.Token)
	if !ok || !a.Clock.Now().Before(t.ExpiresAt) {
		return nil, false
	}
	return t, true
}

// Bot returns the application of "Authorization: Bot <bot token>" (rule AU-8), or a 401
// APIError.
func (a Auth) Bot(r *http.Request) (*store.Application, error) {
	return a.BotOf(r.Context(), r.Header.Get("Authorization"))
}

// BotOf is Bot of a request that another carrier than net/http brought, with its context and
// its Authorization header's value.
func (a Auth) BotOf(ctx context.Context, authorization string) (*store.Application, error) {
	tok := httpx.CredentialOf(authorization, "Bot")
	if tok == "" {
		return nil, wire.Unauthorized()
	}
	app, err := a.Store.GetApplicationByBotToken(ctx, secret.Hash(tok))
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
