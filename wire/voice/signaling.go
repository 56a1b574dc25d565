package voice

import (
	"errors"
	"fmt"

	"sdkpp/wire"
)

// Limits of signaling.
const (
	// MaxParticipants bounds a call: a join beyond it is refused with CodeCallFull.
	MaxParticipants = 25
	// MaxPublicKeysBytes bounds StateUpdate.E2EEPublicKeys (the e2ee package's encoding of an
	// X25519 and an Ed25519 public key, with room to grow).
	MaxPublicKeysBytes = 256
	// MaxSealedKeyBytes bounds one SealedKey.Sealed (an HPKE encapsulated key, a sealed media key
	// and its framing).
	MaxSealedKeyBytes = 512
	// MaxKeysPayloadBytes bounds a whole op 101 payload: MaxParticipants-1 sealed keys, base64
	// encoded, with their user ids. Other client payloads keep the gateway's 4096-byte limit.
	MaxKeysPayloadBytes = 24 << 10
)

// Error codes of an Error dispatch (see the package documentation); an SDK maps each to
// Call::Error Forbidden with the code as the detail.
const (
	CodeUnknownGuild       = 10004
	CodeUnknownChannel     = 10003
	CodeUnknownLobby       = 10031
	CodeMissingPermissions = wire.CodeMissingPermissions
	CodeInvalidChannelType = 50024
	CodeCallFull           = 30033
	CodeMissingAccess      = wire.CodeMissingAccess
	CodeE2EERequired       = 4017
)

// StateUpdate is the d of Voice State Update (op 4), client → service.
type StateUpdate struct {
	// GuildID is absent or null for a lobby's call; set, ChannelID is a voice channel of that
	// guild (the platform's Update Voice State).
	GuildID *wire.Snowflake `json:"guild_id,omitempty"`
	// ChannelID is the lobby whose call, or the guild voice channel, to join or stay in; null
	// (or absent) leaves it.
	ChannelID *wire.Snowflake `json:"channel_id"`
	SelfMute  bool            `json:"self_mute"`
	SelfDeaf  bool            `json:"self_deaf"`
	// E2EEPublicKeys (sdkpp) are the participant's public keys for this call in the e2ee
	// package's encoding, opaque to the service, base64 in JSON; required to join a lobby's call
	// (rule VER-2), ignored in a guild.
	E2EEPublicKeys []byte `json:"sdkpp_e2ee_public_keys,omitempty"`
}

// Check refuses what no service could accept: a zero id, keys longer than MaxPublicKeysBytes.
// The service closes the connection with 4002 when it fails.
func (u *StateUpdate) Check() error {
	switch {
	case u.GuildID != nil && *u.GuildID == 0:
		return errors.New("voice state update: guild_id 0")
	case u.ChannelID != nil && *u.ChannelID == 0:
		return errors.New("voice state update: channel_id 0")
	case len(u.E2EEPublicKeys) > MaxPublicKeysBytes:
		return fmt.Errorf("voice state update: public keys longer than %d bytes", MaxPublicKeysBytes)
	}
	return nil
}

// State is a voice state, the d of a VOICE_STATE_UPDATE dispatch.
type State struct {
	GuildID *wire.Snowflake `json:"guild_id"` // always null: lobby calls
	// ChannelID is the lobby of the call; null when the user has left it.
	ChannelID *wire.Snowflake `json:"channel_id"`
	UserID    wire.Snowflake  `json:"user_id"`
	// SessionID is the gateway session that is in the call.
	SessionID string `json:"session_id"`
	SelfMute  bool   `json:"self_mute"`
	SelfDeaf  bool   `json:"self_deaf"`
	// E2EEPublicKeys (sdkpp) are the participant's public keys, as it sent them; absent when it
	// left.
	E2EEPublicKeys []byte `json:"sdkpp_e2ee_public_keys,omitempty"`
	// SSRC (sdkpp) is the participant's id in media packet headers; absent when it left.
	SSRC uint32 `json:"sdkpp_ssrc,omitempty"`
}

// ServerUpdate is the d of a VOICE_SERVER_UPDATE dispatch, to the session that joined.
type ServerUpdate struct {
	// Token is the flow token to bind with (TypeBind): valid while the participant stays in the
	// call, for this session only.
	Token   Token           `json:"token"`
	GuildID *wire.Snowflake `json:"guild_id"` // always null: lobby calls
	// Endpoint is the relay's UDP address, host:port.
	Endpoint string `json:"endpoint"`
	// ChannelID (sdkpp) is the lobby of the call.
	ChannelID wire.Snowflake `json:"sdkpp_channel_id"`
	// SSRC (sdkpp) is the participant's id in media packet headers.
	SSRC uint32 `json:"sdkpp_ssrc"`
}

// Keys is the d of Voice Keys (sdkpp's op 101), client → service: sealed keys, each addressed to
// one participant of the sender's call.
type Keys struct {
	ChannelID wire.Snowflake `json:"channel_id"`
	Keys      []SealedKey    `json:"keys"`
}

// SealedKey is one key of a Keys, sealed to its recipient.
type SealedKey struct {
	UserID wire.Snowflake `json:"user_id"`
	// Sealed is opaque to the service (base64 in JSON), 1 to MaxSealedKeyBytes bytes.
	Sealed []byte `json:"sealed"`
}

// Check refuses a malformed Keys: no channel, no keys or more than MaxParticipants-1, a zero
// user id, an empty or oversized sealed key. The service closes the connection with 4002 when
// it fails.
func (k *Keys) Check() error {
	if k.ChannelID == 0 {
		return errors.New("voice keys: channel_id missing")
	}
	if len(k.Keys) == 0 || len(k.Keys) > MaxParticipants-1 {
		return fmt.Errorf("voice keys: 1 to %d keys", MaxParticipants-1)
	}
	for i, s := range k.Keys {
		if s.UserID == 0 || len(s.Sealed) == 0 || len(s.Sealed) > MaxSealedKeyBytes {
			return fmt.Errorf("voice keys: key %d: user_id and 1 to %d bytes required", i, MaxSealedKeyBytes)
		}
	}
	return nil
}

// KeyDelivery is the d of an SDKPP_VOICE_KEYS dispatch: one sealed key, from a participant of the
// call to the session that receives it.
type KeyDelivery struct {
	ChannelID wire.Snowflake `json:"channel_id"`
	SenderID  wire.Snowflake `json:"sender_id"`
	Sealed    []byte         `json:"sealed"`
}

// Error is the d of an SDKPP_VOICE_ERROR dispatch: a Voice State Update or Voice Keys refused.
type Error struct {
	GuildID   *wire.Snowflake `json:"guild_id"`
	ChannelID *wire.Snowflake `json:"channel_id"`
	Code      int             `json:"code"` // one of the Code constants
	Message   string          `json:"message"`
}
