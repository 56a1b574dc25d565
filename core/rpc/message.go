package rpc

import (
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
)

// Commands.
const (
	CmdDispatch    = "DISPATCH"    // the cmd of every event
	CmdSubscribe   = "SUBSCRIBE"   // evt NAME, args the event's; data {"evt":NAME}
	CmdUnsubscribe = "UNSUBSCRIBE" // evt NAME, args the event's; data {"evt":NAME}
	CmdGetGuild    = "GET_GUILD"   // args {"guild_id":ID}; data Guild

	CmdGetVoiceSettings = "GET_VOICE_SETTINGS" // no args; data VoiceSettings
	// CmdSetVoiceSettings names the write the desktop client refuses with CodeReadOnly: the
	// voice settings are read-only to a game (rule VS-1).
	CmdSetVoiceSettings = "SET_VOICE_SETTINGS"
)

// Events.
const (
	EvtReady            = "READY"             // after the handshake; data Ready (rule RPC-1)
	EvtError            = "ERROR"             // a failed command's reply, or an event; data Error (rule RPC-1)
	EvtGuildStatus      = "GUILD_STATUS"      // subscribable, args {"guild_id":ID}; data GuildStatus (rule RPC-1)
	EvtAuthorizeRequest = "AUTHORIZE_REQUEST" // subscribable, no args: the user started account linking from the desktop client (rule RPC-2)
	EvtActivityJoin     = "ACTIVITY_JOIN"     // subscribable, no args: the user joined a party from the desktop client; data ActivityJoin

	EvtVoiceSettingsUpdate = "VOICE_SETTINGS_UPDATE" // subscribable, no args: the user changed a voice setting; data VoiceSettings
)

// Error codes carried by ERROR.
const (
	CodeUnknownError   = 1000
	CodeInvalidPayload = 4000
	CodeInvalidCommand = 4002
	CodeInvalidGuild   = 4003
	CodeInvalidEvent   = 4004
	CodeReadOnly       = 4010 // sdkpp: a write to something a game may only read (rule VS-1)
)

// Close codes carried by CLOSE.
const (
	CloseNormal          = 1000
	CloseInvalidClientID = 4000
	CloseInvalidVersion  = 4004
	CloseInvalidEncoding = 4005
)

// Version is the protocol version of the handshake and of READY.
const Version = 1

// Message is a FRAME payload: a command ({cmd, args, nonce}; SUBSCRIBE and UNSUBSCRIBE also carry
// evt), its reply ({cmd, data, nonce}, with evt ERROR when it failed) or an event
// ({cmd:"DISPATCH", evt, data}).
type Message struct {
	Cmd   string          `json:"cmd"`
	Args  json.RawMessage `json:"args,omitempty"`
	Evt   string          `json:"evt,omitempty"`
	Data  json.RawMessage `json:"data,omitempty"`
	Nonce string          `json:"nonce,omitempty"`
}

// Handshake is the HANDSHAKE payload.
type Handshake struct {
	V        int    `json:"v"`
	ClientID string `json:"client_id"`
}

// CloseData is the CLOSE payload.
type CloseData struct {
	Code    int    `json:"code"`
	Message string `json:"message"`
}

// Ready is the data of READY.
type Ready struct {
	V      int          `json:"v"`
	Config ServerConfig `json:"config"`
	User   User         `json:"user"`
}

// ServerConfig is the service configuration the desktop client announces in READY.
type ServerConfig struct {
	CDNHost     string `json:"cdn_host"`
	APIEndpoint string `json:"api_endpoint"`
	Environment string `json:"environment"`
}

// User is the user logged in to the desktop client.
type User struct {
	ID            string `json:"id"`
	Username      string `json:"username"`
	Discriminator string `json:"discriminator,omitempty"`
	GlobalName    string `json:"global_name,omitempty"`
	Avatar        string `json:"avatar,omitempty"`
}

// Guild is the data of GET_GUILD and part of GuildStatus.
type Guild struct {
	ID      string `json:"id"`
	Name    string `json:"name"`
	IconURL string `json:"icon_url,omitempty"`
}

// ActivityJoin is the data of ACTIVITY_JOIN: the party's join secret, and (sdkpp) the application
// the party belongs to when it is not the subscriber's own (a sibling application).
type ActivityJoin struct {
	Secret        string `json:"secret"`
	ApplicationID string `json:"application_id,omitempty"`
}

