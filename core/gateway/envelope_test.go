package gateway

import (
	"encoding/json"
	"math/rand"
	"testing"

	gwire "sdkpp/wire/gateway"

	"sdkpp/internal/jsondamage"

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
		// The service's form, which split reads from both ends, with d's strings ending like its tail.
		`{"op":0,"d":{"x":",\"s\":1,\"t\":\"Y\"}"},"s":2,"t":"Z"}`,
		`{"op":0,"d":"a\\","s":1,"t":"X"}`,
		`{"op":0,"d":[",\"s\":1,\"t\":\""],"s":0,"t":""}`,
		`{"op":0,"d":{"t":"Y","s":3},"s":123456789012345678,"t":"É"}`,
		`{"op":0,"d":1,"s":1,"t":"X","d":2,"s":3,"t":"Y"}`,
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
		`{"op":0,"d":,"s":1,"t":"X"}`, `{"op":0,"d":1,"s":1,"t":"X",}`, `{"op":0,"d":{,"s":1,"t":"X"}`,
		`{"op":0,"d":"x,"s":1,"t":"X"}`, `{"op":0,"d":1,"s":01,"t":"X"}`, `{"op":0,"d":1,"s":-1,"t":"X"}`,
		`{"op":00,"d":1,"s":1,"t":"X"}`, `{"op":0,"d":1,"s":1,"t":"\xff"}`, "{\"op\":0,\"d\":1,\"s\":1,\"t\":\"\x01\"}",
		`{"op":0,"d":1,"s":99999999999999999999,"t":"X"}`, `{"op":0,"d":1,"s":1,"t":"X"`, `{"op":0,"d":1,"t":"X"}`,
		`{"op":0,"d":1,"d":,"s":1,"t":"X"}`, `{"op":0,"d":1,"s":,"t":"X"}`,
		`{"op":0,"d":1,"s":0,"t":"X"}`, `{"op":0,"d":1,"s":10,"t":"X"}`, `{"op":0,"d":1,"s":999999999999999999,"t":"X"}`,
		`{"op":0,"d":1,"s":1000000000000000000,"t":"X"}`, `{"op":0,"d":1,"s":0010,"t":"X"}`, `{"op":0,"d":1,"s":"1","t":"X"}`,
	}
	for _, in := range slow {
		agree(t, reused, []byte(in))
	}
	// Random damage to a real frame: whatever comes out must still agree.
	r := rand.New(rand.NewSource(1))
	base := []byte(fast[0])
	for n := 0; n < 20000; n++ {
		b := jsondamage.Damage(r, base)
		agree(t, reused, b)
	}
}

// split reads the sequence number of the service's form, a plain integer of up to 18 digits, and
// leaves anything else (a leading zero, more digits, none) to the other paths.
func TestSplitSequence(t *testing.T) {
	for s, want := range map[string]int64{"0": 0, "7": 7, "10": 10, "1234567890123": 1234567890123,
		"999999999999999999": 999999999999999999, "100000000000000000": 100000000000000000} {
		var r received
		require.True(t, r.split([]byte(`{"op":0,"d":{"a":1},"s":`+s+`,"t":"X"}`)), s)
		assert.Equal(t, want, *r.p.S, s)
	}
	for _, s := range []string{"", "01", "00", "1000000000000000000", "-1", "1.0"} {
		var r received
		assert.False(t, r.split([]byte(`{"op":0,"d":{"a":1},"s":`+s+`,"t":"X"}`)), s)
	}
}

func agree(t *testing.T, reused *received, in []byte) {
	t.Helper()
	var want Payload
	werr := json.Unmarshal(in, &want)
	fresh, gerr := decodePayload(in)
	got, rerr := reused.decode(in, nil)
	agreeUnchecked(t, reused, in, werr, &want)
	got, rerr = reused.decode(in, nil) // again: agreeUnchecked decoded into reused meanwhile
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

// agreeUnchecked holds decode with Config.DataChecked to encoding/json's result want (werr its
// error) for in: with every event's data checked by the client, it agrees exactly; with none, a
// payload it reads otherwise (or reads where encoding/json fails) is a dispatch whose d is not
// valid JSON, which OnDispatch's decoder rejects. Each holds for a new received and for reused,
// which decoded other payloads before (the event name split read last, say).
func agreeUnchecked(t *testing.T, reused *received, in []byte, werr error, want *Payload) {
	t.Helper()
	for _, r := range []*received{new(received), reused} {
		got, err := r.decode(in, func(string) bool { return false })
		require.Equal(t, werr != nil, err != nil, "%q, all checked: encoding/json error %v, decode error %v", in, werr, err)
		if werr == nil {
			samePayload(t, in, want, got)
		}
	}
	for _, r := range []*received{new(received), reused} {
		noneChecked(t, r, in, werr, want)
	}
}

// noneChecked is agreeUnchecked's check with no event's data checked by the client, decoding
// into r.
func noneChecked(t *testing.T, r *received, in []byte, werr error, want *Payload) {
	t.Helper()
	got, err := r.decode(in, func(string) bool { return true })
	if err != nil {
		require.Error(t, werr, "%q, none checked: an error where encoding/json has none", in)
		return
	}
	if werr == nil && want.Op == got.Op && want.T == got.T && string(want.D) == string(got.D) &&
		assert.ObjectsAreEqual(want.S, got.S) {
		return
	}
	require.False(t, json.Valid(got.D), "%q, none checked: a valid d where encoding/json reads %v", in, werr)
	require.Equal(t, gwire.OpDispatch, got.Op, "%q: an unchecked d outside a dispatch", in)
	require.NotContains(t, []string{gwire.EventReady, gwire.EventResumed}, got.T, "%q: READY or RESUMED unchecked", in)
}

func samePayload(t *testing.T, in []byte, want, got *Payload) {
	t.Helper()
	require.Equal(t, want.Op, got.Op, "%q: op", in)
	require.Equal(t, want.T, got.T, "%q: t", in)
	require.Equal(t, string(want.D), string(got.D), "%q: d", in)
	require.Equal(t, want.S, got.S, "%q: s", in)
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

// FuzzDecodePayload holds decode, with and without Config.DataChecked, to encoding/json on any
// input (agree, agreeUnchecked).
func FuzzDecodePayload(f *testing.F) {
	f.Add([]byte(`{"op":0,"d":{"id":"1","content":"hi"},"s":42,"t":"LOBBY_MESSAGE_CREATE"}`))
	f.Add([]byte(`{"op":0,"d":{"x":",\"s\":1,\"t\":\"Y\"}"},"s":2,"t":"Z"}`))
	f.Add([]byte(`{"op":0,"d":1,"s":1,"t":"X","d":2,"s":3,"t":"Y"}`))
	f.Add([]byte(`{"op":10,"d":{"heartbeat_interval":41250},"s":null,"t":null}`))
	reused := new(received)
	f.Fuzz(func(t *testing.T, in []byte) { agree(t, reused, in) })
}
