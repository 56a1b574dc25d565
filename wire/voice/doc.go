// Package voice is the voice protocol, written once for the SDK and the service: the gateway
// payloads of voice signaling and the framing of the UDP packets that the service's relay
// forwards between a call's participants. Every name, limit and size of the protocol is defined
// here; the opcodes and event names are in package wire/gateway with the others.
//
// # Signaling (over the gateway)
//
// A call belongs to a lobby: its channel id is the lobby id, and only the lobby's members may
// join it. A client joins, moves and leaves with Voice State Update (op 4, d a StateUpdate):
//
//	{"op":4,"d":{"guild_id":null,"channel_id":"1234","self_mute":false,"self_deaf":false,
//	 "sdkpp_e2ee_public_keys":"<base64>"}}
//
// channel_id null leaves the call; another lobby id moves to that lobby's call; the same one
// changes self_mute and self_deaf (and the public keys), which every participant sees. Only
// end-to-end encrypted calls exist (rule VER-2): a join without sdkpp_e2ee_public_keys (the
// participant's public keys in the e2ee package's encoding, opaque to the service) is refused.
//
// The service answers a join with dispatches to the joining session: a VOICE_STATE_UPDATE (d a
// State) for each participant already in the call, then the joiner's own state, which every
// other participant gets too, then VOICE_SERVER_UPDATE (d a ServerUpdate): the relay's UDP
// endpoint, the participant's SSRC and a fresh flow token, bound to that call, user and gateway
// session. A participant that leaves (op 4 with channel_id null, a move, leaving the lobby, the
// lobby's deletion, or the end of its gateway connection) is sent to everyone in the call, itself
// included, as a State with channel_id null; its flow token stops working at once.
//
// A refusal is a dispatch of SDKPP_VOICE_ERROR (d an Error) to the session that asked; the SDK
// maps every one of them to Call::Error Forbidden, with the code as the error detail:
//
//	CodeUnknownLobby   10031  the lobby does not exist, expired, or is another game's
//	CodeMissingAccess  50001  the user is not a member of the lobby
//	CodeE2EERequired   4017   no sdkpp_e2ee_public_keys (rule VER-2; the platform's voice close
//	                          code for "E2EE required")
//	CodeCallFull       30033  the call already has MaxParticipants participants
//
// # Guild voice channels
//
// An op 4 with guild_id set is the platform's Update Voice State: channel_id a voice (or stage)
// channel of that guild joins or moves there, null leaves; self_mute and self_deaf are kept.
// Joining needs VIEW_CHANNEL and CONNECT in the channel. The guild's sessions with the
// GUILD_VOICE_STATES intent get VOICE_STATE_UPDATE, d the platform's voice state (package wire's
// VoiceState, not a State). A user has one voice state per guild; the service has no voice
// server for guild channels, so no VOICE_SERVER_UPDATE follows: a guild voice state is presence
// in the channel only. Refusals are SDKPP_VOICE_ERROR with CodeUnknownGuild (no such guild, or
// the user is not a member), CodeUnknownChannel (not a channel of the guild), CodeMissingAccess
// (the channel is not viewable), CodeMissingPermissions (no CONNECT) or CodeInvalidChannelType
// (not a voice channel).
//
// A malformed op 4 or op 101 (not an object, a field of the wrong type, a key longer than its
// limit) closes the gateway connection with 4002, like any other malformed payload.
//
// Media keys travel through the service sealed to their recipients (sdkpp's op 101, Voice Keys,
// d a Keys): a participant addresses one sealed key to each other participant by user id, and
// the service forwards each, without reading it, to the recipient's session in the same call as
// an SDKPP_VOICE_KEYS dispatch (d a KeyDelivery). Keys for users who are not in the call are
// dropped; a sender that is not in the call gets CodeMissingAccess.
//
// # Media (over UDP)
//
// Every packet, both ways, is a Header of HeaderBytes bytes (big-endian) and a payload:
//
//	byte 0      version (Version)
//	byte 1      type: TypeBind, TypeKeepalive, TypeMedia, TypeLossReport
//	byte 2      flags: FlagEndOfSpeech, FlagReply, FlagPosition; other bits must be zero
//	byte 3      reserved, zero
//	bytes 4-7   SSRC: the sending participant's id in the call (from VOICE_SERVER_UPDATE)
//	bytes 8-11  sequence number
//	bytes 12-15 timestamp (48 kHz samples)
//
// The payload of a media packet is the end-to-end sealed frame, opaque to the relay, which
// forwards the whole packet unchanged to every other bound participant of the call (so the
// header may be authenticated end to end). With FlagPosition, the sealed plaintext begins with
// the sender's position for positional voice (PositionBytes, AppendPosition), then the voice
// frame: where a player stands is end-to-end encrypted like its voice, and the flag, being
// authenticated, cannot be added or removed on the way. A bind packet carries the flow token (TokenBytes);
// the relay answers it with a header-only packet of the same type with FlagReply, and learns the
// client's address from it (a client behind NAT binds from inside; a bind from a new address
// with the same token moves the flow there). A keepalive has no payload; the relay echoes it
// with FlagReply. A flow that sends nothing for FlowTimeout is unbound (bind again). A loss
// report carries ReportBlockBytes-byte blocks (ReportBlock), one per sender the reporter hears,
// and goes to every other participant like media. The relay answers nothing else and never
// sends more bytes than it received.
package voice
