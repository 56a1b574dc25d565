package wire

import "net/http"

// JSON error codes of guilds, channels and invites (the platform's).
const (
	CodeUnknownChannel = 10003
	CodeUnknownGuild   = 10004
	CodeUnknownInvite  = 10006
	CodeUnknownMember  = 10007
)

// Channel types (the platform's values; rule GCH-1).
const (
	ChannelGuildText          = 0
	ChannelDM                 = 1
	ChannelGuildVoice         = 2
	ChannelGroupDM            = 3
	ChannelGuildCategory      = 4
	ChannelGuildNews          = 5
	ChannelGuildStore         = 6
	ChannelGuildNewsThread    = 10
	ChannelGuildPublicThread  = 11
	ChannelGuildPrivateThread = 12
	ChannelGuildStageVoice    = 13
	ChannelGuildDirectory     = 14
	ChannelGuildForum         = 15
	ChannelGuildMedia         = 16
	ChannelLobby              = 17
	ChannelEphemeralDM        = 18
)

// UnknownGuild is the 404 of a guild that does not exist.
func UnknownGuild() *APIError {
	return &APIError{Status: http.StatusNotFound, Code: CodeUnknownGuild, Message: "Unknown Guild"}
}

// UnknownChannel is the 404 of a channel that does not exist (or the caller may not see).
func UnknownChannel() *APIError {
	return &APIError{Status: http.StatusNotFound, Code: CodeUnknownChannel, Message: "Unknown Channel"}
}

// UnknownInvite is the 404 of an invite (a guild invite or an activity invite) that does not
// exist, is used up, has expired or is not the caller's.
func UnknownInvite() *APIError {
	return &APIError{Status: http.StatusNotFound, Code: CodeUnknownInvite, Message: "Unknown Invite"}
}

// UnknownMember is the 404 of a user who is not a member.
func UnknownMember() *APIError {
	return &APIError{Status: http.StatusNotFound, Code: CodeUnknownMember, Message: "Unknown Member"}
}

// PartialGuild is an entry of GET /users/@me/guilds.
type PartialGuild struct {
	ID          Snowflake `json:"id"`
	Name        string    `json:"name"`
	Icon        *string   `json:"icon"`
	Owner       bool      `json:"owner"`
	Permissions string    `json:"permissions"` // string-serialized permission bits (rule PERM-1)
	Features    []string  `json:"features"`
}

// GuildChannel is a channel of GET /guilds/{id}/channels (rule GCH-1): type, position and the
// parent category id, plus, for the SDK's channel-linking UI, whether the caller may link it and
// the lobby it is linked to.
type GuildChannel struct {
	ID       Snowflake  `json:"id"`
	Type     int        `json:"type"`
	GuildID  Snowflake  `json:"guild_id"`
	Name     string     `json:"name"`
	Position int        `json:"position"`
	ParentID *Snowflake `json:"parent_id"`
	// IsLinkable: a text channel the caller may link to a lobby (guild owner or manage channels).
	IsLinkable bool `json:"is_linkable"`
	// IsViewableAndWriteableByAllMembers: no permission overwrite hides it (always, here).
	IsViewableAndWriteableByAllMembers bool         `json:"is_viewable_and_writeable_by_all_members"`
	LinkedLobby                        *LinkedLobby `json:"linked_lobby,omitempty"`
	// Flags are the channel's flags (ChannelFlagObfuscated: rule CH-2).
	Flags int `json:"flags"`
	// ApplicationID is the application that made the channel: null for guild channels (rule CH-1).
	ApplicationID *Snowflake `json:"application_id"`
}

// LinkedLobby is the lobby a channel is linked to.
type LinkedLobby struct {
	ApplicationID Snowflake `json:"application_id"`
	LobbyID       Snowflake `json:"lobby_id"`
}

// LinkedChannel is the linked_channel of a lobby.
type LinkedChannel struct {
	ID      Snowflake `json:"id"`
	Name    string    `json:"name"`
	GuildID Snowflake `json:"guild_id"`
}

// ChannelLinkingRequest is the body of PATCH /lobbies/{id}/channel-linking: a channel id links
// it, null or absent unlinks.
type ChannelLinkingRequest struct {
	ChannelID *Snowflake `json:"channel_id"`
}

