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
