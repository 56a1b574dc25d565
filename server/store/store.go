// Package store is the service's storage: an interface the rest of the service codes against, and
// its SQLite implementation (modernc.org/sqlite, no cgo). Every table is created by the numbered
// migrations in migrations.go when the store opens; a store on a data directory survives restarts.
//
// Secrets are stored as SHA-256 hashes (tokens, codes, client secrets, bot tokens, sessions) or as
// salted PBKDF2 hashes (passwords); the only plaintext secrets are the webhook signing keys, the ID
// token signing key, and, in dev mode only, the dev credentials the service writes out.
package store

import (
	"context"
	"errors"
	"time"
)

// ErrNotFound is returned when a looked-up row does not exist.
var ErrNotFound = errors.New("store: not found")

// ErrConflict is returned when a unique value (a username, a user code) is taken.
var ErrConflict = errors.New("store: conflict")

// Application is an app registered with the service.
type Application struct {
	ID               uint64
	Name             string
	PublisherID      uint64 // apps of one publisher may be parent and child (rule AU-4)
	ParentID         uint64 // 0 unless this is a child application
	PublicClient     bool   // may use PKCE instead of its client secret
	PremiumApproved  bool   // may be granted identify.premium (rule AU-2)
	SDKTermsAccepted bool   // accepted the SDK terms: may be granted relationships.read (rule AU-3)
	RedirectURIs     []string
	WebhookURL       string
	ClientSecretHash []byte
	BotTokenHash     []byte
	BotUserID        uint64
	WebhookKey       []byte // Ed25519 seed that signs this app's webhooks
	CreatedAt        time.Time
	// Flags are the application's flags, every bit (rule APP-1); at most MaxApplicationFlags.
	Flags uint64
	// ChannelObfuscation is the bot setting that opts the app's bot into channel obfuscation on
	// the gateway, as the Identify capability does (rule GW-1).
	ChannelObfuscation bool
}

// MaxApplicationFlags bounds Application.Flags: the store keeps them in a signed 64-bit integer.
const MaxApplicationFlags = 1<<63 - 1

// User is a full account, a provisional account, or an application's bot user.
type User struct {
	ID           uint64
	Username     string
	GlobalName   string // "" = null
	PasswordHash []byte // nil: cannot log in with a password
	Bot          bool
	Provisional  bool
	// ProvisionalAppID is the application a provisional account belongs to.
	ProvisionalAppID uint64
	PremiumType      int
	// BanPermanent or BannedUntil after now: the account is banned (rule ST-1).
	BanPermanent bool
	BannedUntil  time.Time
	// RestrictedBy is set on the cross-platform-restricted provisional account a ban creates: the
	// banned user. Merges from it fail with 530017 while that ban lasts.
	RestrictedBy uint64
	CreatedAt    time.Time
	// PrimaryGuild is the guild whose tag the user shows (rule USR-2); nil when none. Only
	// SetPrimaryGuild and PutGuildTag change it (UpdateUser does not).
	PrimaryGuild *PrimaryGuild
}

// Banned tells whether the user is banned at now.
func (u *User) Banned(now time.Time) bool {
	return u.BanPermanent || (!u.BannedUntil.IsZero() && now.Before(u.BannedUntil))
}

// Identity links an external identity (a type and an id at that provider) of one application to
// a user. ProvisionalUserID is the provisional account that owns the identity when it is not
// merged; an unmerge gives the identity back to it.
type Identity struct {
	AppID             uint64
	Type              string // external auth type, or "BOT" for the bot-token endpoint
	ExternalID        string
	UserID            uint64
	ProvisionalUserID uint64
	CreatedAt         time.Time
}

// Authorization is a user's grant to an application: the scopes, and the tokens issued under it.
// A child authorization (rule AU-4) has a parent and dies with it.
type Authorization struct {
	ID              uint64
	AppID           uint64
	UserID          uint64
	Scopes          []string
	IntegrationType int // -1 when not given (rule AA-6)
	ParentID        uint64
	CreatedAt       time.Time
}

// Token kinds.
const (
	AccessToken  = "access"
	RefreshToken = "refresh"
)

// Token is an issued access or refresh token. A token carries its row's id, by which it is
// found, and a secret, of which only the SHA-256 (Hash) is stored and compared (package token).
// Tokens issued before ids were carried (Legacy) are found by the hash of the whole token.
type Token struct {
	// ID is the row's id: a snowflake, so that new rows go to the end of the table's key; a
	// legacy token's id was given to it by the migration that introduced ids.
	ID uint64
	// Hash is the SHA-256 of the token's secret, or of the whole token for a legacy token.
	Hash []byte
	// Legacy marks a token issued before tokens carried their id: it is found by Hash alone
	// (GetLegacyToken) until it expires.
	Legacy bool
	// Signed marks a signed access token (a client_credentials token, server/token): it has no
	// row, its claims are its own and are checked against its authorization; Hash is nil.
	Signed          bool
	Kind            string
	AuthorizationID uint64
	AppID           uint64
	UserID          uint64
	Scopes          []string
	ExpiresAt       time.Time
	CreatedAt       time.Time
	// GrantID is the grant the token belongs to (0 for tokens issued outside a grant, such as
	// client credentials and child tokens).
	GrantID uint64
	// UsedAt is when a refresh token was rotated; a used refresh token is kept until it expires
	// so that its reuse is recognised.
	UsedAt time.Time
}

