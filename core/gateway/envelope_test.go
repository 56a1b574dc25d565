package gateway

import (
	"bytes"
	"encoding/json"
	"math/rand"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// decodePayload must agree with encoding/json on every input: the same payload for valid
// ones, an error for invalid ones. The service's own frames take the one-pass path.
func TestDecodePayloadAgreesWithEncodingJSON(t *testing.T) {
	fast := []string{
		`{"op":0,"d":{"id":"1","content":"hi \"there\" \u00e9\n","n":[1,-2.5e3,true,false,null,{}]},"s":42,"t":"LOBBY_MESSAGE_CREATE"}`,
		`{"op":10,"d":{"heartbeat_interval":41250},"s":null,"t":null}`,
		`{"op":11,"d":null,"s":null,"t":null}`,
		`{"op":9,"d":false,"s":null,"t":null}`,
		` { "op" : 0 , "d" : [ ] , "s" : 1 , "t" : "READY" } `,
		`{}`,
		`{"op":0,"d":{"a":{"b":[[[]]]}},"t":"X","s":7,"d":"last d wins"}`,
		`{"op":-0,"d":0}`,
	}
	// One received decodes every input in turn too, as a client's does: nothing of a payload may
	// stay in the next (a sequence number, an event name, d).
	reused := new(received)
	for _, in := range fast {
		ok := new(received).fast([]byte(in))
		assert.True(t, ok, "%s: took the slow path", in)
		agree(t, reused, []byte(in))
	}
	slow := []string{
		``, `null`, `[]`, `{"op":0`, `{"op":0,}`, `{"op":0}x`, `{"op":1.0}`, `{"op":1e2}`, `{"op":"1"}`,
		`{"op":null,"d":1}`, `{"OP":3,"T":"x"}`, `{"op":0,"other":1}`, `{"s":1.5}`, `{"s":"1"}`,
		`{"t":"A\u0042"}`, `{"t":5}`, `{"t":"bad \x01"}`, `{"t":"\xff"}`, `{"d":tru}`, `{"d":[1,]}`,
		`{"d":{"a" 1}}`, `{"d":"\q"}`, `{"d":"\u12"}`, `{"d":01}`, `{"d":1.}`, `{"d":-}`, `{"d":1e}`,
		`{"op":99999999999999999999}`, `{"d":{"a":1,}}`, `{"d":{1:2}}`, "{\"d\":\"a\nb\"}",
	}
	for _, in := range slow {
		agree(t, reused, []byte(in))
	}
	// Random damage to a real frame: whatever comes out must still agree.
	r := rand.New(rand.NewSource(1))
	base := []byte(fast[0])
	const damage = `{}[]":,\ 0123456789.eE-+tfnulx`
	for n := 0; n < 20000; n++ {
		b := bytes.Clone(base)
		for k := r.Intn(3) + 1; k > 0; k-- {
			switch i := r.Intn(len(b)); r.Intn(3) {
			case 0:
				b[i] = damage[r.Intn(len(damage))]
			case 1:
				b = append(b[:i], b[i+1:]...)
			default:
				b = append(b[:i], append([]byte{damage[r.Intn(len(damage))]}, b[i:]...)...)
			}
		}
		agree(t, reused, b)
	}
}

func agree(t *testing.T, reused *received, in []byte) {
	t.Helper()
	var want Payload
	werr := json.Unmarshal(in, &want)
	fresh, gerr := decodePayload(in)
	got, rerr := reused.decode(in)
	require.Equal(t, (gerr != nil), (werr != nil), "%q: encoding/json error %v, decodePayload error %v", in, werr, gerr)
	require.Equal(t, (rerr != nil), (werr != nil), "%q: encoding/json error %v, a reused decode's error %v", in, werr, rerr)
	if werr != nil {
		return
	}
	for _, got := range []*Payload{fresh, got} {
		require.Equal(t, want.Op, got.Op, "%q: op", in)
		require.Equal(t, want.T, got.T, "%q: t", in)
		require.Equal(t, string(want.D), string(got.D), "%q: d", in)
		require.Equal(t, want.S, got.S, "%q: s", in)
	}
}

func BenchmarkDecodePayload(b *testing.B) {
	frame := []byte(`{"op":0,"d":{"id":"1234567890123456789","lobby_id":"1234567890123456788","channel_id":"1234567890123456788","content":"fanout 123                                                                                                                                                                                                                              ","author_id":"1234567890123456787","author":{"id":"1234567890123456787","username":"bench-0","global_name":null},"metadata":{},"flags":0,"created_at":"2026-01-01T00:00:00Z"},"s":1234,"t":"LOBBY_MESSAGE_CREATE"}`)
	b.Run("decodePayload", func(b *testing.B) {
		for i := 0; i < b.N; i++ {
			if _, err := decodePayload(frame); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("encoding/json", func(b *testing.B) {
		for i := 0; i < b.N; i++ {
			var p Payload
			if err := json.Unmarshal(frame, &p); err != nil {
				b.Fatal(err)
			}
		}
	})
}
