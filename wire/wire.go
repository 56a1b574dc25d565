// Package wire holds the JSON shapes of the service's public HTTP API: request and response bodies,
// error bodies and webhook payloads. It follows the platform's public API (v10): snowflake ids are
// decimal strings, validation errors are {"code": 50035, "message": "Invalid Form Body",
// "errors": {...}}, OAuth errors are {"error", "error_description"}.
//
// The SDK and the service both import it (and wire/gateway for the realtime gateway): each shape,
// constant and limit of the protocol is defined here once.
package wire

import (
	"encoding/json"
	"fmt"
	"math"
	"strconv"
	"strings"
)

// Snowflake is a 64-bit id serialized as a decimal string. It also accepts a JSON number.
type Snowflake uint64

// MarshalText writes the id's decimal digits, which encoding/json writes as a string. (A
// MarshalJSON would cost a check and a copy of its result at every id of every object.)
func (s Snowflake) MarshalText() ([]byte, error) {
	return strconv.AppendUint(nil, uint64(s), 10), nil
}

// MaxSnowflake is the largest id there is: ids are positive 63-bit numbers (a snowflake's top bit
// is zero until 2084), and the service's store holds signed 64-bit integers. Every parse of an id
// refuses a larger one, so no id from a request can reach the store out of its range.
const MaxSnowflake = math.MaxInt64

// UnmarshalJSON reads a string or a number of at most MaxSnowflake.
func (s *Snowflake) UnmarshalJSON(b []byte) error {
	str := strings.Trim(string(b), `"`)
	if str == "null" || str == "" {
		*s = 0
		return nil
	}
	v, err := strconv.ParseUint(str, 10, 64)
	if err != nil || v > MaxSnowflake {
		return fmt.Errorf("not a snowflake: %.40s", b)
	}
	*s = Snowflake(v)
	return nil
}

// String returns the decimal form.
func (s Snowflake) String() string { return strconv.FormatUint(uint64(s), 10) }

// ParseSnowflake reads a decimal id; zero, ids above MaxSnowflake and garbage are refused.
func ParseSnowflake(s string) (Snowflake, bool) {
	v, err := strconv.ParseUint(strings.TrimSpace(s), 10, 64)
	if err != nil || v == 0 || v > MaxSnowflake {
		return 0, false
	}
	return Snowflake(v), true
}

// User is the user object of GET /users/@me and of webhook payloads.
type User struct {
	ID            Snowflake `json:"id"`
	Username      string    `json:"username"`
	Discriminator string    `json:"discriminator"`
	GlobalName    *string   `json:"global_name"`
	Avatar        *string   `json:"avatar"`
	Bot           bool      `json:"bot,omitempty"`
	// PremiumType is 0 unless the app is approved for identify.premium and the token carries that
	// scope (rule USR-1).
	PremiumType int `json:"premium_type"`
	Flags       int `json:"flags"`
	PublicFlags int `json:"public_flags"`
	// IsProvisional is true for provisional accounts (rule AU-5).
	IsProvisional bool `json:"is_provisional"`
	// PrimaryGuild is the guild whose tag the user shows (rule USR-2); absent when none.
	PrimaryGuild *PrimaryGuild `json:"primary_guild,omitempty"`
	// ApplicationProfiles (sdkpp) are the user's external identities in the application of the
	// session or token: given in READY for the signed-in user, and for other users in the
	// relationship objects of READY, of the relationship list and of game relationship events,
	// and in APPLICATION_PROFILES_UPDATE. Absent when the user has none there.
	ApplicationProfiles []ApplicationProfile `json:"application_profiles,omitempty"`
}

// ApplicationProfile (sdkpp) is a user's game profile from an external identity provider: the
// identity a provisional account was made from (or merged with) in one application.
type ApplicationProfile struct {
	ApplicationID        Snowflake `json:"application_id"`
	Username             string    `json:"username"`    // the in-game name
	AvatarHash           string    `json:"avatar_hash"` // "" when none
	Metadata             string    `json:"metadata"`    // developer metadata, "" when none
	ProviderID           *string   `json:"provider_id,omitempty"`
	ProviderIssuedUserID string    `json:"provider_issued_user_id"`
	// ProviderType is the external_auth_type the identity came from (OIDC,
	// STEAM_SESSION_TICKET, ...), or BOT for the bot-token endpoint.
	ProviderType string `json:"provider_type"`
}

// TokenResponse is the body of every successful token grant.
type TokenResponse struct {
	AccessToken  string `json:"access_token"`
	TokenType    string `json:"token_type"` // always "Bearer"
	ExpiresIn    int64  `json:"expires_in"` // seconds; 604800 for a fresh token
	RefreshToken string `json:"refresh_token,omitempty"`
	Scope        string `json:"scope"`
	IDToken      string `json:"id_token,omitempty"`
}

// DeviceAuthorization is the body of POST /oauth2/device/authorize (RFC 8628).
type DeviceAuthorization struct {
	DeviceCode              string `json:"device_code"`
	UserCode                string `json:"user_code"`
	VerificationURI         string `json:"verification_uri"`
	VerificationURIComplete string `json:"verification_uri_complete"`
	ExpiresIn               int64  `json:"expires_in"`
	Interval                int64  `json:"interval"`
}

