// Package extauth verifies the external credentials of POST /partner-sdk/token (rule AU-5): it maps
// (application, external_auth_type, external_auth_token) to an external identity.
//
// OIDC tokens are ID tokens of the application's configured issuer (package oidc, rule AU-9);
// DISCORD_BOT_ISSUED_ACCESS_TOKEN is an access token this service issued to a provisional account
// of the same application. The other types (Steam session tickets, Epic, Unity, Apple, PlayStation)
// would be verified against those providers, which this service cannot reach; they go through a
// Verifier that the deployment configures per type. Dev mode installs DevVerifier for them, which
// accepts tokens of the documented dev form made by DevToken.
package extauth

import (
	"context"
	"errors"
	"fmt"
	"time"

	"sdkpp/server/store"
)

// External auth types.
const (
	OIDC                   = "OIDC"
	SteamSessionTicket     = "STEAM_SESSION_TICKET"
	EpicAccessToken        = "EPIC_ONLINE_SERVICES_ACCESS_TOKEN"
	EpicIDToken            = "EPIC_ONLINE_SERVICES_ID_TOKEN"
	UnityIDToken           = "UNITY_SERVICES_ID_TOKEN"
	AppleIDToken           = "APPLE_ID_TOKEN"
	PlayStationIDToken     = "PLAYSTATION_NETWORK_ID_TOKEN"
	BotIssuedAccessToken   = "DISCORD_BOT_ISSUED_ACCESS_TOKEN"
	BotExternalUser        = "BOT" // identity type of the bot-token endpoint's external_user_id
	DevIssuer              = "sdkpp-dev"
	maxExternalTokenLen    = 16 << 10
	maxExternalIdentityLen = 256
)

// ProviderTypes are the types verified by a configured Verifier (a DevVerifier in dev mode).
var ProviderTypes = []string{SteamSessionTicket, EpicAccessToken, EpicIDToken, UnityIDToken, AppleIDToken, PlayStationIDToken}

// AllTypes are every accepted external_auth_type.
var AllTypes = append([]string{OIDC, BotIssuedAccessToken}, ProviderTypes...)

// Identity is a verified external identity: the identity type it is stored under and the id.
type Identity struct {
	Type       string
	ExternalID string
}

// Request is one verification.
type Request struct {
	App   *store.Application
	Type  string
	Token string
	Nonce string // OIDC: when set, must equal the token's nonce (rule AA-4)
	Now   time.Time
}

// Verifier checks one type of external token.
type Verifier interface {
	Verify(ctx context.Context, st store.Store, req Request) (Identity, error)
}

// ErrUnsupported is returned for an unknown type or one with no verifier configured.
var ErrUnsupported = errors.New("external auth type not supported for this application")

// InvalidError is returned for a token that fails verification; Reason is safe to show and log
// (it never contains the token).
type InvalidError struct{ Reason string }

func (e *InvalidError) Error() string { return "invalid external auth token: " + e.Reason }

// Invalid returns an InvalidError.
func Invalid(format string, args ...any) error {
	return &InvalidError{Reason: fmt.Sprintf(format, args...)}
}

// Registry maps types to verifiers.
type Registry map[string]Verifier

// Verify checks req with the verifier of its type.
func (r Registry) Verify(ctx context.Context, st store.Store, req Request) (Identity, error) {
	v, ok := r[req.Type]
	if !ok {
		return Identity{}, ErrUnsupported
	}
	if req.Token == "" {
		return Identity{}, Invalid("empty token")
	}
	if len(req.Token) > maxExternalTokenLen {
		return Identity{}, Invalid("token too long")
	}
	id, err := v.Verify(ctx, st, req)
	if err != nil {
		return Identity{}, err
	}
	if id.ExternalID == "" || len(id.ExternalID) > maxExternalIdentityLen {
		return Identity{}, Invalid("no usable subject")
	}
	return id, nil
}
