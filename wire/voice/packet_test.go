package voice

import (
	"bytes"
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestPacketRoundTrip(t *testing.T) {
	token := bytes.Repeat([]byte{0xAB}, TokenBytes)
	report := AppendReportBlock(AppendReportBlock(nil, ReportBlock{SSRC: 7, FractionLost: 26, JitterMillis: 12}),
		ReportBlock{SSRC: 9, FractionLost: 255, JitterMillis: 65535})
	tests := []struct {
		name    string
		h       Header
		payload []byte
	}{
		{"bind", Header{Type: TypeBind, SSRC: 3}, token},
		{"bind reply", Header{Type: TypeBind, Flags: FlagReply, SSRC: 3}, nil},
		{"keepalive", Header{Type: TypeKeepalive, SSRC: 3, Sequence: 9, Timestamp: 1}, nil},
		{"keepalive echo", Header{Type: TypeKeepalive, Flags: FlagReply, SSRC: 3, Sequence: 9}, nil},
		{"media", Header{Type: TypeMedia, SSRC: 0xFFFFFFFF, Sequence: 0x01020304, Timestamp: 0xA0B0C0D0}, []byte("sealed frame")},
		{"end of speech", Header{Type: TypeMedia, Flags: FlagEndOfSpeech, SSRC: 1}, []byte{0}},
		{"largest media", Header{Type: TypeMedia, SSRC: 1}, make([]byte, MaxPayloadBytes)},
		{"loss report", Header{Type: TypeLossReport, SSRC: 5}, report},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			pkt := AppendPacket(nil, tt.h, tt.payload)
			require.Len(t, pkt, HeaderBytes+len(tt.payload))
			assert.Equal(t, byte(Version), pkt[0])
			h, payload, err := Parse(pkt)
			require.NoError(t, err)
			assert.Equal(t, tt.h, h)
			assert.Equal(t, len(tt.payload), len(payload))
			assert.True(t, bytes.Equal(tt.payload, payload))
		})
	}
}

func TestPacketWireLayout(t *testing.T) {
	pkt := AppendPacket([]byte("prefix"), Header{Type: TypeMedia, Flags: FlagEndOfSpeech, SSRC: 0x11223344,
		Sequence: 0x55667788, Timestamp: 0x99AABBCC}, []byte{0xEE})
	assert.Equal(t, []byte("prefix\x01\x03\x01\x00\x11\x22\x33\x44\x55\x66\x77\x88\x99\xAA\xBB\xCC\xEE"), pkt)
}

func TestParseRefuses(t *testing.T) {
	good := AppendPacket(nil, Header{Type: TypeMedia, SSRC: 1}, []byte("x"))
	with := func(i int, b byte) []byte {
		p := bytes.Clone(good)
		p[i] = b
		return p
	}
	tests := []struct {
		name string
		pkt  []byte
		err  error
	}{
		{"empty", nil, ErrShort},
		{"short", good[:HeaderBytes-1], ErrShort},
		{"too long", AppendPacket(nil, Header{Type: TypeMedia}, make([]byte, MaxPayloadBytes+1)), ErrTooLong},
		{"version 0", with(0, 0), ErrVersion},
		{"version 2", with(0, 2), ErrVersion},
		{"type 0", with(1, 0), ErrType},
		{"type 5", with(1, 5), ErrType},
		{"unknown flag", with(2, 0x80), ErrReserved},
		{"reserved byte", with(3, 1), ErrReserved},
		{"empty media", good[:HeaderBytes], ErrPayload},
		{"short token", AppendPacket(nil, Header{Type: TypeBind}, make([]byte, TokenBytes-1)), ErrPayload},
		{"long token", AppendPacket(nil, Header{Type: TypeBind}, make([]byte, TokenBytes+1)), ErrPayload},
		{"bind without token", AppendPacket(nil, Header{Type: TypeBind}, nil), ErrPayload},
		{"keepalive with payload", AppendPacket(nil, Header{Type: TypeKeepalive}, []byte{1}), ErrPayload},
		{"empty report", AppendPacket(nil, Header{Type: TypeLossReport}, nil), ErrPayload},
		{"partial report block", AppendPacket(nil, Header{Type: TypeLossReport}, make([]byte, ReportBlockBytes+1)), ErrPayload},
		{"too many report blocks", AppendPacket(nil, Header{Type: TypeLossReport}, make([]byte, ReportBlockBytes*(MaxReportBlocks+1))), ErrPayload},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h, payload, err := Parse(tt.pkt)
			assert.ErrorIs(t, err, tt.err)
			assert.Zero(t, h)
			assert.Nil(t, payload)
		})
	}
}

