// Package gateway is the realtime gateway's protocol, written once for the SDK and the service:
// the payload envelope, opcodes, close codes, intents, event names, the handshake payloads and the
// protocol's limits. It follows the platform's public gateway (v10) and names sdkpp's extensions
// (op 100 requests, READY's sdkpp_features) as such.
package gateway

import (
	"encoding/json"

	"sdkpp/wire"
)

// APIVersion is the gateway version spoken; a connection URL with another ?v= is closed with
// CloseInvalidAPIVersion.
const APIVersion = 10

// Opcodes of the gateway payload's "op" field.
const (
	OpDispatch       = 0 // server → client: an event, with s and t
	OpHeartbeat      = 1 // client → server: d is the last sequence number received, or null
	OpIdentify       = 2 // client → server: start a new session
	OpPresenceUpdate = 3 // client → server: update the user's presence
	// OpVoiceStateUpdate is client → server: join, move or leave a lobby's call (guild_id null)
	// or a guild's voice channel (guild_id set), or change self mute and deafen; d is a
	// wire/voice StateUpdate. Lobby calls are served when READY's sdkpp_features has
	// FeatureVoice.
	OpVoiceStateUpdate = 4
	OpResume           = 6 // client → server: resume a dropped session
	// OpRequestGuildMembers is client → server (bots): d is a wire.RequestGuildMembers; the
	// answer is GUILD_MEMBERS_CHUNK dispatches, or RATE_LIMITED (rule GW-2).
	OpRequestGuildMembers = 8
	OpReconnect           = 7  // server → client: reconnect and resume
	OpInvalidSession      = 9  // server → client: d is false; identify again
	OpHello               = 10 // server → client: first payload, d is {heartbeat_interval}
	OpHeartbeatACK        = 11 // server → client: answer to OpHeartbeat

	// OpRequest (sdkpp) is client → server: d is a Request, an API request served over the
	// gateway; its answer is an EventRequestResult dispatch. It does not count against the payload
	// rate limit (the API's own limits apply) and may be up to MaxRequestBytes long.
	OpRequest = 100
	// OpVoiceKeys (sdkpp) is client → server: d is a wire/voice Keys, media keys sealed to other
	// participants of the sender's call, which the service forwards unread as EventVoiceKeys
	// dispatches. It may be up to voice.MaxKeysPayloadBytes long.
	OpVoiceKeys = 101
)

// Close codes, with the platform's meanings. IsFinal tells which ones a client must not reconnect
// after.
const (
	CloseUnknownError         = 4000 // internal error, or the connection fell too far behind; reconnect
	CloseUnknownOpcode        = 4001 // an opcode the server does not accept from clients
	CloseDecodeError          = 4002 // malformed JSON, wrong field types, oversized or binary frame, unsupported encoding
	CloseNotAuthenticated     = 4003 // a payload other than Heartbeat, Identify or Resume before Identify
	CloseAuthenticationFailed = 4004 // bad or expired token, missing scope, or sessions ended (final)
	CloseAlreadyAuthenticated = 4005 // a second Identify or Resume on an authenticated connection
	CloseInvalidSeq           = 4007 // Resume with a seq the session never reached
	CloseRateLimited          = 4008 // too many payloads in the rate window
	CloseSessionTimedOut      = 4009 // no heartbeat within 1.5 heartbeat intervals
	CloseInvalidShard         = 4010 // Identify with a shard that is not [id, count], 0 <= id < count (final)
	CloseShardingRequired     = 4011 // never sent: user sessions need no sharding (final)
	CloseInvalidAPIVersion    = 4012 // ?v= other than APIVersion (final)
	CloseInvalidIntents       = 4013 // intents missing, negative or with undefined bits (final)
	CloseDisallowedIntents    = 4014 // intents the application may not use (final)
)

// CloseServiceRestart (1012, the WebSocket standard's Service Restart) follows an OpReconnect when
// the service shuts down.
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

// Intents of guild events.
const (
	IntentGuilds           uint64 = 1 << 0
	IntentGuildVoiceStates uint64 = 1 << 7
	IntentGuildMessages    uint64 = 1 << 9
	// IntentDirectMessages brings a bot the MESSAGE_CREATE, _UPDATE and _DELETE of its DM
	// channels.
	IntentDirectMessages uint64 = 1 << 12
)

