package voice

import (
	"encoding/base64"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"time"
)

// Version is the packet format's version, byte 0 of every packet.
const Version = 1

// Sizes and limits of the UDP packets.
const (
	// HeaderBytes is the fixed header's size.
	HeaderBytes = 16
	// MaxPacketBytes bounds a whole packet: it fits one datagram on any path (an IPv6 minimum
	// MTU of 1280 less its headers). The relay drops longer packets.
	MaxPacketBytes = 1200
	// MaxPayloadBytes bounds a packet's payload.
	MaxPayloadBytes = MaxPacketBytes - HeaderBytes
	// TokenBytes is the size of a flow token, a bind packet's whole payload.
	TokenBytes = 16
	// ReportBlockBytes is the size of one block of a loss report.
	ReportBlockBytes = 8
	// MaxReportBlocks bounds a loss report: one block per other participant.
	MaxReportBlocks = MaxParticipants - 1
)

// Timing of flows.
const (
	// KeepaliveInterval is how often a client sends a keepalive when it sends nothing else
	// (it may send them regardless, to measure the round trip from the echoes).
	KeepaliveInterval = 5 * time.Second
	// FlowTimeout is how long a bound flow lives without a packet from its client; then the
	// relay forgets its address and the client must bind again.
	FlowTimeout = 4 * KeepaliveInterval
)

// Rate limits of a flow, enforced by the relay as a token bucket: a sustained rate and a burst.
// A client sends 50 media packets a second with 20 ms frames (100 with 10 ms ones), a
// keepalive every few seconds and a loss report about every second.
const (
	MaxPacketsPerSecond = 250
	MaxPacketBurst      = 100
)

// Type is a packet's type (byte 1).
type Type uint8

// Packet types.
const (
	TypeBind       Type = 1 // client → relay: payload the flow token; answered with FlagReply
	TypeKeepalive  Type = 2 // client → relay: no payload; echoed with FlagReply
	TypeMedia      Type = 3 // both ways: payload a sealed frame, 1 to MaxPayloadBytes bytes
	TypeLossReport Type = 4 // both ways: payload 1 to MaxReportBlocks report blocks
)

// String names the type.
func (t Type) String() string {
	switch t {
	case TypeBind:
		return "bind"
	case TypeKeepalive:
		return "keepalive"
	case TypeMedia:
		return "media"
	case TypeLossReport:
		return "loss report"
	}
	return fmt.Sprintf("type %d", uint8(t))
}

// Flags are a packet's flag bits (byte 2).
type Flags uint8

// Packet flags.
const (
	// FlagEndOfSpeech marks a sender's last media packet of a talk spurt (voice activity ended
	// or push-to-talk was released).
	FlagEndOfSpeech Flags = 1 << 0
	// FlagReply marks the relay's answers to bind and keepalive packets.
	FlagReply Flags = 1 << 1
	// FlagPosition marks a media packet whose sealed frame begins with the sender's position
	// (AppendPosition): the relay learns that a position is there, never what it is.
	FlagPosition Flags = 1 << 2

	knownFlags = FlagEndOfSpeech | FlagReply | FlagPosition
)

// PositionBytes is the size of a position at the start of a frame's plaintext: x, y and z, each
// a big-endian IEEE 754 float32, in the game's units.
const PositionBytes = 12

// AppendPosition appends a position's PositionBytes bytes to dst.
func AppendPosition(dst []byte, x, y, z float32) []byte {
	dst = binary.BigEndian.AppendUint32(dst, math.Float32bits(x))
	dst = binary.BigEndian.AppendUint32(dst, math.Float32bits(y))
	return binary.BigEndian.AppendUint32(dst, math.Float32bits(z))
}

// CutPosition reads the position at the start of a frame's plaintext and returns the rest (the
// voice frame); ok is false when the plaintext is too short to hold one and a frame.
func CutPosition(plain []byte) (x, y, z float32, rest []byte, ok bool) {
	if len(plain) <= PositionBytes {
		return 0, 0, 0, nil, false
	}
	x = math.Float32frombits(binary.BigEndian.Uint32(plain))
	y = math.Float32frombits(binary.BigEndian.Uint32(plain[4:]))
	z = math.Float32frombits(binary.BigEndian.Uint32(plain[8:]))
	return x, y, z, plain[PositionBytes:], true
}

// Header is the fixed header of every packet.
type Header struct {
	Type  Type
	Flags Flags
	// SSRC is the sending participant's id in the call (VOICE_SERVER_UPDATE's sdkpp_ssrc). In the
	// relay's answers it is the client's own.
	SSRC uint32
	// Sequence counts the sender's packets of one type; it may wrap.
	Sequence uint32
	// Timestamp is the media clock (48 kHz samples) of the packet's first sample; for other
	// types, whatever the sender likes (an echo returns it).
	Timestamp uint32
}

// Errors of Parse; they are values, so refusing a packet does not allocate.
var (
	ErrShort     = errors.New("voice: packet shorter than its header")
	ErrTooLong   = errors.New("voice: packet longer than MaxPacketBytes")
	ErrVersion   = errors.New("voice: unknown packet version")
	ErrType      = errors.New("voice: unknown packet type")
	ErrReserved  = errors.New("voice: unknown flags or reserved byte set")
	ErrPayload   = errors.New("voice: payload size wrong for the packet type")
	ErrTokenText = errors.New("voice: flow token is not base64 of TokenBytes bytes")
)

