package jsonscan

import (
	"bytes"
	"os"
	"runtime"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// lobbyMessage is the d of a LOBBY_MESSAGE_CREATE as the service writes it (wire.LobbyMessage's
// AppendJSON): 30 members, ids as strings, a few nested objects.
const lobbyMessage = `{"id":"1477636521984000028","type":0,"content":"gg, ready for the next round? meet at the north gate",` +
	`"lobby_id":"1477636521984000029","channel_id":"1477636521984000029","author":{"id":"1477636521984000030",` +
	`"username":"player_one","discriminator":"0","global_name":"Player One","avatar":null,"premium_type":0,"flags":0,` +
	`"public_flags":64,"is_provisional":false},"lobby_member":{"additional_name":"Captain"},"metadata":null,` +
	`"moderation_metadata":null,"flags":0,"application_id":"1477636521984000001",` +
	`"timestamp":"2026-11-29T19:45:35.123456+00:00","edited_timestamp":null}`

// dispatchFrame is the gateway payload a member's client receives for it.
var dispatchFrame = []byte(`{"op":0,"d":` + lobbyMessage + `,"s":1234,"t":"LOBBY_MESSAGE_CREATE"}`)

// groupEnvelope is a bus group envelope (busmsg's Encode) of 4 such messages to a 10-member lobby.
var groupEnvelope = func() []byte {
	ids := make([]string, 10)
	for i := range ids {
		ids[i] = strconv.FormatUint(1477636521984000000+uint64(i)<<22, 10)
	}
	g := make([]string, 4)
	for i := range g {
		g[i] = `{"ul":1,"a":1477636521984000001,"e":"LOBBY_MESSAGE_CREATE","d":` + lobbyMessage + `}`
	}
	return []byte(`{"t":"g","p":1764445535123456789,"ut":[[` + strings.Join(ids, ",") + `]],"g":[` + strings.Join(g, ",") + `],"e":""}`)
}()

// walk is what the clients and the service do with such a payload: the envelope's members, and
// the objects inside them walked again with their strings read (core/gateway, then wire's
// decodeLobbyMessage; busmsg's decodeEnvelope).
func walk(b []byte) bool {
	var inner func(k, v []byte) bool
	inner = func(k, v []byte) bool {
		switch v[0] {
		case '{':
			return Object(v, inner)
		case '"':
			_, ok := Plain(v)
			return ok
		case '[':
			end, ok := Value(v, 0)
			return ok && end == len(v)
		}
		return true
	}
	return Object(b, inner)
}

func BenchmarkPayload(b *testing.B) {
	for _, bc := range []struct {
		name string
		in   []byte
	}{{"dispatch", dispatchFrame}, {"group", groupEnvelope}} {
		require.True(b, Valid(bc.in) && walk(bc.in), "%s is valid JSON, as walked", bc.name)
		b.Run(bc.name+"/Valid", func(b *testing.B) {
			b.SetBytes(int64(len(bc.in)))
			defer cpuPerOp(b)()
			for b.Loop() {
				if !Valid(bc.in) {
					b.Fatal()
				}
			}
		})
		b.Run(bc.name+"/Object", func(b *testing.B) {
			b.SetBytes(int64(len(bc.in)))
			defer cpuPerOp(b)()
			for b.Loop() {
				if !Object(bc.in, func(_, _ []byte) bool { return true }) {
					b.Fatal()
				}
			}
		})
		b.Run(bc.name+"/walk", func(b *testing.B) {
			b.SetBytes(int64(len(bc.in)))
			defer cpuPerOp(b)()
			for b.Loop() {
				if !walk(bc.in) {
					b.Fatal()
				}
			}
		})
	}
}

// cpuPerOp starts counting the CPU time the benchmark's thread runs, and returns what reports it
// per operation (cpu-ns/op): on a machine shared with other work, the wall time per operation
// counts the time others ran too. Nothing is reported where the kernel does not tell it.
func cpuPerOp(b *testing.B) func() {
	runtime.LockOSThread()
	start, ok := threadCPU()
	return func() {
		end, ok2 := threadCPU()
		runtime.UnlockOSThread()
		if ok && ok2 && b.N > 0 {
			b.ReportMetric(float64(end-start)/float64(b.N), "cpu-ns/op")
		}
	}
}

// threadCPU is the time the calling thread has run, in nanoseconds (Linux's schedstat).
func threadCPU() (int64, bool) {
	s, err := os.ReadFile("/proc/thread-self/schedstat")
	if err != nil {
		return 0, false
	}
	f := bytes.Fields(s)
	if len(f) == 0 {
		return 0, false
	}
	n, err := strconv.ParseInt(string(f[0]), 10, 64)
	return n, err == nil
}
