package gateway

import (
	"encoding/json"
	"strconv"

	"sdkpp/server/wire"
)

// APIVersion is the gateway version the hub speaks; a connection URL with another ?v= is closed
// with CloseInvalidAPIVersion.
const APIVersion = 10

// Opcodes of the gateway payload's "op" field.
const (
	OpDispatch       = 0  // server → client: an event, with s and t
	OpHeartbeat      = 1  // client → server: d is the last sequence number received, or null
	OpIdentify       = 2  // client → server: start a new session
	OpPresenceUpdate = 3  // client → server: update the user's presence
	OpResume         = 6  // client → server: resume a dropped session
	OpReconnect      = 7  // server → client: reconnect and resume
	OpInvalidSession = 9  // server → client: d is false; identify again
	OpHello          = 10 // server → client: first payload, d is {heartbeat_interval}
	OpHeartbeatACK   = 11 // server → client: answer to OpHeartbeat
)

// Close codes the hub sends, with the platform's meanings. IsFinal tells which ones a client must
// not reconnect after.
const (
	CloseUnknownError         = 4000 // internal error, or the connection fell too far behind; reconnect
	CloseUnknownOpcode        = 4001 // an opcode the server does not accept from clients
	CloseDecodeError          = 4002 // malformed JSON, wrong field types, oversized or binary frame, unsupported encoding
	CloseNotAuthenticated     = 4003 // a payload other than Heartbeat, Identify or Resume before Identify
	CloseAuthenticationFailed = 4004 // bad or expired token, missing scope, or sessions ended by EndSessions (final)
	CloseAlreadyAuthenticated = 4005 // a second Identify or Resume on an authenticated connection
	CloseInvalidSeq           = 4007 // Resume with a seq the session never reached
	CloseRateLimited          = 4008 // more than Config.RateLimit payloads in Config.RateWindow
	CloseSessionTimedOut      = 4009 // no heartbeat within 1.5 heartbeat intervals
	CloseInvalidShard         = 4010 // Identify with a shard that is not [id, count], 0 <= id < count (final)
	CloseShardingRequired     = 4011 // never sent: user sessions need no sharding (final)
	CloseInvalidAPIVersion    = 4012 // ?v= other than 10 (final)
	CloseInvalidIntents       = 4013 // intents missing, negative or with undefined bits (final)
	CloseDisallowedIntents    = 4014 // intents refused by Config.AllowIntents (final)
)

// CloseServiceRestart (1012, the WebSocket standard's Service Restart) follows an OpReconnect when
// the hub shuts down.
const CloseServiceRestart = 1012

// IsFinal tells whether a close code means "do not reconnect": 4004 and 4010 to 4014.
func IsFinal(code int) bool {
	return code == CloseAuthenticationFailed || (code >= CloseInvalidShard && code <= CloseDisallowedIntents)
}

// KnownIntents is the set of intent bits the platform defines (GUILDS 1<<0 through
// GUILD_SCHEDULED_EVENTS 1<<16, AUTO_MODERATION_CONFIGURATION 1<<20, AUTO_MODERATION_EXECUTION
// 1<<21, GUILD_MESSAGE_POLLS 1<<24, DIRECT_MESSAGE_POLLS 1<<25). An Identify with any other bit
// is closed with CloseInvalidIntents.
const KnownIntents uint64 = 1<<17 - 1 | 1<<20 | 1<<21 | 1<<24 | 1<<25

// Privileged intents: GUILD_MEMBERS, GUILD_PRESENCES and MESSAGE_CONTENT. Config.AllowIntents
// decides whether an application may use them.
const (
	IntentGuildMembers   uint64 = 1 << 1
	IntentGuildPresences uint64 = 1 << 8
	IntentMessageContent uint64 = 1 << 15
)

// Event names the hub dispatches itself.
const (
	EventReady   = "READY"
	EventResumed = "RESUMED"
)

