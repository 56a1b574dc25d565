package wsframe

import (
	"encoding/json"
	"maps"
	"strconv"
	"sync/atomic"

	"sdkpp/wire"
)

// Dispatch is one dispatch a session holds for delivery and replay. Its event name and data are
// shared by every session the dispatch went to; the frame is built when it is written, so that
// a dispatch to a 100-member lobby holds its data once, not once per session.
type Dispatch struct {
	Seq   int64
	Event []byte // the JSON-quoted event name
	Data  []byte // the event's data, JSON
}

// Control encodes a payload that is not a dispatch, {"op":op,"d":d,"s":null,"t":null}; a d that
// does not encode (only the hub's own values get here) is null.
func Control(op int, d any) []byte {
	raw, err := json.Marshal(d)
	if err != nil {
		raw = []byte("null")
	}
	b := append([]byte(`{"op":`), strconv.Itoa(op)...)
	b = append(b, `,"d":`...)
	b = append(b, raw...)
	return append(b, `,"s":null,"t":null}`...)
}

// Frame is the dispatch's payload, {"op":0,"d":...,"s":...,"t":...}.
func (e Dispatch) Frame() []byte { return appendDispatch(nil, e.Seq, e.Event, e.Data) }

// appendDispatch appends {op: 0, d, s, t} to b; event is the JSON-quoted event name.
func appendDispatch(b []byte, seq int64, event, d []byte) []byte {
	if b == nil {
		b = make([]byte, 0, dispatchLen(seq, event, d))
	}
	b = append(b, `{"op":0,"d":`...)
	b = append(b, d...)
	b = append(b, `,"s":`...)
	b = strconv.AppendInt(b, seq, 10)
	b = append(b, `,"t":`...)
	b = append(b, event...)
	return append(b, '}')
}

// dispatchLen is the length of appendDispatch's payload.
func dispatchLen(seq int64, event, d []byte) int {
	digits := 1
	for v := seq; v >= 10 || v <= -10; v /= 10 {
		digits++
	}
	if seq < 0 {
		digits++
	}
	return len(`{"op":0,"d":`) + len(d) + len(`,"s":`) + digits + len(`,"t":`) + len(event) + 1
}

// eventNames holds the event names quoted by EventName, copied on write: read without a lock.
var eventNames atomic.Pointer[map[string][]byte]

// maxEventNames bounds eventNames: the service's event names are a few dozen, and one beyond
// the bound is quoted anew each time.
const maxEventNames = 256

// EventName returns name as a JSON string, for Dispatch.Event: the same bytes for every dispatch
// of the event, shared (they must not be modified), so that a push quotes no name.
func EventName(name string) []byte {
	names := eventNames.Load()
	if names != nil {
		if q, ok := (*names)[name]; ok {
			return q
		}
	}
	q := wire.AppendString(nil, name)
	if names == nil || len(*names) < maxEventNames {
		next := map[string][]byte{name: q}
		if names != nil {
			maps.Copy(next, *names)
		}
		eventNames.CompareAndSwap(names, &next) // one that lost a race is quoted again next time
	}
	return q
}
