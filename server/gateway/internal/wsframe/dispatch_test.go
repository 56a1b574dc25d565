package wsframe

import (
	"encoding/json"
	"math"
	"strconv"
	"testing"

	"github.com/stretchr/testify/assert"
)

// A dispatch's frame is the payload {"op":0,"d":...,"s":...,"t":...}, and dispatchLen, which
// sizes the frame's header before the payload is built, is its length for every number of digits.
func TestDispatchFrame(t *testing.T) {
	for _, seq := range []int64{0, 1, 9, 10, 99, 9001, -1, -10, math.MaxInt64, math.MinInt64} {
		e := Dispatch{Seq: seq, Event: []byte(`"N"`), Data: []byte(`{"a":1}`)}
		f := e.Frame()
		assert.Equal(t, `{"op":0,"d":{"a":1},"s":`+strconv.FormatInt(seq, 10)+`,"t":"N"}`, string(f))
		assert.Len(t, f, dispatchLen(e.Seq, e.Event, e.Data), "seq %d", seq)
	}
}

// EventName quotes a name as encoding/json does, and gives the same bytes for it every time,
// up to a bound of names; past it, a name is quoted anew, still right.
func TestEventName(t *testing.T) {
	a := EventName("LOBBY_MESSAGE_CREATE")
	assert.Equal(t, `"LOBBY_MESSAGE_CREATE"`, string(a))
	assert.Same(t, &a[0], &EventName("LOBBY_MESSAGE_CREATE")[0], "shared")
	assert.Equal(t, `"a\"b"`, string(EventName(`a"b`)))
	assert.Zero(t, testing.AllocsPerRun(100, func() { EventName("LOBBY_MESSAGE_CREATE") }))
	for i := range maxEventNames + 10 {
		name := "E" + strconv.Itoa(i)
		assert.Equal(t, `"`+name+`"`, string(EventName(name)))
	}
	assert.Len(t, *eventNames.Load(), maxEventNames, "bounded")
	assert.Equal(t, `"LOBBY_MESSAGE_CREATE"`, string(EventName("LOBBY_MESSAGE_CREATE")))
}

// A control payload is the JSON object {op, d, s: null, t: null}, as encoding/json writes it;
// a d that does not encode is null.
func TestControl(t *testing.T) {
	for _, tc := range []struct {
		op int
		d  any
	}{{10, map[string]int64{"heartbeat_interval": 41250}}, {11, nil}, {9, false}, {7, "<&>"}, {1, func() {}}} {
		d, err := json.Marshal(tc.d)
		if err != nil {
			d = []byte("null")
		}
		want, _ := json.Marshal(map[string]json.RawMessage{"op": json.RawMessage(strconv.Itoa(tc.op)), "d": d, "s": nil, "t": nil})
		assert.JSONEq(t, string(want), string(Control(tc.op, tc.d)), "op %d", tc.op)
	}
}