// Voice input modes of VoiceMode.Type.
const (
	VoiceModeActivity   = "VOICE_ACTIVITY"
	VoiceModePushToTalk = "PUSH_TO_TALK"
)

// VoiceSettings is the data of GET_VOICE_SETTINGS and VOICE_SETTINGS_UPDATE: the user's voice
// settings in the desktop client.
type VoiceSettings struct {
	Mute                 bool        `json:"mute"`
	Deaf                 bool        `json:"deaf"`
	Mode                 VoiceMode   `json:"mode"`
	Input                VoiceVolume `json:"input"`  // volume 0..100
	Output               VoiceVolume `json:"output"` // volume 0..200
	EchoCancellation     bool        `json:"echo_cancellation"`
	NoiseSuppression     bool        `json:"noise_suppression"`
	NoiseCancellation    bool        `json:"noise_cancellation"`
	AutomaticGainControl bool        `json:"automatic_gain_control"`
}

// VoiceMode is the input mode of VoiceSettings.
type VoiceMode struct {
	Type     string `json:"type"`     // VoiceModeActivity or VoiceModePushToTalk
	Shortcut string `json:"shortcut"` // display text of the push-to-talk binding; "" when unbound
}

// VoiceVolume is a device volume of VoiceSettings.
type VoiceVolume struct {
	Volume float32 `json:"volume"`
}

// DefaultVoiceSettings are a fresh desktop client's voice settings.
var DefaultVoiceSettings = VoiceSettings{
	Mode:             VoiceMode{Type: VoiceModeActivity},
	Input:            VoiceVolume{Volume: 100},
	Output:           VoiceVolume{Volume: 100},
	EchoCancellation: true, NoiseSuppression: true, AutomaticGainControl: true,
}

// GuildStatus is the data of GUILD_STATUS.
type GuildStatus struct {
	Guild  Guild `json:"guild"`
	Online int   `json:"online"`
}

// GuildArgs are the args of GET_GUILD and of a GUILD_STATUS subscription.
type GuildArgs struct {
	GuildID string `json:"guild_id"`
}

// Error is an ERROR: the reply to a failed command (Cmd is that command) or an event (Cmd is
// DISPATCH).
type Error struct {
	Cmd     string `json:"-"`
	Code    int    `json:"code"`
	Message string `json:"message"`
}

func (e *Error) Error() string {
	if e.Cmd != "" && e.Cmd != CmdDispatch {
		return fmt.Sprintf("rpc: %s failed: %d %s", e.Cmd, e.Code, e.Message)
	}
	return fmt.Sprintf("rpc: error %d %s", e.Code, e.Message)
}

// CloseError is why the peer closed the connection with CLOSE.
type CloseError struct {
	Code    int
	Message string
}

func (e *CloseError) Error() string {
	return fmt.Sprintf("rpc: closed by the peer: %d %s", e.Code, e.Message)
}

// ParseMessage decodes a FRAME payload. It fails on anything but one JSON object with a cmd.
func ParseMessage(payload []byte) (*Message, error) {
	var m Message
	if err := json.Unmarshal(payload, &m); err != nil {
		return nil, fmt.Errorf("rpc: malformed message: %w", err)
	}
	if m.Cmd == "" {
		return nil, fmt.Errorf("rpc: malformed message: no cmd")
	}
	return &m, nil
}

// ErrorOf returns the *Error a message carries, or nil if its evt is not ERROR. Malformed
// error data gives an Error with CodeUnknownError.
func ErrorOf(m *Message) *Error {
	if m.Evt != EvtError {
		return nil
	}
	e := &Error{}
	if json.Unmarshal(m.Data, e) != nil {
		e.Code, e.Message = CodeUnknownError, "malformed error data"
	}
	e.Cmd = m.Cmd
	return e
}

// NewNonce returns a random UUID (version 4) for a command's nonce.
func NewNonce() string {
	var b [16]byte
	rand.Read(b[:])
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	var s [36]byte
	hex.Encode(s[0:8], b[0:4])
	s[8] = '-'
	hex.Encode(s[9:13], b[4:6])
	s[13] = '-'
	hex.Encode(s[14:18], b[6:8])
	s[18] = '-'
	hex.Encode(s[19:23], b[8:10])
	s[23] = '-'
	hex.Encode(s[24:], b[10:])
	return string(s[:])
}