// Put writes the header into b[:HeaderBytes]; b must be at least that long.
func (h Header) Put(b []byte) {
	_ = b[HeaderBytes-1]
	b[0] = Version
	b[1] = byte(h.Type)
	b[2] = byte(h.Flags)
	b[3] = 0
	binary.BigEndian.PutUint32(b[4:], h.SSRC)
	binary.BigEndian.PutUint32(b[8:], h.Sequence)
	binary.BigEndian.PutUint32(b[12:], h.Timestamp)
}

// AppendPacket appends the packet with header h and the payload to dst and returns the result.
// It does not check the payload against the type: Parse does, on the other side.
func AppendPacket(dst []byte, h Header, payload []byte) []byte {
	n := len(dst)
	dst = append(dst, make([]byte, HeaderBytes)...) // does not allocate beyond dst's growth
	h.Put(dst[n:])
	return append(dst, payload...)
}

// Parse reads a packet: its header, and its payload (a subslice of pkt). It refuses, with one of
// the errors above, a packet that is short or too long, of another version or an unknown type,
// with unknown flags or the reserved byte set, or whose payload size does not suit its type
// (see the package documentation). It does not allocate.
func Parse(pkt []byte) (Header, []byte, error) {
	var h Header
	switch {
	case len(pkt) < HeaderBytes:
		return h, nil, ErrShort
	case len(pkt) > MaxPacketBytes:
		return h, nil, ErrTooLong
	case pkt[0] != Version:
		return h, nil, ErrVersion
	case Flags(pkt[2])&^knownFlags != 0 || pkt[3] != 0:
		return h, nil, ErrReserved
	}
	h = Header{Type: Type(pkt[1]), Flags: Flags(pkt[2]), SSRC: binary.BigEndian.Uint32(pkt[4:]),
		Sequence: binary.BigEndian.Uint32(pkt[8:]), Timestamp: binary.BigEndian.Uint32(pkt[12:])}
	payload := pkt[HeaderBytes:]
	if err := checkPayload(h, len(payload)); err != nil {
		return Header{}, nil, err
	}
	return h, payload, nil
}

// checkPayload checks a payload's size against its packet's type. The relay's answers (FlagReply)
// to bind packets have no payload.
func checkPayload(h Header, n int) error {
	var ok bool
	switch h.Type {
	case TypeBind:
		ok = n == TokenBytes || (h.Flags&FlagReply != 0 && n == 0)
	case TypeKeepalive:
		ok = n == 0
	case TypeMedia:
		ok = n > 0 // at most MaxPayloadBytes: the packet's length is checked
	case TypeLossReport:
		ok = n > 0 && n%ReportBlockBytes == 0 && n/ReportBlockBytes <= MaxReportBlocks
	default:
		return ErrType
	}
	if !ok {
		return ErrPayload
	}
	return nil
}

// Token is a flow token: it binds a client's UDP flow to its participant in a call. In JSON it
// is a base64 string (standard alphabet, padded).
type Token [TokenBytes]byte

// MarshalText encodes the token as base64.
func (t Token) MarshalText() ([]byte, error) {
	return base64.StdEncoding.AppendEncode(nil, t[:]), nil
}

// UnmarshalText decodes base64 of exactly TokenBytes bytes.
func (t *Token) UnmarshalText(b []byte) error {
	var buf [TokenBytes + 3]byte
	if base64.StdEncoding.DecodedLen(len(b)) > len(buf) {
		return ErrTokenText
	}
	n, err := base64.StdEncoding.Decode(buf[:], b)
	if err != nil || n != TokenBytes {
		return ErrTokenText
	}
	copy(t[:], buf[:n])
	return nil
}

// ReportBlock is one block of a loss report: what the reporter received of one sender since its
// previous report. Senders use it to tune their forward error correction.
//
//	bytes 0-3  SSRC of the sender reported on
//	byte 4     fraction of its packets lost, in 256ths
//	byte 5     reserved, zero
//	bytes 6-7  interarrival jitter, milliseconds (saturating)
type ReportBlock struct {
	SSRC         uint32
	FractionLost uint8
	JitterMillis uint16
}

// AppendReportBlock appends the block's ReportBlockBytes bytes to dst.
func AppendReportBlock(dst []byte, r ReportBlock) []byte {
	dst = binary.BigEndian.AppendUint32(dst, r.SSRC)
	dst = append(dst, r.FractionLost, 0)
	return binary.BigEndian.AppendUint16(dst, r.JitterMillis)
}

// ReportBlocks returns how many blocks a loss report's payload holds (Parse checked its size).
func ReportBlocks(payload []byte) int { return len(payload) / ReportBlockBytes }

// ReportBlockAt reads block i of a loss report's payload; i must be below ReportBlocks.
func ReportBlockAt(payload []byte, i int) ReportBlock {
	b := payload[i*ReportBlockBytes : (i+1)*ReportBlockBytes]
	return ReportBlock{SSRC: binary.BigEndian.Uint32(b), FractionLost: b[4], JitterMillis: binary.BigEndian.Uint16(b[6:])}
}