// BotTokenRequest is the body of POST /partner-sdk/token/bot and /provisional-accounts/unmerge/bot.
type BotTokenRequest struct {
	ExternalUserID      string  `json:"external_user_id"`
	PreferredGlobalName *string `json:"preferred_global_name,omitempty"`
}

// ExternalTokenRequest is the body of POST /partner-sdk/token and /provisional-accounts/unmerge.
type ExternalTokenRequest struct {
	ClientID          Snowflake `json:"client_id"`
	ClientSecret      string    `json:"client_secret,omitempty"`
	ExternalAuthType  string    `json:"external_auth_type"`
	ExternalAuthToken string    `json:"external_auth_token"`
	// Nonce, when given, must equal the nonce claim of an OIDC ID token (rule AA-4).
	Nonce               string  `json:"nonce,omitempty"`
	PreferredGlobalName *string `json:"preferred_global_name,omitempty"`
}

// ChildTokenRequest is the body of POST /partner-sdk/child-token.
type ChildTokenRequest struct {
	ParentAccessToken  string    `json:"parent_access_token"`
	ChildApplicationID Snowflake `json:"child_application_id"`
	ParentClientSecret string    `json:"parent_client_secret,omitempty"`
}

// ProvisionalDisplayNameRequest is the body of PATCH /users/@me/provisional-display-name.
type ProvisionalDisplayNameRequest struct {
	GlobalName *string `json:"global_name"`
}

// OIDCConfigRequest is the body of PUT /applications/{id}/oidc-config.
type OIDCConfigRequest struct {
	Issuer   string `json:"issuer"`
	ClientID string `json:"client_id"` // the aud the app's ID tokens carry
}

// OIDCConfig is the stored, validated issuer configuration of an application.
type OIDCConfig struct {
	ApplicationID Snowflake `json:"application_id"`
	Issuer        string    `json:"issuer"`
	ClientID      string    `json:"client_id"`
	JWKSURI       string    `json:"jwks_uri"`
	Algorithms    []string  `json:"algorithms"`
}

// Webhook event envelope types.
const (
	WebhookTypePing  = 0
	WebhookTypeEvent = 1
)

// WebhookEvent is the body of an outgoing webhook request.
type WebhookEvent struct {
	Version       int             `json:"version"`
	ApplicationID Snowflake       `json:"application_id"`
	Type          int             `json:"type"`
	Event         *WebhookPayload `json:"event,omitempty"`
}

// WebhookPayload is the event inside a WebhookEvent.
type WebhookPayload struct {
	Type      string          `json:"type"`      // e.g. "APPLICATION_DEAUTHORIZED"
	Timestamp string          `json:"timestamp"` // RFC 3339 with fractional seconds
	Data      json.RawMessage `json:"data"`
}

// EventApplicationDeauthorized is sent when a user unlinks, revokes, is unmerged or is banned
// (rule WH-1); its data is {"user": User}.
const EventApplicationDeauthorized = "APPLICATION_DEAUTHORIZED"

// DeauthorizedData is the data of APPLICATION_DEAUTHORIZED.
type DeauthorizedData struct {
	User User `json:"user"`
}

// DevCredentials is the JSON written to the dev credentials file (see package server's doc).
type DevCredentials struct {
	APIBase      string           `json:"api_base"`
	WebBase      string           `json:"web_base"`
	AdminToken   string           `json:"admin_token"`
	Applications []DevApplication `json:"applications"`
	Users        []DevUser        `json:"users"`
}

// DevApplication is one seeded application.
type DevApplication struct {
	ID                  Snowflake  `json:"id"`
	Name                string     `json:"name"`
	ClientSecret        string     `json:"client_secret"`
	BotToken            string     `json:"bot_token"`
	BotUserID           Snowflake  `json:"bot_user_id"`
	PublicKey           string     `json:"public_key"` // hex Ed25519 key that verifies webhook signatures
	RedirectURIs        []string   `json:"redirect_uris"`
	ParentApplicationID *Snowflake `json:"parent_application_id"`
	PublicClient        bool       `json:"public_client"`
	PremiumApproved     bool       `json:"premium_approved"`
	WebhookURL          string     `json:"webhook_url"`
}

// DevUser is one seeded user.
type DevUser struct {
	ID          Snowflake `json:"id"`
	Username    string    `json:"username"`
	Password    string    `json:"password"`
	PremiumType int       `json:"premium_type"`
}

// App returns the seeded application named name, or nil.
func (c DevCredentials) App(name string) *DevApplication {
	for i := range c.Applications {
		if c.Applications[i].Name == name {
			return &c.Applications[i]
		}
	}
	return nil
}

// User returns the seeded user named username, or nil.
func (c DevCredentials) User(username string) *DevUser {
	for i := range c.Users {
		if c.Users[i].Username == username {
			return &c.Users[i]
		}
	}
	return nil
}

// DefaultAddr is the service's listen address when none is configured, and the address the SDK
// reaches when the game names no other.
const DefaultAddr = "127.0.0.1:7710"

// APIPrefix is the path of the HTTP API below the web base.
const APIPrefix = "/api/v10"

// MaxMessageContentChars bounds the content of a direct or lobby message, in characters.
const MaxMessageContentChars = 2000
