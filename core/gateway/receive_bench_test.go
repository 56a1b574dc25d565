package gateway

import (
	"strconv"
	"testing"

	"sdkpp/core/messages"
	"sdkpp/wire"

	"github.com/stretchr/testify/require"
)

// benchFrame is a LOBBY_MESSAGE_CREATE dispatch as the service sends it.
func benchFrame() []byte {
	gn := "Player One"
	m := wire.LobbyMessage{ID: 1234567890123456789, Content: "latency sdkpp 123", LobbyID: 1234567890123456788, ChannelID: 1234567890123456788,
		Author: wire.User{ID: 1234567890123456787, Username: "bench-0", Discriminator: "0", GlobalName: &gn}, ApplicationID: 1234567890123456000, Timestamp: "2026-11-29T19:45:35.123456Z"}
	b := []byte(`{"op":0,"d":`)
	b = m.AppendJSON(b)
	b = append(b, `,"s":`...)
	b = strconv.AppendInt(b, 1234, 10)
	return append(b, `,"t":"LOBBY_MESSAGE_CREATE"}`...)
}

// BenchmarkReceive measures what a member's client does with a lobby message it receives: the
// envelope (decodePayload) and the message (messages.Decode, as the client's dispatch runs it).
func BenchmarkReceive(b *testing.B) {
	frame := benchFrame()
	b.Run("envelope", func(b *testing.B) {
		b.ReportAllocs()
		for i := 0; i < b.N; i++ {
			if _, err := decodePayload(frame); err != nil {
				require.NoError(b, err) // only on failure: require's helper bookkeeping would be timed
			}
		}
	})
	// As core's client reads it: the message's data left to messages.Decode (Config.DataChecked).
	var r received
	b.Run("envelope-checked-by-decoder", func(b *testing.B) {
		b.ReportAllocs()
		for i := 0; i < b.N; i++ {
			if _, err := r.decode(frame, messages.Checks); err != nil {
				require.NoError(b, err)
			}
		}
	})
	p, _ := decodePayload(frame)
	b.Run("message", func(b *testing.B) {
		b.ReportAllocs()
		for i := 0; i < b.N; i++ {
			if _, err := messages.Decode(p.T, p.D); err != nil {
				require.NoError(b, err)
			}
		}
	})
	b.Run("both", func(b *testing.B) {
		b.ReportAllocs()
		for i := 0; i < b.N; i++ {
			p, err := decodePayload(frame)
			if err == nil {
				_, err = messages.Decode(p.T, p.D)
			}
			if err != nil {
				require.NoError(b, err)
			}
		}
	})
	b.Run("both-checked-by-decoder", func(b *testing.B) {
		b.ReportAllocs()
		for i := 0; i < b.N; i++ {
			p, err := r.decode(frame, messages.Checks)
			if err == nil {
				_, err = messages.Decode(p.T, p.D)
			}
			if err != nil {
				require.NoError(b, err)
			}
		}
	})
}