// Grant is the family of tokens issued from one authorization code or device approval and
// from their refresh tokens' rotations (RFC 9700 4.14.2). A revoked grant issues nothing more.
type Grant struct {
	ID        uint64
	AppID     uint64
	UserID    uint64
	CreatedAt time.Time
	RevokedAt time.Time // zero while live
}

// AuthCode is an authorization code, stored by hash.
type AuthCode struct {
	Hash            []byte
	AppID           uint64
	UserID          uint64
	RedirectURI     string
	Scopes          []string
	CodeChallenge   string
	Nonce           string
	IntegrationType int
	ExpiresAt       time.Time
	Used            bool
	// GrantID is the grant opened by the code's first redemption (0 before it).
	GrantID uint64
}

// Device code states.
const (
	DevicePending  = "pending"
	DeviceApproved = "approved"
	DeviceDenied   = "denied"
	DeviceConsumed = "consumed"
)

// DeviceCode is a pending device authorization (RFC 8628).
type DeviceCode struct {
	Hash          []byte
	UserCode      string
	AppID         uint64
	Scopes        []string
	GrantedScopes []string
	Status        string
	UserID        uint64
	Interval      int // seconds
	LastPollAt    time.Time
	ExpiresAt     time.Time
	CreatedAt     time.Time
}

// Session is a logged-in browser of the consent page.
type Session struct {
	Hash      []byte
	UserID    uint64
	ExpiresAt time.Time
}

// Webhook delivery states.
const (
	WebhookPending   = "pending"
	WebhookDelivered = "delivered"
	WebhookFailed    = "failed"
)

// WebhookDelivery is one queued outgoing webhook event.
type WebhookDelivery struct {
	ID            uint64
	AppID         uint64
	EventType     string
	Body          []byte
	State         string
	Attempts      int
	NextAttemptAt time.Time
	LastError     string
	CreatedAt     time.Time
	DeliveredAt   time.Time
}

// OIDCConfig is an application's validated OIDC issuer (rule AU-9).
type OIDCConfig struct {
	AppID     uint64
	Issuer    string
	ClientID  string
	JWKSURI   string
	JWKS      []byte
	UpdatedAt time.Time
}

