package wire

import "time"

// Pinned messages (rules PIN-1, VER-1, ERR-1).
const (
	// PermPinMessages lets a member pin and unpin messages (rule VER-1), split from
	// MANAGE_MESSAGES.
	PermPinMessages uint64 = 1 << 51
	// MaxPins is how many messages a channel may have pinned; one more is CodeMaxPins.
	MaxPins = 250
	// MaxPinsPage is the largest limit of Get Channel Pins, and its default.
	MaxPinsPage = 50
	// CodeMaxPins refuses a pin beyond MaxPins.
	CodeMaxPins = 30003
)

// PinPermissionFrom is when pinning starts to need PIN_MESSAGES instead of MANAGE_MESSAGES
// (rules VER-1 and ERR-1).
var PinPermissionFrom = time.Date(2026, time.February, 23, 0, 0, 0, 0, time.UTC)

// ChannelPinOf is an item of Get Channel Pins: a pinned message (of type M: a guild's or a DM's)
// and when it was pinned.
type ChannelPinOf[M any] struct {
	PinnedAt string `json:"pinned_at"`
	Message  M      `json:"message"`
}

// ChannelPinsOf is the answer of GET /channels/{channel_id}/messages/pins: the most recently
// pinned first, and whether pins older than the last item remain.
type ChannelPinsOf[M any] struct {
	Items   []ChannelPinOf[M] `json:"items"`
	HasMore bool              `json:"has_more"`
}

// ChannelPin and ChannelPins are those of a guild channel.
type (
	ChannelPin  = ChannelPinOf[GuildMessage]
	ChannelPins = ChannelPinsOf[GuildMessage]
)

// ChannelPinsUpdate is the d of CHANNEL_PINS_UPDATE: LastPinTimestamp is when the channel's most
// recent remaining pin was made, null when none is left.
type ChannelPinsUpdate struct {
	GuildID          Snowflake `json:"guild_id,omitempty"` // absent in a DM channel
	ChannelID        Snowflake `json:"channel_id"`
	LastPinTimestamp *string   `json:"last_pin_timestamp"`
}
