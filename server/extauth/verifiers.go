package extauth

import (
	"context"
	"crypto/sha256"
	"errors"
	"strconv"
	"time"

	jose "github.com/go-jose/go-jose/v4"
	"github.com/go-jose/go-jose/v4/jwt"

	"sdkpp/server/oidc"
	"sdkpp/server/store"
	"sdkpp/server/token"
)

// OIDCVerifier verifies ID tokens of the application's configured issuer.
type OIDCVerifier struct {
	Options oidc.Options
}

// Verify checks the ID token; the identity is "<iss>|<sub>".
func (v OIDCVerifier) Verify(ctx context.Context, st store.Store, req Request) (Identity, error) {
	cfg, err := st.GetOIDCConfig(ctx, req.App.ID)
	if errors.Is(err, store.ErrNotFound) {
		return Identity{}, ErrUnsupported
	}
	if err != nil {
		return Identity{}, err
	}
	refetch := func(ctx context.Context) ([]byte, error) { return v.Options.FetchKeys(ctx, cfg.JWKSURI) }
	claims, jwks, err := oidc.VerifyIDToken(ctx, req.Token, cfg.JWKS, oidc.Expect{
		Issuer: cfg.Issuer, ClientID: cfg.ClientID, Nonce: req.Nonce, Now: req.Now,
	}, refetch)
	if err != nil {
		var oe *oidc.Error
		if errors.As(err, &oe) {
			return Identity{}, Invalid("%s", oe.Reason)
		}
		return Identity{}, err
	}
	if string(jwks) != string(cfg.JWKS) { // the issuer rotated its keys
		cfg.JWKS, cfg.UpdatedAt = jwks, req.Now
		if err := st.PutOIDCConfig(ctx, cfg); err != nil {
			return Identity{}, err
		}
	}
	return Identity{Type: OIDC, ExternalID: claims.Issuer + "|" + claims.Subject}, nil
}

// BotIssuedVerifier accepts an access token this service issued to a provisional account of the
// same application; the identity is that account's.
type BotIssuedVerifier struct{}

// Verify looks the token up.
func (BotIssuedVerifier) Verify(ctx context.Context, st store.Store, req Request) (Identity, error) {
	t, err := token.Lookup(ctx, st, req.Now, req.Token, store.AccessToken)
	if errors.Is(err, token.ErrInvalid) {
		return Identity{}, Invalid("unknown or expired access token")
	}
	if err != nil {
		return Identity{}, err
	}
	if t.AppID != req.App.ID {
		return Identity{}, Invalid("the access token belongs to another application")
	}
	ids, err := st.ListIdentitiesByUser(ctx, t.UserID)
	if err != nil {
		return Identity{}, err
	}
	for _, id := range ids {
		if id.AppID == req.App.ID {
			return Identity{Type: id.Type, ExternalID: id.ExternalID}, nil
		}
	}
	return Identity{}, Invalid("the access token is not a provisional account's")
}

// DevVerifier accepts dev-form tokens for one external type. The dev form is a compact JWS with
// alg HS256 whose key is SHA-256(client secret of the application), and claims
//
//	{"iss": "sdkpp-dev", "sub": "<external user id>", "aud": "<application id>",
//	 "ext": "<EXTERNAL_AUTH_TYPE>", "iat": <unix>, "exp": <unix>}
//
// DevToken makes one; so does the dev endpoint POST /api/v10/dev/external-token. It proves only
// that the caller knows the client secret: never configure it for a production application.
type DevVerifier struct{}

type devClaims struct {
	jwt.Claims
	Ext string `json:"ext"`
}

// Verify checks a dev-form token. It needs the application's client secret hash, which is the key.
func (DevVerifier) Verify(ctx context.Context, st store.Store, req Request) (Identity, error) {
	tok, err := jwt.ParseSigned(req.Token, []jose.SignatureAlgorithm{jose.HS256})
	if err != nil {
		return Identity{}, Invalid("not a dev-form token (HS256 JWS)")
	}
	var c devClaims
	if err := tok.Claims(req.App.ClientSecretHash, &c); err != nil {
		return Identity{}, Invalid("bad signature")
	}
	err = c.Claims.ValidateWithLeeway(jwt.Expected{
		Issuer: DevIssuer, AnyAudience: jwt.Audience{strconv.FormatUint(req.App.ID, 10)}, Time: req.Now,
	}, time.Minute)
	switch {
	case err != nil:
		return Identity{}, Invalid("%v", err)
	case c.Expiry == nil:
		return Identity{}, Invalid("missing exp")
	case c.Ext != req.Type:
		return Identity{}, Invalid("token is for %q", c.Ext)
	}
	return Identity{Type: req.Type, ExternalID: c.Subject}, nil
}

// DevToken makes a dev-form token of type typ for subject, valid for ttl from now.
func DevToken(appID uint64, clientSecret, typ, subject string, now time.Time, ttl time.Duration) (string, error) {
	key := sha256.Sum256([]byte(clientSecret))
	return DevTokenWithKey(appID, key[:], typ, subject, now, ttl)
}

// DevTokenWithKey is DevToken given SHA-256(client secret), the form the store keeps.
func DevTokenWithKey(appID uint64, key []byte, typ, subject string, now time.Time, ttl time.Duration) (string, error) {
	signer, err := jose.NewSigner(jose.SigningKey{Algorithm: jose.HS256, Key: key}, (&jose.SignerOptions{}).WithType("JWT"))
	if err != nil {
		return "", err
	}
	return jwt.Signed(signer).Claims(devClaims{
		Claims: jwt.Claims{Issuer: DevIssuer, Subject: subject, Audience: jwt.Audience{strconv.FormatUint(appID, 10)},
			IssuedAt: jwt.NewNumericDate(now), Expiry: jwt.NewNumericDate(now.Add(ttl))},
		Ext: typ,
	}).Serialize()
}

// Standard returns the registry of a deployment: OIDC and bot-issued tokens always, DevVerifier for
// the provider types when dev is set, then overrides (a nil Verifier removes a type).
func Standard(opts oidc.Options, dev bool, overrides map[string]Verifier) Registry {
	r := Registry{OIDC: OIDCVerifier{Options: opts}, BotIssuedAccessToken: BotIssuedVerifier{}}
	if dev {
		for _, t := range ProviderTypes {
			r[t] = DevVerifier{}
		}
	}
	for t, v := range overrides {
		if v == nil {
			delete(r, t)
		} else {
			r[t] = v
		}
	}
	return r
}