// Privileged intents: GUILD_MEMBERS, GUILD_PRESENCES and MESSAGE_CONTENT.
const (
	IntentGuildMembers   uint64 = 1 << 1
	IntentGuildPresences uint64 = 1 << 8
	IntentMessageContent uint64 = 1 << 15
)

// Limits of the protocol.
const (
	// MaxRequestBytes bounds an OpRequest payload: a message of wire.MaxMessageContentChars
	// characters of four UTF-8 bytes each, escaped, with its metadata.
	MaxRequestBytes = 64 << 10
	// MaxNonceChars bounds Request.Nonce.
	MaxNonceChars = 64
)

// Change is what a relationship dispatch reports.
type Change int

// The changes of a relationship.
const (
	Added Change = iota
	Updated
	Removed
)

// RelationshipEvent describes a relationship dispatch: whose graph it changes (the platform's, or
// the game's: GAME_RELATIONSHIP_*) and how. Its d is a wire.Relationship.
type RelationshipEvent struct {
	Game   bool
	Change Change
}

// RelationshipEvents describes each relationship dispatch by its name.
var RelationshipEvents = map[string]RelationshipEvent{
	EventRelationshipAdd:        {Game: false, Change: Added},
	EventRelationshipUpdate:     {Game: false, Change: Updated},
	EventRelationshipRemove:     {Game: false, Change: Removed},
	EventGameRelationshipAdd:    {Game: true, Change: Added},
	EventGameRelationshipUpdate: {Game: true, Change: Updated},
	EventGameRelationshipRemove: {Game: true, Change: Removed},
}

// Dispatch event names (the payload's "t").
const (
	EventReady   = "READY"
	EventResumed = "RESUMED"

	EventRelationshipAdd        = "RELATIONSHIP_ADD"
	EventRelationshipUpdate     = "RELATIONSHIP_UPDATE"
	EventRelationshipRemove     = "RELATIONSHIP_REMOVE"
	EventGameRelationshipAdd    = "GAME_RELATIONSHIP_ADD"
	EventGameRelationshipUpdate = "GAME_RELATIONSHIP_UPDATE"
	EventGameRelationshipRemove = "GAME_RELATIONSHIP_REMOVE"
	EventPresenceUpdate         = "PRESENCE_UPDATE"
	EventActivityInviteCreate   = "ACTIVITY_INVITE_CREATE"
	EventActivityInviteUpdate   = "ACTIVITY_INVITE_UPDATE"

	EventGuildCreate       = "GUILD_CREATE"
	EventGuildMemberAdd    = "GUILD_MEMBER_ADD"
	EventGuildMemberUpdate = "GUILD_MEMBER_UPDATE"
	EventGuildMemberRemove = "GUILD_MEMBER_REMOVE"
	EventGuildMembersChunk = "GUILD_MEMBERS_CHUNK"
	EventRateLimited       = "RATE_LIMITED"

	EventMessageCreate = "MESSAGE_CREATE"
	EventMessageUpdate = "MESSAGE_UPDATE"
	EventMessageDelete = "MESSAGE_DELETE"
	// EventChannelPinsUpdate follows a pin or an unpin in a channel (rule PIN-1); its d is a
	// wire.ChannelPinsUpdate.
	EventChannelPinsUpdate = "CHANNEL_PINS_UPDATE"

	EventLobbyCreate        = "LOBBY_CREATE"
	EventLobbyUpdate        = "LOBBY_UPDATE"
	EventLobbyDelete        = "LOBBY_DELETE"
	EventLobbyMemberAdd     = "LOBBY_MEMBER_ADD"
	EventLobbyMemberUpdate  = "LOBBY_MEMBER_UPDATE"
	EventLobbyMemberRemove  = "LOBBY_MEMBER_REMOVE"
	EventLobbyMessageCreate = wire.EventLobbyMessageCreate // also its webhook event's name
	EventLobbyMessageUpdate = wire.EventLobbyMessageUpdate

	// EventApplicationProfilesUpdate (sdkpp) gives the sessions of one application the game
	// profiles another user has in it: d is that user's user object with application_profiles (of
	// that application only; absent when none). The service sends it before a platform
	// RELATIONSHIP_ADD or RELATIONSHIP_UPDATE, which reach the sessions of every application and
	// so cannot carry one application's profiles; relationship objects of READY, of GET
	// /users/@me/relationships and of GAME_RELATIONSHIP_* events carry them in their user
	// instead. It is sent too when a merge, an unmerge or a ban moves an external identity to or
	// from a user, and when a provisional user's display name (which is also the profiles'
	// username) changes, to the user's sessions of that application and those of the user's
	// friends and lobby co-members there.
	EventApplicationProfilesUpdate = "APPLICATION_PROFILES_UPDATE"

	// EventRequestResult (sdkpp) is the dispatch that answers an OpRequest: d is a RequestResult.
	EventRequestResult = "SDKPP_REQUEST_RESULT"

	// EventVoiceStateUpdate is a participant's voice state: in a lobby's call (d a wire/voice
	// State), to the call's participants; in a guild (d a wire.VoiceState), to the guild's
	// sessions with IntentGuildVoiceStates.
	EventVoiceStateUpdate = "VOICE_STATE_UPDATE"
	// EventVoiceServerUpdate gives a session that joined a call the relay's endpoint and its flow
	// token (d a wire/voice ServerUpdate).
	EventVoiceServerUpdate = "VOICE_SERVER_UPDATE"
	// EventVoiceKeys (sdkpp) delivers one sealed media key of an OpVoiceKeys (d a wire/voice
	// KeyDelivery).
	EventVoiceKeys = "SDKPP_VOICE_KEYS"
	// EventVoiceError (sdkpp) refuses an OpVoiceStateUpdate or OpVoiceKeys (d a wire/voice
	// Error), to the session that sent it.
	EventVoiceError = "SDKPP_VOICE_ERROR"
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
	// Presence is an optional initial presence object.
	Presence json.RawMessage `json:"presence,omitempty"`
	// Shard is an optional [shard_id, num_shards].
	Shard []int `json:"shard,omitempty"`
	// Compress asks for payload compression: each dispatch then comes as a binary frame holding
	// a zlib stream of its own (ignored on a connection with transport compression).
	Compress bool `json:"compress,omitempty"`
	// LargeThreshold is accepted and ignored: a bot's GUILD_CREATE lists all members of a guild
	// of at most 250 (with GUILD_MEMBERS).
	LargeThreshold *int `json:"large_threshold,omitempty"`
}

