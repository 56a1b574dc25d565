package wire

import (
	"encoding/json"
	"strconv"
)

// Permissions is a permission bit field, serialized as a decimal string (rule PERM-1): the
// platform's fields are wider than a JSON number holds exactly.
type Permissions uint64

// MarshalText writes p's decimal digits, which encoding/json writes as a string (sparing the
// check and copy of a MarshalJSON result).
func (p Permissions) MarshalText() ([]byte, error) {
	return strconv.AppendUint(nil, uint64(p), 10), nil
}

// UnmarshalJSON decodes a decimal string (or a number).
func (p *Permissions) UnmarshalJSON(b []byte) error {
	s := string(b)
	if uq, err := strconv.Unquote(s); err == nil {
		s = uq
	}
	v, err := strconv.ParseUint(s, 10, 64)
	if err != nil {
		return err
	}
	*p = Permissions(v)
	return nil
}

// Guild features (the platform's names).
const (
	// FeatureEnhancedRoleColors lets a guild give roles gradient colors (rule ROLE-1).
	FeatureEnhancedRoleColors = "ENHANCED_ROLE_COLORS"
)

// RoleColors are a role's colors (rule ROLE-1): the primary one, and the secondary and tertiary
// of a gradient (null unless the guild has ENHANCED_ROLE_COLORS).
type RoleColors struct {
	PrimaryColor   int  `json:"primary_color"`
	SecondaryColor *int `json:"secondary_color"`
	TertiaryColor  *int `json:"tertiary_color"`
}

// Role is a guild role. Color is deprecated but still sent: it equals Colors.PrimaryColor.
type Role struct {
	ID           Snowflake   `json:"id"`
	Name         string      `json:"name"`
	Color        int         `json:"color"`
	Colors       RoleColors  `json:"colors"`
	Hoist        bool        `json:"hoist"`
	Icon         *string     `json:"icon"`
	UnicodeEmoji *string     `json:"unicode_emoji"`
	Position     int         `json:"position"`
	Permissions  Permissions `json:"permissions"`
	Managed      bool        `json:"managed"`
	Mentionable  bool        `json:"mentionable"`
	Flags        int         `json:"flags"`
}

// Member is a guild member. User is absent where the member rides along with its user (a
// message's member).
type Member struct {
	User         *User       `json:"user,omitempty"`
	Nick         *string     `json:"nick"`
	Avatar       *string     `json:"avatar"`
	Banner       *string     `json:"banner"`
	Bio          string      `json:"bio,omitempty"` // set with Modify Current Member (rule MEM-1)
	Roles        []Snowflake `json:"roles"`
	JoinedAt     string      `json:"joined_at"`
	PremiumSince *string     `json:"premium_since"`
	Deaf         bool        `json:"deaf"`
	Mute         bool        `json:"mute"`
	Flags        int         `json:"flags"`
	Pending      bool        `json:"pending"`
	// GuildID is set on the GUILD_MEMBER_ADD and GUILD_MEMBER_UPDATE dispatches.
	GuildID *Snowflake `json:"guild_id,omitempty"`
}

// Overwrite is a channel's permission overwrite for a role (type 0) or a member (type 1).
type Overwrite struct {
	ID    Snowflake   `json:"id"`
	Type  int         `json:"type"`
	Allow Permissions `json:"allow"`
	Deny  Permissions `json:"deny"`
}

// Channel is the platform's channel object of a guild channel: GET /channels/{id}, the
// channels of GUILD_CREATE.
type Channel struct {
	ID                   Snowflake   `json:"id"`
	Type                 int         `json:"type"`
	GuildID              *Snowflake  `json:"guild_id,omitempty"`
	Name                 string      `json:"name"`
	Position             int         `json:"position"`
	ParentID             *Snowflake  `json:"parent_id"`
	PermissionOverwrites []Overwrite `json:"permission_overwrites"`
	Topic                *string     `json:"topic"`
	NSFW                 bool        `json:"nsfw"`
	LastMessageID        *Snowflake  `json:"last_message_id"`
	RateLimitPerUser     int         `json:"rate_limit_per_user"`
	Flags                int         `json:"flags"`
}