// Payload is the envelope of every gateway message: {op, d, s, t}. S and T are set on dispatches
// only (null otherwise).
type Payload struct {
	Op int             `json:"op"`
	D  json.RawMessage `json:"d"`
	S  *int64          `json:"s"`
	T  *string         `json:"t"`
}

// Hello is the d of OpHello.
type Hello struct {
	HeartbeatInterval int64 `json:"heartbeat_interval"` // milliseconds
}

// Identify is the d of OpIdentify.
type Identify struct {
	// Token is the user's OAuth2 access token, with or without a "Bearer " prefix.
	Token string `json:"token"`
	// Properties is the connection properties object ({os, browser, device}); kept as sent.
	Properties json.RawMessage `json:"properties,omitempty"`
	// Intents is required: a bit set within KnownIntents.
	Intents *int64 `json:"intents"`
	// Capabilities is an optional bit set; 1<<15 opts into channel obfuscation (rule GW-1).
	Capabilities *int64 `json:"capabilities,omitempty"`
	// Presence is an optional initial presence object, handed to Config.OnPresence.
	Presence json.RawMessage `json:"presence,omitempty"`
	// Shard is an optional [shard_id, num_shards].
	Shard []int `json:"shard,omitempty"`
	// Compress asks for per-payload compression, which the hub does not offer: true is refused
	// with CloseDecodeError.
	Compress bool `json:"compress,omitempty"`
	// LargeThreshold is accepted and ignored (the hub sends no guilds).
	LargeThreshold *int `json:"large_threshold,omitempty"`
}

// Resume is the d of OpResume.
type Resume struct {
	Token     string `json:"token"`
	SessionID string `json:"session_id"`
	Seq       *int64 `json:"seq"`
}

// Ready is the d of the READY dispatch, always sequence number 1 of a session.
type Ready struct {
	V                int               `json:"v"`
	User             wire.User         `json:"user"`
	Guilds           []json.RawMessage `json:"guilds"` // always empty
	SessionID        string            `json:"session_id"`
	ResumeGatewayURL string            `json:"resume_gateway_url"`
	Application      ReadyApplication  `json:"application"`
	Shard            []int             `json:"shard,omitempty"` // the Identify's shard, when given
	// SdkppFeatures (sdkpp) names the extensions this service serves, so that an SDK uses them
	// only where they exist: FeatureRequests for op 100.
	SdkppFeatures []string `json:"sdkpp_features,omitempty"`
}

// FeatureRequests in READY's sdkpp_features: the service takes API requests over the gateway
// (OpRequest).
const FeatureRequests = "requests"

// ReadyApplication is the application object of READY.
type ReadyApplication struct {
	ID wire.Snowflake `json:"id"`
}

// controlFrame encodes a non-dispatch payload {op, d, s: null, t: null}.
func controlFrame(op int, d any) []byte {
	raw, err := json.Marshal(d)
	if err != nil { // only the hub's own values get here
		raw = []byte("null")
	}
	b := append([]byte(`{"op":`), strconv.Itoa(op)...)
	b = append(b, `,"d":`...)
	b = append(b, raw...)
	return append(b, `,"s":null,"t":null}`...)
}

// appendDispatch appends {op: 0, d, s, t} to b; event is the JSON-quoted event name.
func appendDispatch(b []byte, seq int64, event, d []byte) []byte {
	if b == nil {
		b = make([]byte, 0, dispatchLen(seq, event, d))
	}
	b = append(b, `{"op":0,"d":`...)
	b = append(b, d...)
	b = append(b, `,"s":`...)
	b = strconv.AppendInt(b, seq, 10)
	b = append(b, `,"t":`...)
	b = append(b, event...)
	return append(b, '}')
}

// dispatchLen is the length of appendDispatch's payload.
func dispatchLen(seq int64, event, d []byte) int {
	digits := 1
	for v := seq; v >= 10 || v <= -10; v /= 10 {
		digits++
	}
	if seq < 0 {
		digits++
	}
	return len(`{"op":0,"d":`) + len(d) + len(`,"s":`) + digits + len(`,"t":`) + len(event) + 1
}