// Store is the service's storage.
type Store interface {
	// WithTx runs fn in one transaction: all its writes or none. Inside fn use only the given
	// Store. Nested calls join the outer transaction.
	WithTx(ctx context.Context, fn func(Store) error) error
	// MaxID returns the largest id stored in any table, so that new ids stay above it.
	MaxID(ctx context.Context) (uint64, error)
	// Ping reports whether the database answers a query: the health and readiness probes'
	// check, which reads no table.
	Ping(ctx context.Context) error
	// CacheEpoch changes whenever a user, an application or a token's validity changes: a
	// service may keep such rows in memory while the epoch it read them at is current.
	CacheEpoch() uint64
	// TokenKey returns the key of the service's signed access tokens, the same for every store
	// of one database (it is kept in the database); never to be logged.
	TokenKey() []byte
	Close() error

	CreateApplication(ctx context.Context, a *Application) error
	UpdateApplication(ctx context.Context, a *Application) error
	GetApplication(ctx context.Context, id uint64) (*Application, error)
	GetApplicationByBotToken(ctx context.Context, hash []byte) (*Application, error)

	CreateUser(ctx context.Context, u *User) error // ErrConflict when the username is taken
	UpdateUser(ctx context.Context, u *User) error
	GetUser(ctx context.Context, id uint64) (*User, error)
	GetUserByUsername(ctx context.Context, username string) (*User, error)

	GetIdentity(ctx context.Context, appID uint64, typ, externalID string) (*Identity, error)
	PutIdentity(ctx context.Context, i *Identity) error // insert or replace
	ListIdentitiesByUser(ctx context.Context, userID uint64) ([]Identity, error)

	// PutAuthorization inserts a, or when a top-level authorization of the same app and user
	// exists, replaces its scopes and integration type; a.ID is set either way.
	PutAuthorization(ctx context.Context, a *Authorization) error
	GetAuthorization(ctx context.Context, id uint64) (*Authorization, error)
	FindAuthorization(ctx context.Context, appID, userID uint64) (*Authorization, error)
	ListAuthorizationsByUser(ctx context.Context, userID uint64) ([]Authorization, error)
	ListChildAuthorizations(ctx context.Context, parentID uint64) ([]Authorization, error)
	// DeleteAuthorization deletes the authorization and every token issued under it.
	DeleteAuthorization(ctx context.Context, id uint64) error

	// InsertToken inserts t under its id; a taken id (or a legacy token's taken hash) fails.
	InsertToken(ctx context.Context, t *Token) error
	// GetToken returns the token of row id; the caller compares its secret's hash.
	GetToken(ctx context.Context, id uint64) (*Token, error)
	// GetLegacyToken returns the legacy token (issued before tokens carried their id) whose
	// whole token hashes to hash.
	GetLegacyToken(ctx context.Context, hash []byte) (*Token, error)
	// DeleteToken deletes one token; it returns ErrNotFound when there was none.
	DeleteToken(ctx context.Context, id uint64) error
	// UseToken marks an unused token used at at; it returns ErrNotFound when there is no such
	// token or it was used already (so that two racing refreshes cannot both use one refresh
	// token).
	UseToken(ctx context.Context, id uint64, at time.Time) error

	// GetGrant returns a grant, revoked or not.
	GetGrant(ctx context.Context, id uint64) (*Grant, error)
	// RevokeGrant marks the grant revoked at at (keeping the first time) and deletes every
	// token issued under it; it returns the grant, ErrNotFound when there is none.
	RevokeGrant(ctx context.Context, id uint64, at time.Time) (*Grant, error)

	InsertAuthCode(ctx context.Context, c *AuthCode) error
	// UseAuthCode marks the code used and returns it with Used as it was before; an already
	// used code is returned with Used true and stays used. The first use opens grant (its ID
	// and CreatedAt; AppID and UserID are the code's) and records it on the code, and every
	// use returns the code with that GrantID, so that a replay can revoke what the first use
	// issued.
	UseAuthCode(ctx context.Context, hash []byte, grant Grant) (*AuthCode, error)
	// CreateGrant records a new live grant.
	CreateGrant(ctx context.Context, g *Grant) error

	InsertDeviceCode(ctx context.Context, d *DeviceCode) error // ErrConflict on a taken user code
	GetDeviceCode(ctx context.Context, hash []byte) (*DeviceCode, error)
	GetDeviceCodeByUserCode(ctx context.Context, userCode string) (*DeviceCode, error)
	// UpdateDeviceCode stores d over the device code whose status is still from, in one
	// conditional statement: ErrConflict when its status is no longer from (another node
	// answered, or consumed, it first).
	UpdateDeviceCode(ctx context.Context, d *DeviceCode, from string) error

	InsertSession(ctx context.Context, s *Session) error
	GetSession(ctx context.Context, hash []byte) (*Session, error)
	DeleteSessionsOfUser(ctx context.Context, userID uint64) error

	EnqueueWebhook(ctx context.Context, d *WebhookDelivery) error
	// DueWebhooks claims and returns up to limit pending deliveries due at or before now, oldest
	// first. Where several nodes share the database (PostgreSQL) a claimed delivery is kept from
	// the others until UpdateWebhook records its attempt or the claim lease (from now) ends, so
	// each delivery is attempted by one node at a time.
	DueWebhooks(ctx context.Context, now time.Time, limit int) ([]WebhookDelivery, error)
	// NextWebhookDue returns the earliest time a pending delivery is due and unclaimed; ok is
	// false when none is pending.
	NextWebhookDue(ctx context.Context) (t time.Time, ok bool, err error)
	UpdateWebhook(ctx context.Context, d *WebhookDelivery) error
	GetWebhook(ctx context.Context, id uint64) (*WebhookDelivery, error)

	PutOIDCConfig(ctx context.Context, c *OIDCConfig) error
	GetOIDCConfig(ctx context.Context, appID uint64) (*OIDCConfig, error)

	// GetSetting and PutSetting keep small named values (signing keys, dev credentials).
	GetSetting(ctx context.Context, key string) ([]byte, error)
	PutSetting(ctx context.Context, key string, value []byte) error
	// InitSetting stores value under key unless the key has a value, and returns the value the
	// store keeps: the first of every node and restart to store one wins, and all read it (a
	// key made on first use: GetSetting then PutSetting could leave two nodes with two).
	InitSetting(ctx context.Context, key string, value []byte) ([]byte, error)

	UsersAppsStore
	VoiceStatusStore

	LobbyStore
	DMStore
	GuildStore
	GuildBotStore
	GuildPinStore
	GuildSearchStore
	CommandStore
	GuildInviteStore
	GuildAttachmentStore
	GuildPageStore
	ChannelSettingsStore
	GuildExpressionStore
	GuildActivityStore
	RelationshipStore
	OperatorStore
	SharedStateStore
	InteractionStore
	NodeStore
	OutboxStore
}
