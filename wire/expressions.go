package wire

import (
	"encoding/json"
	"time"
)

// Guild emoji and scheduled events (rules VER-1, ERR-1).
const (
	// PermManageGuildExpressions lets a member edit and delete any emoji or sticker, and (before
	// ExpressionPermissionsFrom, for bots) create them.
	PermManageGuildExpressions uint64 = 1 << 30
	// PermManageEvents lets a member edit and delete any scheduled event, and (before
	// ExpressionPermissionsFrom, for bots) create them.
	PermManageEvents uint64 = 1 << 33
	// PermCreateGuildExpressions lets a member create emoji and stickers and manage its own.
	PermCreateGuildExpressions uint64 = 1 << 43
	// PermCreateEvents lets a member create scheduled events and manage its own.
	PermCreateEvents uint64 = 1 << 44

	// MaxEmojiImageBytes is the largest decoded emoji image.
	MaxEmojiImageBytes = 256 << 10

	// Scheduled event privacy level, statuses and entity types (the platform's values).
	EventPrivacyGuildOnly    = 2
	EventStatusScheduled     = 1
	EventEntityStageInstance = 1
	EventEntityVoice         = 2
	EventEntityExternal      = 3
	// MaxEventNameChars and MaxEventDescriptionChars bound an event's name and description.
	MaxEventNameChars        = 100
	MaxEventDescriptionChars = 1000
	// MaxEventLocationChars bounds entity_metadata.location.
	MaxEventLocationChars = 100
)

// ExpressionPermissionsFrom is when bots start to need CREATE_GUILD_EXPRESSIONS to create emoji
// and CREATE_EVENTS to create scheduled events (rules VER-1, ERR-1).
var ExpressionPermissionsFrom = time.Date(2026, time.February, 23, 0, 0, 0, 0, time.UTC)

// Emoji is a guild's custom emoji.
type Emoji struct {
	ID            Snowflake `json:"id"`
	Name          string    `json:"name"`
	Roles         []string  `json:"roles"`
	User          *User     `json:"user,omitempty"`
	RequireColons bool      `json:"require_colons"`
	Managed       bool      `json:"managed"`
	Animated      bool      `json:"animated"`
	Available     bool      `json:"available"`
}

// CreateEmoji is the body of POST /guilds/{guild_id}/emojis: image is a data URI.
type CreateEmoji struct {
	Name  json.RawMessage `json:"name"`
	Image json.RawMessage `json:"image"`
}

// EventMetadata is a scheduled event's entity_metadata.
type EventMetadata struct {
	Location string `json:"location,omitempty"`
}

// ScheduledEvent is a guild scheduled event.
type ScheduledEvent struct {
	ID                 Snowflake      `json:"id"`
	GuildID            Snowflake      `json:"guild_id"`
	ChannelID          *Snowflake     `json:"channel_id"`
	CreatorID          Snowflake      `json:"creator_id"`
	Name               string         `json:"name"`
	Description        *string        `json:"description"`
	ScheduledStartTime string         `json:"scheduled_start_time"`
	ScheduledEndTime   *string        `json:"scheduled_end_time"`
	PrivacyLevel       int            `json:"privacy_level"`
	Status             int            `json:"status"`
	EntityType         int            `json:"entity_type"`
	EntityID           *Snowflake     `json:"entity_id"`
	EntityMetadata     *EventMetadata `json:"entity_metadata"`
	Creator            *User          `json:"creator,omitempty"`
}

// CreateScheduledEvent is the body of POST /guilds/{guild_id}/scheduled-events.
type CreateScheduledEvent struct {
	ChannelID          json.RawMessage `json:"channel_id"`
	EntityMetadata     json.RawMessage `json:"entity_metadata"`
	Name               json.RawMessage `json:"name"`
	PrivacyLevel       json.RawMessage `json:"privacy_level"`
	ScheduledStartTime json.RawMessage `json:"scheduled_start_time"`
	ScheduledEndTime   json.RawMessage `json:"scheduled_end_time"`
	Description        json.RawMessage `json:"description"`
	EntityType         json.RawMessage `json:"entity_type"`
}