// Guild is the guild object of GET /guilds/{id}. GUILD_CREATE adds the fields of GuildCreate.
type Guild struct {
	ID                          Snowflake  `json:"id"`
	Name                        string     `json:"name"`
	Icon                        *string    `json:"icon"`
	Splash                      *string    `json:"splash"`
	OwnerID                     Snowflake  `json:"owner_id"`
	AFKChannelID                *Snowflake `json:"afk_channel_id"`
	AFKTimeout                  int        `json:"afk_timeout"`
	VerificationLevel           int        `json:"verification_level"`
	DefaultMessageNotifications int        `json:"default_message_notifications"`
	ExplicitContentFilter       int        `json:"explicit_content_filter"`
	Roles                       []Role     `json:"roles"`
	Emojis                      []struct{} `json:"emojis"`
	Stickers                    []struct{} `json:"stickers"`
	Features                    []string   `json:"features"`
	MFALevel                    int        `json:"mfa_level"`
	SystemChannelID             *Snowflake `json:"system_channel_id"`
	PremiumTier                 int        `json:"premium_tier"`
	PreferredLocale             string     `json:"preferred_locale"`
	NSFWLevel                   int        `json:"nsfw_level"`
	// The guild object's other fields, of features the service does not have: always null,
	// 0 or false.
	DiscoverySplash           *string    `json:"discovery_splash"`
	ApplicationID             *Snowflake `json:"application_id"`
	SystemChannelFlags        int        `json:"system_channel_flags"`
	RulesChannelID            *Snowflake `json:"rules_channel_id"`
	VanityURLCode             *string    `json:"vanity_url_code"`
	Description               *string    `json:"description"`
	Banner                    *string    `json:"banner"`
	PublicUpdatesChannelID    *Snowflake `json:"public_updates_channel_id"`
	PremiumProgressBarEnabled bool       `json:"premium_progress_bar_enabled"`
	SafetyAlertsChannelID     *Snowflake `json:"safety_alerts_channel_id"`
	// ApproximateMemberCount is sent by GET /guilds/{id}?with_counts=true.
	ApproximateMemberCount *int `json:"approximate_member_count,omitempty"`
}

// GuildCreate is the d of GUILD_CREATE: the guild with what a bot's cache starts from.
type GuildCreate struct {
	Guild
	JoinedAt    string     `json:"joined_at"`
	Large       bool       `json:"large"`
	Unavailable bool       `json:"unavailable"`
	MemberCount int        `json:"member_count"`
	Members     []Member   `json:"members"`
	Channels    []Channel  `json:"channels"`
	Threads     []struct{} `json:"threads"`
	Presences   []struct{} `json:"presences"`
	// VoiceStates are the guild's voice states (without guild_id and member), for a session with
	// the GUILD_VOICE_STATES intent; empty otherwise.
	VoiceStates []VoiceState `json:"voice_states"`
	// GuildScheduledEvents are the guild's scheduled events; the service has no stage instances
	// or soundboard sounds, always empty.
	GuildScheduledEvents []ScheduledEvent `json:"guild_scheduled_events"`
	StageInstances       []struct{}       `json:"stage_instances"`
	SoundboardSounds     []struct{}       `json:"soundboard_sounds"`
}

// VoiceState is a user's voice state in a guild: the d of a guild's VOICE_STATE_UPDATE (with
// GuildID and Member; ChannelID null when the user left), and an entry of GUILD_CREATE's
// voice_states (without them). The service has no server-side mute, deafen, video, stream or
// stage suppression: those fields are always false, and request_to_speak_timestamp null.
type VoiceState struct {
	GuildID                 *Snowflake `json:"guild_id,omitempty"`
	ChannelID               *Snowflake `json:"channel_id"`
	UserID                  Snowflake  `json:"user_id"`
	Member                  *Member    `json:"member,omitempty"`
	SessionID               string     `json:"session_id"`
	Deaf                    bool       `json:"deaf"`
	Mute                    bool       `json:"mute"`
	SelfDeaf                bool       `json:"self_deaf"`
	SelfMute                bool       `json:"self_mute"`
	SelfVideo               bool       `json:"self_video"`
	Suppress                bool       `json:"suppress"`
	RequestToSpeakTimestamp *string    `json:"request_to_speak_timestamp"`
}

// UnavailableGuild is an entry of READY's guilds for a bot.
type UnavailableGuild struct {
	ID          Snowflake `json:"id"`
	Unavailable bool      `json:"unavailable"`
}

// GuildMessage is a message of a guild text channel, and the d of its MESSAGE_CREATE and
// MESSAGE_UPDATE dispatches (which add ChannelType). A bot session without the MESSAGE_CONTENT
// intent gets those dispatches with content, embeds, attachments and components empty (and its
// snapshots' content), unless the bot wrote the message or is mentioned in it; so do REST reads
// by a bot whose application may not read message content.
type GuildMessage struct {
	ID              Snowflake    `json:"id"`
	Type            int          `json:"type"`
	ChannelID       Snowflake    `json:"channel_id"`
	GuildID         Snowflake    `json:"guild_id"`
	Author          User         `json:"author"`
	Member          *Member      `json:"member,omitempty"` // the author's member, without user
	Content         string       `json:"content"`
	Timestamp       string       `json:"timestamp"`
	EditedTimestamp *string      `json:"edited_timestamp"`
	TTS             bool         `json:"tts"`
	MentionEveryone bool         `json:"mention_everyone"`
	Mentions        []Mention    `json:"mentions"`
	MentionRoles    []string     `json:"mention_roles"`
	Attachments     []Attachment `json:"attachments"`
	Embeds          []struct{}   `json:"embeds"`
	Components      []struct{}   `json:"components"`
	Pinned          bool         `json:"pinned"`
	Flags           int          `json:"flags"`
	Nonce           any          `json:"nonce,omitempty"`
	// ChannelType is the channel's type, on dispatches.
	ChannelType *int `json:"channel_type,omitempty"`
	// MessageReference is the message a reply (Type MessageTypeReply) answers or a forward
	// carries; absent on other messages.
	MessageReference *MessageReference `json:"message_reference,omitempty"`
	// ReferencedMessage is, on a reply only, the message it answers (null once deleted).
	ReferencedMessage ReferencedMessage `json:"referenced_message,omitzero"`
	// MessageSnapshots are a forward's copy of the message it carries (rule FWD-1); a forward
	// has no content of its own and the flag MessageFlagHasSnapshot.
	MessageSnapshots []MessageSnapshot `json:"message_snapshots,omitempty"`
	// ApplicationID and WebhookID (the application's id) are set on an interaction's response
	// or follow-up, with InteractionMetadata, the interaction it answers.
	ApplicationID       *Snowflake           `json:"application_id,omitempty"`
	WebhookID           *Snowflake           `json:"webhook_id,omitempty"`
	InteractionMetadata *InteractionMetadata `json:"interaction_metadata,omitempty"`
}

