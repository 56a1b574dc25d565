package wire

import (
	"encoding/json"
	"time"
)

// Slowmode of guild channels (rules VER-1, VER-3).
const (
	// PermBypassSlowmode lets a member send messages in a slowmode channel without waiting (rule
	// VER-1), split from MANAGE_MESSAGES, MANAGE_CHANNELS and MANAGE_THREADS.
	PermBypassSlowmode uint64 = 1 << 52
	// MaxRateLimitPerUser is the largest slowmode interval, in seconds.
	MaxRateLimitPerUser = 21600
	// MaxTopicChars is the longest topic of a text channel.
	MaxTopicChars = 1024
	// CodeSlowmodeRateLimited refuses a message sent within the slowmode interval (429).
	CodeSlowmodeRateLimited = 20016
)

// BypassSlowmodeFrom is when bypassing slowmode starts to need BYPASS_SLOWMODE instead of
// MANAGE_MESSAGES, MANAGE_CHANNELS or MANAGE_THREADS (rule VER-1).
var BypassSlowmodeFrom = time.Date(2026, time.February, 23, 0, 0, 0, 0, time.UTC)

// ModifyChannel is the body of PATCH /channels/{channel_id} for a guild channel: each field
// present is changed.
type ModifyChannel struct {
	Name             json.RawMessage `json:"name,omitempty"`
	Topic            json.RawMessage `json:"topic,omitempty"`
	RateLimitPerUser json.RawMessage `json:"rate_limit_per_user,omitempty"`
}

// SlowmodeRateLimited is the 429 body of a message sent within the channel's slowmode interval:
// RetryAfter is the seconds left until the sender may send again.
type SlowmodeRateLimited struct {
	Message    string  `json:"message"`
	Code       int     `json:"code"`
	RetryAfter float64 `json:"retry_after"`
	Global     bool    `json:"global"`
}
