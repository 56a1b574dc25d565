package wire

import "time"

// Channel obfuscation (rules CH-2, CH-3).
const (
	// ChannelFlagObfuscated marks an obfuscated channel (rule CH-2).
	ChannelFlagObfuscated = 1 << 17
	// ObfuscatedChannelName is the name of every obfuscated channel (rule CH-3).
	ObfuscatedChannelName = "___hidden___"
)

// ChannelsOmittedFrom is when GET /guilds/{guild_id}/channels starts omitting the channels the
// caller lacks VIEW_CHANNEL for (rule GCL-1; no earlier opt-in over HTTP).
var ChannelsOmittedFrom = time.Date(2026, time.November, 16, 0, 0, 0, 0, time.UTC)

// Permission bits of voice channel status and the audit log (the platform's values).
const (
	PermViewAuditLog          uint64 = 1 << 7
	PermSetVoiceChannelStatus uint64 = 1 << 48
)

// MaxVoiceStatusChars bounds a voice channel's status (rule VCS-1).
const MaxVoiceStatusChars = 500

// VoiceStatusRequest is the body of PUT /channels/{channel_id}/voice-status: a status of at most
// 500 characters; null or "" clears it.
type VoiceStatusRequest struct {
	Status *string `json:"status"`
}

// Audit log action types of voice channel status (rule AUD-1).
const (
	AuditVoiceChannelStatusUpdate = 192
	AuditVoiceChannelStatusDelete = 193
)

// AuditLogEntry is an entry of GET /guilds/{guild_id}/audit-logs.
type AuditLogEntry struct {
	ID         Snowflake          `json:"id"`
	UserID     *Snowflake         `json:"user_id"`
	TargetID   *string            `json:"target_id"`
	ActionType int                `json:"action_type"`
	Changes    []struct{}         `json:"changes,omitempty"`
	Options    *AuditEntryOptions `json:"options,omitempty"`
	Reason     *string            `json:"reason,omitempty"`
}

// AuditEntryOptions is the optional audit entry info; Status carries the new status of a
// VOICE_CHANNEL_STATUS_UPDATE entry (rule AUD-1), ChannelID the channel.
type AuditEntryOptions struct {
	ChannelID *Snowflake `json:"channel_id,omitempty"`
	Status    *string    `json:"status,omitempty"`
}

// AuditLog is the answer of GET /guilds/{guild_id}/audit-logs.
type AuditLog struct {
	ApplicationCommands  []struct{}      `json:"application_commands"`
	AuditLogEntries      []AuditLogEntry `json:"audit_log_entries"`
	AutoModerationRules  []struct{}      `json:"auto_moderation_rules"`
	GuildScheduledEvents []struct{}      `json:"guild_scheduled_events"`
	Integrations         []struct{}      `json:"integrations"`
	Threads              []struct{}      `json:"threads"`
	Users                []User          `json:"users"`
	Webhooks             []struct{}      `json:"webhooks"`
}
