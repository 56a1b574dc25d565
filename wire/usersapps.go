package wire

import (
	"encoding/json"
	"net/http"
	"strconv"
	"time"
)

// Guild tag length in characters (rule LIM-5).
const (
	MinGuildTagChars = 1
	MaxGuildTagChars = 4
)

// PrimaryGuild is a user's primary_guild: the guild whose tag the user shows (rule USR-2). Every
// field may be null: IdentityEnabled is null when the service cleared the identity (the guild
// no longer has a tag), Tag and Badge are null then.
type PrimaryGuild struct {
	IdentityGuildID *Snowflake `json:"identity_guild_id"`
	IdentityEnabled *bool      `json:"identity_enabled"`
	Tag             *string    `json:"tag"` // 1 to 4 characters (rule LIM-5)
	Badge           *string    `json:"badge"`
}

// GuildTagRequest is the body of the dev route PUT /dev/guilds/{guild_id}/tag: a tag of 1 to 4
// characters (rule LIM-5), or null to remove it, and an optional badge hash.
type GuildTagRequest struct {
	Tag   *string `json:"tag"`
	Badge *string `json:"badge,omitempty"`
}

// PrimaryGuildRequest is the body of the dev route PUT /dev/users/{user_id}/primary-guild: the
// guild whose tag the user shows (null clears it) and whether the user shows it.
type PrimaryGuildRequest struct {
	IdentityGuildID *Snowflake `json:"identity_guild_id"`
	IdentityEnabled *bool      `json:"identity_enabled"`
}

// Connection is an entry of GET /users/@me/connections: the user's account on another service.
type Connection struct {
	ID           string     `json:"id"`
	Name         string     `json:"name"`
	Type         string     `json:"type"`
	Revoked      bool       `json:"revoked"`
	Integrations []struct{} `json:"integrations"`
	Verified     bool       `json:"verified"`
	FriendSync   bool       `json:"friend_sync"`
	ShowActivity bool       `json:"show_activity"`
	TwoWayLink   bool       `json:"two_way_link"`
	Visibility   int        `json:"visibility"` // 0 only the user, 1 everyone
}

// ConnectionRequest is the body of the dev route POST /dev/users/{user_id}/connections, which
// adds a connection made now by the service's clock.
type ConnectionRequest struct {
	Type       string `json:"type"`
	ID         string `json:"id"`
	Name       string `json:"name"`
	Verified   bool   `json:"verified"`
	Visibility int    `json:"visibility"`
}

// Connection services (the platform's type strings) the service accepts.
var ConnectionTypes = []string{"amazon-music", "battlenet", "bluesky", "bungie", "crunchyroll", "domain",
	"ebay", "epicgames", "facebook", "github", "instagram", "leagueoflegends", "mastodon", "paypal",
	"playstation", "reddit", "riotgames", "roblox", "spotify", "skype", "steam", "tiktok", "twitch",
	"twitter", "xbox", "youtube"}

// The two game-platform providers whose connections GET /users/@me/connections stops returning
// (rule CON-1; SPEC 4.1 and 9 name neither, the service takes these two): connections of either
// made from ConnectionsNewHiddenFrom on are never returned; older (legacy) ones are returned
// until the provider's date.
const (
	ConnectionProviderLegacyFirst = "xbox"        // legacy connections hidden from Jul 10, 2026
	ConnectionProviderSecond      = "playstation" // existing connections hidden from Sep 22, 2026
)

// Dates of rule CON-1 (UTC).
var (
	// ConnectionsNewHiddenFrom is when connections of the two providers stop being returned as
	// they are made; SPEC 4.1 states the rule without a date, the service takes Jan 1, 2026.
	ConnectionsNewHiddenFrom = time.Date(2026, time.January, 1, 0, 0, 0, 0, time.UTC)
	// ConnectionsLegacyFirstHiddenFrom: legacy connections of the first provider (SPEC 9).
	ConnectionsLegacyFirstHiddenFrom = time.Date(2026, time.July, 10, 0, 0, 0, 0, time.UTC)
	// ConnectionsSecondHiddenFrom: existing connections of the second provider (SPEC 9).
	ConnectionsSecondHiddenFrom = time.Date(2026, time.September, 22, 0, 0, 0, 0, time.UTC)
)

// ConnectionVisible tells whether GET /users/@me/connections returns a connection of typ made
// at created, at now (rule CON-1).
func ConnectionVisible(typ string, created, now time.Time) bool {
	var hiddenFrom time.Time
	switch typ {
	case ConnectionProviderLegacyFirst:
		hiddenFrom = ConnectionsLegacyFirstHiddenFrom
	case ConnectionProviderSecond:
		hiddenFrom = ConnectionsSecondHiddenFrom
	default:
		return true
	}
	return created.Before(ConnectionsNewHiddenFrom) && now.Before(hiddenFrom)
}

// Application flags (the platform's bits). Bits above 30 are in flags_new only (rule APP-1).
const (
	AppFlagAutoModerationRuleCreateBadge uint64 = 1 << 6
	AppFlagGatewayPresence               uint64 = 1 << 12
	AppFlagGatewayPresenceLimited        uint64 = 1 << 13
	AppFlagGatewayGuildMembers           uint64 = 1 << 14
	AppFlagGatewayGuildMembersLimited    uint64 = 1 << 15
	AppFlagVerificationPendingGuildLimit uint64 = 1 << 16
	AppFlagEmbedded                      uint64 = 1 << 17
	AppFlagGatewayMessageContent         uint64 = 1 << 18
	AppFlagGatewayMessageContentLimited  uint64 = 1 << 19
	AppFlagApplicationCommandBadge       uint64 = 1 << 23
	// AppFlagsLegacyMask are the bits the 32-bit flags field carries (0 to 30).
	AppFlagsLegacyMask uint64 = 1<<31 - 1
)

