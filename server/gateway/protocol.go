package gateway

import (
	"encoding/json"
	"strconv"
)

// controlFrame encodes a non-dispatch payload {op, d, s: null, t: null}.
func controlFrame(op int, d any) []byte {
	raw, err := json.Marshal(d)
	if err != nil { // only the hub's own values get here
		raw = []byte("null")
	}
	b := append([]byte(`{"op":`), strconv.Itoa(op)...)
	b = append(b, `,"d":`...)
	b = append(b, raw...)
	return append(b, `,"s":null,"t":null}`...)
}

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
