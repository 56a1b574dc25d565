package gateway

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strconv"
	"sync"
	"sync/atomic"
	"unicode/utf8"

	"sdkpp/internal/jsonscan"
)

// decodePayload decodes one gateway payload into a new Payload.
func decodePayload(b []byte) (*Payload, error) {
	return new(received).decode(b)
}

// received is a decoded payload with the storage of its sequence number. A client decodes every
// payload it reads into its one received, which it keeps between messages: a payload allocated
// per message was the last allocation of a lobby message's receipt.
type received struct {
	p   Payload
	seq int64
}

// decode decodes one gateway payload into r and returns it; it is valid until r's next decode
// (its D is part of b). Under fan-out the client spends most of its time decoding envelopes:
// encoding/json scans a payload twice (once to validate it, once to decode) and then copies d.
// The fast path reads the envelope the service sends ({"op","d","s","t"}) in one pass,
// validating d as it goes and leaving it in place in b (b is the payload's own buffer, as
// wsConn.ReadMessage returns it). Anything it does not recognise exactly (another key, a key
// spelt differently, an escaped event name, a number that is not a plain integer, invalid JSON)
// goes to encoding/json, so the result and the errors are always encoding/json's.
func (r *received) decode(b []byte) (*Payload, error) {
	r.p = Payload{}
	if r.fast(b) {
		return &r.p, nil
	}
	r.p = Payload{}
	if err := json.Unmarshal(b, &r.p); err != nil {
		return nil, fmt.Errorf("gateway: malformed payload: %w", err)
	}
	return &r.p, nil
}

// fast is decode's one-pass path; it reports false for what encoding/json must decode, leaving r
// partly written.
func (r *received) fast(b []byte) bool {
	p := &r.p
	return jsonscan.Object(b, func(key, v []byte) bool {
		switch string(key) {
		case "op":
			n, err := strconv.ParseInt(string(v), 10, 0)
			if err != nil {
				return false
			}
			p.Op = int(n)
		case "d":
			p.D = json.RawMessage(v)
		case "s":
			if string(v) == "null" {
				p.S = nil
				break
			}
			n, err := strconv.ParseInt(string(v), 10, 64)
			if err != nil {
				return false
			}
			r.seq = n
			p.S = &r.seq
		case "t":
			switch {
			case string(v) == "null":
				// encoding/json leaves a string unchanged for null
			case len(v) >= 2 && v[0] == '"' && bytes.IndexByte(v[1:len(v)-1], '\\') < 0 && utf8.Valid(v):
				p.T = eventName(v[1 : len(v)-1])
			default:
				return false
			}
		default:
			return false
		}
		return true
	})
}

// eventNames interns event names: a service sends a few dozen kinds, and a string for each
// dispatch was one allocation per message. Readers load the map without a lock; a new name
// copies it (rare: once per kind).
var eventNames struct {
	mu sync.Mutex // serializes the writers
	m  atomic.Pointer[map[string]string]
}

// maxEventNames bounds eventNames; names beyond it are allocated each time.
const maxEventNames = 256

// eventName returns the event name b as a string, shared between dispatches of that event.
func eventName(b []byte) string {
	if m := eventNames.m.Load(); m != nil {
		if s, ok := (*m)[string(b)]; ok { // no allocation for the lookup
			return s
		}
	}
	s := string(b)
	eventNames.mu.Lock()
	defer eventNames.mu.Unlock()
	old := eventNames.m.Load()
	if old != nil && len(*old) >= maxEventNames {
		return s
	}
	next := make(map[string]string, 1+len(ptrMap(old)))
	for k, v := range ptrMap(old) {
		next[k] = v
	}
	next[s] = s
	eventNames.m.Store(&next)
	return s
}

func ptrMap(m *map[string]string) map[string]string {
	if m == nil {
		return nil
	}
	return *m
}