// ApplicationFlags returns the flags and flags_new of an application whose flags are all (rule
// APP-1): flags holds bits 0 to 30 as a 32-bit integer, flags_new every bit as a decimal string.
func ApplicationFlags(all uint64) (flags int32, flagsNew string) {
	return int32(all & AppFlagsLegacyMask), strconv.FormatUint(all, 10)
}

// Application is the application object of GET /applications/@me and GET
// /oauth2/applications/@me.
type Application struct {
	ID                  Snowflake `json:"id"`
	Name                string    `json:"name"`
	Icon                *string   `json:"icon"`
	Description         string    `json:"description"`
	Summary             string    `json:"summary"`
	Type                *int      `json:"type"`
	BotPublic           bool      `json:"bot_public"`
	BotRequireCodeGrant bool      `json:"bot_require_code_grant"`
	Bot                 *User     `json:"bot,omitempty"`
	Owner               *User     `json:"owner,omitempty"`
	VerifyKey           string    `json:"verify_key"` // hex Ed25519 key that verifies the app's webhooks
	Team                *struct{} `json:"team"`
	// Flags is a 32-bit integer (bits 0 to 30); FlagsNew every bit as a string (rule APP-1).
	Flags                  int32    `json:"flags"`
	FlagsNew               string   `json:"flags_new"`
	RedirectURIs           []string `json:"redirect_uris,omitempty"`
	InteractionsEndpoint   *string  `json:"interactions_endpoint_url"`
	ApproximateGuildCount  int      `json:"approximate_guild_count"`
	IntegrationTypesConfig struct{} `json:"integration_types_config"`
}

// CurrentAuthorization is the answer of GET /oauth2/@me: the token's application, scopes and
// expiry (RFC 3339), and its user when the token has scope identify.
type CurrentAuthorization struct {
	Application Application `json:"application"`
	Scopes      []string    `json:"scopes"`
	Expires     string      `json:"expires"`
	User        *User       `json:"user,omitempty"`
}

// ApplicationFlagsRequest is the body of the dev route PUT /dev/applications/{id}/flags: the
// flags as a decimal string or a number, every bit (rule APP-1), and the bot setting that opts
// the app's bot into channel obfuscation (rule GW-1).
type ApplicationFlagsRequest struct {
	Flags              json.RawMessage `json:"flags"`
	ChannelObfuscation *bool           `json:"channel_obfuscation,omitempty"`
}

// Subscription statuses (rule ST-3: the values the platform has always returned).
const (
	SubscriptionActive   = 0
	SubscriptionInactive = 1
	SubscriptionEnding   = 2
)

// SubscriptionStatus is the status of a subscription at now (rule ST-3): inactive once its
// period has ended, ending when it was canceled before then, active otherwise.
func SubscriptionStatus(periodEnd, canceledAt, now time.Time) int {
	switch {
	case !now.Before(periodEnd):
		return SubscriptionInactive
	case !canceledAt.IsZero():
		return SubscriptionEnding
	default:
		return SubscriptionActive
	}
}

// SKU types (the platform's).
const (
	SKUDurable           = 2
	SKUConsumable        = 3
	SKUSubscription      = 5
	SKUSubscriptionGroup = 6
)

// Subscription is the subscription object of GET /skus/{sku_id}/subscriptions.
type Subscription struct {
	ID                 Snowflake   `json:"id"`
	UserID             Snowflake   `json:"user_id"`
	SKUIDs             []Snowflake `json:"sku_ids"`
	EntitlementIDs     []Snowflake `json:"entitlement_ids"`
	RenewalSKUIDs      []Snowflake `json:"renewal_sku_ids"`
	CurrentPeriodStart string      `json:"current_period_start"`
	CurrentPeriodEnd   string      `json:"current_period_end"`
	Status             int         `json:"status"` // rule ST-3
	CanceledAt         *string     `json:"canceled_at"`
	Country            string      `json:"country,omitempty"`
}

// SubscriptionRequest is the body of the dev route POST /dev/skus/{sku_id}/subscriptions: a
// subscription of the user starting now by the service's clock for period_seconds.
type SubscriptionRequest struct {
	UserID        Snowflake `json:"user_id"`
	PeriodSeconds int64     `json:"period_seconds"`
	Country       string    `json:"country,omitempty"`
}

// SKURequest is the body of the dev route POST /dev/applications/{id}/skus.
type SKURequest struct {
	Type int    `json:"type"`
	Name string `json:"name"`
}

// SKU is the SKU object.
type SKU struct {
	ID            Snowflake `json:"id"`
	Type          int       `json:"type"`
	ApplicationID Snowflake `json:"application_id"`
	Name          string    `json:"name"`
	Slug          string    `json:"slug"`
	Flags         int       `json:"flags"`
}

// CodeBotsCannotUse is the platform's 20001: a route a bot may not use.
const CodeBotsCannotUse = 20001

// BotsCannotUse is the 403 of a route a bot may not use (Create Guild: rule GLD-5).
func BotsCannotUse() *APIError {
	return &APIError{Status: http.StatusForbidden, Code: CodeBotsCannotUse, Message: "Bots cannot use this endpoint"}
}