func TestParseAndPutDoNotAllocate(t *testing.T) {
	pkt := AppendPacket(nil, Header{Type: TypeMedia, SSRC: 1}, make([]byte, 80))
	bad := pkt[:3]
	buf := make([]byte, 0, MaxPacketBytes)
	allocs := testing.AllocsPerRun(100, func() {
		_, _, _ = Parse(pkt)
		_, _, _ = Parse(bad)
		buf = AppendPacket(buf[:0], Header{Type: TypeMedia, SSRC: 2}, pkt[HeaderBytes:])
	})
	assert.Zero(t, allocs)
}

func TestReportBlocks(t *testing.T) {
	want := []ReportBlock{{SSRC: 1, FractionLost: 0, JitterMillis: 3}, {SSRC: 0xDEADBEEF, FractionLost: 128, JitterMillis: 400}}
	var payload []byte
	for _, r := range want {
		payload = AppendReportBlock(payload, r)
	}
	require.Equal(t, len(want), ReportBlocks(payload))
	for i, r := range want {
		assert.Equal(t, r, ReportBlockAt(payload, i))
	}
}

func TestTokenJSON(t *testing.T) {
	var tok Token
	for i := range tok {
		tok[i] = byte(i * 17)
	}
	raw, err := json.Marshal(ServerUpdate{Token: tok, Endpoint: "127.0.0.1:5000", ChannelID: 9, SSRC: 4})
	require.NoError(t, err)
	assert.JSONEq(t, `{"token":"ABEiM0RVZneImaq7zN3u/w==","guild_id":null,"endpoint":"127.0.0.1:5000",
		"sdkpp_channel_id":"9","sdkpp_ssrc":4}`, string(raw))
	var back ServerUpdate
	require.NoError(t, json.Unmarshal(raw, &back))
	assert.Equal(t, tok, back.Token)

	for _, bad := range []string{`"AAAA"`, `"not base64!"`, `"ABEiM0RVZneImaq7zN3u/wAA"`, `""`, `"` + string(bytes.Repeat([]byte("A"), 100)) + `"`} {
		var got Token
		assert.Error(t, json.Unmarshal([]byte(bad), &got), bad)
	}
}

// FuzzParse feeds the decoder arbitrary packets: it never panics, refuses what it cannot
// read, and what it accepts survives a round trip byte for byte.
func FuzzParse(f *testing.F) {
	f.Add(AppendPacket(nil, Header{Type: TypeMedia, SSRC: 1, Sequence: 2, Timestamp: 3}, []byte("frame")))
	f.Add(AppendPacket(nil, Header{Type: TypeBind, SSRC: 1}, make([]byte, TokenBytes)))
	f.Add(AppendPacket(nil, Header{Type: TypeKeepalive, Flags: FlagReply}, nil))
	f.Add(AppendPacket(nil, Header{Type: TypeLossReport}, AppendReportBlock(nil, ReportBlock{SSRC: 1})))
	f.Add([]byte{})
	f.Add([]byte{1, 3, 0, 0})
	f.Fuzz(func(t *testing.T, pkt []byte) {
		h, payload, err := Parse(pkt)
		if err != nil {
			return
		}
		if len(payload) > MaxPayloadBytes {
			t.Fatalf("payload of %d bytes accepted", len(payload))
		}
		if again := AppendPacket(nil, h, payload); !bytes.Equal(again, pkt) {
			t.Fatalf("round trip changed the packet:\n%x\n%x", pkt, again)
		}
		if h.Type == TypeLossReport {
			for i := range ReportBlocks(payload) {
				_ = ReportBlockAt(payload, i)
			}
		}
	})
}

func TestPositionRoundTrip(t *testing.T) {
	b := AppendPosition([]byte{}, 1.5, -2, 1e6)
	require.Len(t, b, PositionBytes)
	x, y, z, rest, ok := CutPosition(append(b, 0xfc, 0xff))
	require.True(t, ok)
	assert.Equal(t, [3]float32{1.5, -2, 1e6}, [3]float32{x, y, z})
	assert.Equal(t, []byte{0xfc, 0xff}, rest)
	_, _, _, _, ok = CutPosition(b)
	assert.False(t, ok, "a position and no frame")

	pkt := AppendPacket(nil, Header{Type: TypeMedia, Flags: FlagPosition | FlagEndOfSpeech, SSRC: 1}, []byte{1})
	h, _, err := Parse(pkt)
	require.NoError(t, err)
	assert.Equal(t, FlagPosition|FlagEndOfSpeech, h.Flags)
}