// InviteCode is the answer of the lobby channel invite routes (rule LOB-5).
type InviteCode struct {
	Code string `json:"code"`
}

// Invite is the invite object of GET /invites/{code}, with the metadata of Create and Get
// Channel Invites.
type Invite struct {
	Code    string        `json:"code"`
	Type    int           `json:"type"` // 0: a guild invite
	Guild   PartialGuild  `json:"guild"`
	Channel InviteChannel `json:"channel"`
	Inviter *User         `json:"inviter,omitempty"`
	MaxAge  int           `json:"max_age"`  // seconds; 0 never expires
	MaxUses int           `json:"max_uses"` // 0 is unlimited
	Uses    int           `json:"uses"`
	// ExpiresAt is RFC 3339, null for an invite that never expires.
	ExpiresAt *string `json:"expires_at"`
	Temporary bool    `json:"temporary"`
	// CreatedAt is RFC 3339.
	CreatedAt string `json:"created_at,omitempty"`
	// Roles are given to the user who accepts the invite (rules INVT-1, ROLE-2); absent when none.
	Roles []InviteRole   `json:"roles,omitempty"`
	Lobby *InviteLobbyID `json:"lobby,omitempty"`
}

// InviteChannel is the channel of an invite.
type InviteChannel struct {
	ID   Snowflake `json:"id"`
	Name string    `json:"name"`
	Type int       `json:"type"`
}

// InviteLobbyID names the lobby a lobby channel invite was made for.
type InviteLobbyID struct {
	ID Snowflake `json:"id"`
}

// GuildSpec is the body of the dev route POST /dev/guilds.
type GuildSpec struct {
	Name    string             `json:"name"`
	OwnerID Snowflake          `json:"owner_id"`
	Members []GuildMemberSpec  `json:"members,omitempty"`
	Channel []GuildChannelSpec `json:"channels,omitempty"`
	// Roles are made after @everyone (whose permissions Everyone sets, when given); members and
	// overwrites name them by index.
	Roles    []RoleSpec   `json:"roles,omitempty"`
	Everyone *Permissions `json:"everyone_permissions,omitempty"`
	Features []string     `json:"features,omitempty"`
}

// GuildMemberSpec adds a member to a guild (dev routes); Roles are indexes into GuildSpec.Roles.
type GuildMemberSpec struct {
	ID             Snowflake `json:"id"`
	ManageChannels bool      `json:"manage_channels"`
	Roles          []int     `json:"roles,omitempty"`
}

// RoleSpec makes a role (dev routes); Colors are the gradient's secondary and tertiary colors.
type RoleSpec struct {
	Name           string      `json:"name"`
	Color          int         `json:"color"`
	SecondaryColor *int        `json:"secondary_color,omitempty"`
	TertiaryColor  *int        `json:"tertiary_color,omitempty"`
	Permissions    Permissions `json:"permissions"`
	Hoist          bool        `json:"hoist,omitempty"`
}

// OverwriteSpec makes a channel permission overwrite (dev routes) for @everyone, a role of the
// request (by index) or a user.
type OverwriteSpec struct {
	Everyone bool        `json:"everyone,omitempty"`
	Role     *int        `json:"role,omitempty"`
	User     *Snowflake  `json:"user,omitempty"`
	Allow    Permissions `json:"allow"`
	Deny     Permissions `json:"deny"`
}

// GuildChannelSpec makes a channel (dev routes). Parent is the index, in the same request, of
// the category the channel belongs to, or ParentID an existing category's id.
type GuildChannelSpec struct {
	Name     string     `json:"name"`
	Type     int        `json:"type"`
	Position int        `json:"position"`
	ParentID *Snowflake `json:"parent_id,omitempty"`
	Parent   *int       `json:"parent,omitempty"`
	// Overwrites are the channel's permission overwrites.
	Overwrites []OverwriteSpec `json:"overwrites,omitempty"`
}

// DevGuild is the answer of POST /dev/guilds: the guild and its channels in request order.
type DevGuild struct {
	ID       Snowflake      `json:"id"`
	Name     string         `json:"name"`
	OwnerID  Snowflake      `json:"owner_id"`
	Channels []GuildChannel `json:"channels"`
}