// Mention is a user a message mentions, with that user's member in the guild.
type Mention struct {
	User
	Member *Member `json:"member,omitempty"`
}

// GuildMessageDelete is the d of MESSAGE_DELETE for a guild channel.
type GuildMessageDelete struct {
	ID        Snowflake `json:"id"`
	ChannelID Snowflake `json:"channel_id"`
	GuildID   Snowflake `json:"guild_id"`
}

// GuildMessageRequest is the body of POST and PATCH /channels/{id}/messages(/{mid}) for a guild
// channel. MessageReference (POST) makes a reply or a forward: it is kept raw, to be read with
// ParseMessageReference, so that a malformed one is a form error naming its field.
type GuildMessageRequest struct {
	Content          *string         `json:"content"`
	Nonce            any             `json:"nonce,omitempty"`
	TTS              bool            `json:"tts,omitempty"`
	MessageReference json.RawMessage `json:"message_reference,omitempty"`
	// Attachments describe the files of a multipart request and, when editing, the existing
	// attachments the message keeps (rule ATT-1); kept raw, read with ParseAttachmentRequests.
	Attachments json.RawMessage `json:"attachments,omitempty"`
	// AllowedMentions says which mentions ping; kept raw, read with ParseAllowedMentions.
	AllowedMentions json.RawMessage `json:"allowed_mentions,omitempty"`
}

// MemberRemove is the d of GUILD_MEMBER_REMOVE.
type MemberRemove struct {
	GuildID Snowflake `json:"guild_id"`
	User    User      `json:"user"`
}

// ModifyCurrentMember is the body of PATCH /guilds/{id}/members/@me (rule MEM-1): each field
// absent keeps its value, null clears it. Avatar and banner are image data URIs.
type ModifyCurrentMember struct {
	Nick   json.RawMessage `json:"nick"`
	Avatar json.RawMessage `json:"avatar"`
	Banner json.RawMessage `json:"banner"`
	Bio    json.RawMessage `json:"bio"`
}

// SessionStartLimit is the session_start_limit of GET /gateway/bot.
type SessionStartLimit struct {
	Total          int   `json:"total"`
	Remaining      int   `json:"remaining"`
	ResetAfter     int64 `json:"reset_after"` // milliseconds
	MaxConcurrency int   `json:"max_concurrency"`
}

// GatewayBot is the answer of GET /gateway/bot.
type GatewayBot struct {
	URL               string            `json:"url"`
	Shards            int               `json:"shards"`
	SessionStartLimit SessionStartLimit `json:"session_start_limit"`
}

// RequestGuildMembers is the d of the gateway's Request Guild Members (op 8). GuildID is
// required; Query (with Limit) or UserIDs selects members; Query "" with Limit 0 asks for all
// of them (rule GW-2).
type RequestGuildMembers struct {
	GuildID   json.RawMessage `json:"guild_id"`
	Query     *string         `json:"query"`
	Limit     *int            `json:"limit"`
	Presences bool            `json:"presences"`
	UserIDs   json.RawMessage `json:"user_ids"`
	Nonce     string          `json:"nonce"`
}

// GuildMembersChunk is the d of GUILD_MEMBERS_CHUNK.
type GuildMembersChunk struct {
	GuildID    Snowflake   `json:"guild_id"`
	Members    []Member    `json:"members"`
	ChunkIndex int         `json:"chunk_index"`
	ChunkCount int         `json:"chunk_count"`
	NotFound   []Snowflake `json:"not_found,omitempty"`
	Presences  []struct{}  `json:"presences,omitempty"`
	Nonce      string      `json:"nonce,omitempty"`
}

// RateLimitedEvent is the d of the gateway's RATE_LIMITED dispatch (rule GW-2).
type RateLimitedEvent struct {
	Opcode     int             `json:"opcode"`
	RetryAfter float64         `json:"retry_after"` // seconds
	Meta       RateLimitedMeta `json:"meta"`
}

// RateLimitedMeta says which request was limited.
type RateLimitedMeta struct {
	GuildID Snowflake `json:"guild_id"`
	Nonce   string    `json:"nonce,omitempty"`
}
