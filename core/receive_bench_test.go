package core

import (
	"strconv"
	"testing"

	"sdkpp/wire"

	"github.com/stretchr/testify/require"
)

// BenchmarkLobbyMessageDispatch measures what a connected Client does with each lobby message
// the gateway client hands it, after the envelope: the message's decode, the user cache, the
// message cache's exactly-once check and insert, and the MessageCreated callback queued and run
// (16 at a time, as a game's frame takes what arrived meanwhile).
func BenchmarkLobbyMessageDispatch(b *testing.B) {
	c := NewClientWithBases("http://127.0.0.1:1/api/v10", "http://127.0.0.1:1")
	defer c.Close()
	ran := 0
	c.SetMessageCreatedCallback(Func(func(uint64) { ran++ }))
	gn := "Player One"
	frames := make([][]byte, 1024)
	// encode fills frames with the messages from id on, outside the timer: ids only grow, as a
	// channel's do, so that each dispatch is a new message.
	encode := func(id int) {
		for i := range frames {
			m := wire.LobbyMessage{ID: wire.Snowflake(1234567890123456789 + id + i), Content: "fanout " + strconv.Itoa(id+i), LobbyID: 1234567890123456788,
				ChannelID: 1234567890123456788, Author: wire.User{ID: 1234567890123456787, Username: "bench-0", Discriminator: "0", GlobalName: &gn},
				ApplicationID: 1234567890123456000, Timestamp: "2026-11-29T19:45:35.123456Z"}
			frames[i] = m.AppendJSON(frames[i][:0])
		}
	}
	encode(0)
	RunCallbacks()
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if i%len(frames) == 0 && i > 0 {
			b.StopTimer()
			encode(i)
			b.StartTimer()
		}
		c.onDispatch(wire.EventLobbyMessageCreate, frames[i%len(frames)])
		if i%16 == 15 {
			RunCallbacks()
		}
	}
	RunCallbacks()
	require.Equal(b, b.N, ran, "a callback for every message")
}