// Resume is the d of OpResume.
type Resume struct {
	Token     string `json:"token"`
	SessionID string `json:"session_id"`
	Seq       *int64 `json:"seq"`
}

// Ready is the d of the READY dispatch, always sequence number 1 of a session. The service adds
// the social state of the session (relationships, presences, lobbies) as further fields of the
// same object; see ReadyState.
type Ready struct {
	V                int               `json:"v"`
	User             wire.User         `json:"user"`
	Guilds           []json.RawMessage `json:"guilds"` // a bot's guilds, as unavailable guilds; empty for users
	SessionID        string            `json:"session_id"`
	ResumeGatewayURL string            `json:"resume_gateway_url"`
	Application      ReadyApplication  `json:"application"`
	Shard            []int             `json:"shard,omitempty"` // the Identify's shard, when given
	// SdkppFeatures (sdkpp) names the extensions the service serves, so that an SDK uses them
	// only where they exist: FeatureRequests for OpRequest, FeatureVoice for voice calls.
	SdkppFeatures []string `json:"sdkpp_features,omitempty"`
}

// FeatureRequests in READY's sdkpp_features: the service takes API requests over the gateway
// (OpRequest). A service without it (another implementation of the platform's API, an older
// sdkpp) would close the connection on an unknown opcode.
const FeatureRequests = "requests"

// FeatureVoice in READY's sdkpp_features: the service has voice calls (OpVoiceStateUpdate,
// OpVoiceKeys and their dispatches).
const FeatureVoice = "voice"

// ReadyApplication is the application object of READY.
type ReadyApplication struct {
	ID wire.Snowflake `json:"id"`
	// Flags are the application's flags, bits 0 to 30 (rule APP-1).
	Flags int32 `json:"flags"`
}

// Request is the d of OpRequest.
type Request struct {
	Nonce  string          `json:"nonce"`          // 1-64 characters, echoed in the result
	Method string          `json:"method"`         // GET, POST, PUT, PATCH or DELETE
	Path   string          `json:"path"`           // below the API base, e.g. "/lobbies/1/messages"
	Body   json.RawMessage `json:"body,omitempty"` // the JSON body, if any
}

// RequestResult is the d of EventRequestResult.
type RequestResult struct {
	Nonce  string          `json:"nonce"`
	Status int             `json:"status"` // the HTTP status the request got
	Body   json.RawMessage `json:"body"`   // the JSON answer; null when it had none
}
