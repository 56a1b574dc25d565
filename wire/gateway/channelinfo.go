package gateway

import "sdkpp/wire"

// OpRequestChannelInfo is client → server: d is a RequestChannelInfo; the service answers with
// an EventChannelInfo dispatch (rule GW-3).
const OpRequestChannelInfo = 43

// CapabilityChannelObfuscation is the Identify capabilities bit that opts a bot into channel
// obfuscation (rule GW-1), as the application's bot setting does.
const CapabilityChannelObfuscation = 1 << 15

// Events of voice channel status (rules GW-3, GW-4).
const (
	EventChannelInfo                 = "CHANNEL_INFO"
	EventVoiceChannelStatusUpdate    = "VOICE_CHANNEL_STATUS_UPDATE"
	EventVoiceChannelStartTimeUpdate = "VOICE_CHANNEL_START_TIME_UPDATE"
)

// Fields RequestChannelInfo may ask for.
const (
	ChannelInfoFieldStatus    = "status"
	ChannelInfoFieldStartTime = "voice_start_time"
)

// RequestChannelInfo is the d of op 43: the guild and the fields wanted (status,
// voice_start_time).
type RequestChannelInfo struct {
	GuildID wire.Snowflake `json:"guild_id"`
	Fields  []string       `json:"fields"`
}

// ChannelInfo is the d of CHANNEL_INFO: the requested fields of the guild's channels.
type ChannelInfo struct {
	GuildID  wire.Snowflake     `json:"guild_id"`
	Channels []ChannelInfoEntry `json:"channels"`
}

// ChannelInfoEntry is one channel of ChannelInfo; a field not requested is absent.
type ChannelInfoEntry struct {
	ID             wire.Snowflake `json:"id"`
	Status         *string        `json:"status,omitempty"`
	VoiceStartTime *int64         `json:"voice_start_time,omitempty"` // Unix seconds
}

// VoiceChannelStatusUpdate is the d of VOICE_CHANNEL_STATUS_UPDATE (rule GW-4); Status is null
// when it was cleared.
type VoiceChannelStatusUpdate struct {
	ID      wire.Snowflake `json:"id"`
	GuildID wire.Snowflake `json:"guild_id"`
	Status  *string        `json:"status"`
}

// VoiceChannelStartTimeUpdate is the d of VOICE_CHANNEL_START_TIME_UPDATE (rule GW-4); the time
// is null when the channel's voice session ended.
type VoiceChannelStartTimeUpdate struct {
	ID             wire.Snowflake `json:"id"`
	GuildID        wire.Snowflake `json:"guild_id"`
	VoiceStartTime *int64         `json:"voice_start_time"` // Unix seconds
}
