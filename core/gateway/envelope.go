package gateway

import (
	"encoding/json"
	"fmt"
	"strconv"
	"sync"
	"sync/atomic"
	"unicode/utf8"
)

// decodePayload decodes one gateway payload. Under fan-out the client spends most of its time
// decoding envelopes: encoding/json scans a payload twice (once to validate it, once to decode)
// and then copies d. The fast path reads the envelope the service sends ({"op","d","s","t"}) in
// one pass, validating d as it goes and leaving it in place in b (b is the payload's own
// buffer, as websocket.Conn.Read returns it). Anything it does not recognise exactly (another
// key, a key spelt differently, an escaped event name, a number that is not a plain integer,
// invalid JSON) goes to encoding/json, so the result and the errors are always encoding/json's.
func decodePayload(b []byte) (*Payload, error) {
	if p, ok := fastPayload(b); ok {
		return p, nil
	}
	var p Payload
	if err := json.Unmarshal(b, &p); err != nil {
		return nil, fmt.Errorf("gateway: malformed payload: %w", err)
	}
	return &p, nil
}

// maxDepth is encoding/json's nesting limit; deeper values take the slow path, which rejects them.
const maxDepth = 10000

func fastPayload(b []byte) (*Payload, bool) {
	// The payload and its sequence number in one allocation.
	w := new(struct {
		p   Payload
		seq int64
	})
	p := &w.p
	i := ws(b, 0)
	if i >= len(b) || b[i] != '{' {
		return nil, false
	}
	i = ws(b, i+1)
	if i < len(b) && b[i] == '}' {
		return p, ws(b, i+1) == len(b)
	}
	for {
		if i >= len(b) || b[i] != '"' {
			return nil, false
		}
		end, ok := skipString(b, i)
		if !ok {
			return nil, false
		}
		key := string(b[i+1 : end-1]) // no allocation: only compared
		i = ws(b, end)
		if i >= len(b) || b[i] != ':' {
			return nil, false
		}
		i = ws(b, i+1)
		start := i
		if end, ok = skipValue(b, i, 0); !ok {
			return nil, false
		}
		v := b[start:end]
		switch key {
		case "op":
			n, err := strconv.ParseInt(string(v), 10, 0)
			if err != nil {
				return nil, false
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
				return nil, false
			}
			w.seq = n
			p.S = &w.seq
		case "t":
			switch {
			case string(v) == "null":
				// encoding/json leaves a string unchanged for null
			case len(v) >= 2 && v[0] == '"' && !hasByte(v[1:len(v)-1], '\\') && utf8.Valid(v):
				p.T = eventName(v[1 : len(v)-1])
			default:
				return nil, false
			}
		default:
			return nil, false
		}
		i = ws(b, end)
		if i >= len(b) {
			return nil, false
		}
		if b[i] == '}' {
			return p, ws(b, i+1) == len(b)
		}
		if b[i] != ',' {
			return nil, false
		}
		i = ws(b, i+1)
	}
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

func hasByte(b []byte, c byte) bool {
	for _, x := range b {
		if x == c {
			return true
		}
	}
	return false
}

// ws skips JSON white space from i.
func ws(b []byte, i int) int {
	for i < len(b) && (b[i] == ' ' || b[i] == '\t' || b[i] == '\n' || b[i] == '\r') {
		i++
	}
	return i
}

// skipValue returns the end of the JSON value at b[i], and false when it is not valid JSON.
func skipValue(b []byte, i, depth int) (int, bool) {
	if i >= len(b) {
		return 0, false
	}
	switch c := b[i]; {
	case c == '"':
		return skipString(b, i)
	case c == '{' || c == '[':
		if depth >= maxDepth {
			return 0, false
		}
		return skipComposite(b, i, depth+1)
	case c == '-' || (c >= '0' && c <= '9'):
		return skipNumber(b, i)
	case c == 't':
		return skipLiteral(b, i, "true")
	case c == 'f':
		return skipLiteral(b, i, "false")
	case c == 'n':
		return skipLiteral(b, i, "null")
	}
	return 0, false
}

func skipLiteral(b []byte, i int, lit string) (int, bool) {
	if len(b)-i < len(lit) || string(b[i:i+len(lit)]) != lit {
		return 0, false
	}
	return i + len(lit), true
}

// skipComposite skips the object or array at b[i].
func skipComposite(b []byte, i, depth int) (int, bool) {
	object := b[i] == '{'
	closer := byte(']')
	if object {
		closer = '}'
	}
	i = ws(b, i+1)
	if i < len(b) && b[i] == closer {
		return i + 1, true
	}
	for {
		var ok bool
		if object {
			if i >= len(b) || b[i] != '"' {
				return 0, false
			}
			if i, ok = skipString(b, i); !ok {
				return 0, false
			}
			i = ws(b, i)
			if i >= len(b) || b[i] != ':' {
				return 0, false
			}
			i = ws(b, i+1)
		}
		if i, ok = skipValue(b, i, depth); !ok {
			return 0, false
		}
		i = ws(b, i)
		if i >= len(b) {
			return 0, false
		}
		if b[i] == closer {
			return i + 1, true
		}
		if b[i] != ',' {
			return 0, false
		}
		i = ws(b, i+1)
	}
}

// skipString skips the string at b[i] (which is '"').
func skipString(b []byte, i int) (int, bool) {
	for i++; i < len(b); i++ {
		switch c := b[i]; {
		case c == '"':
			return i + 1, true
		case c < 0x20:
			return 0, false
		case c == '\\':
			i++
			if i >= len(b) {
				return 0, false
			}
			switch b[i] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
			case 'u':
				if len(b)-i < 5 {
					return 0, false
				}
				for _, h := range b[i+1 : i+5] {
					if !isHex(h) {
						return 0, false
					}
				}
				i += 4
			default:
				return 0, false
			}
		}
	}
	return 0, false
}

func isHex(c byte) bool {
	return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F')
}

// skipNumber skips the number at b[i]: -?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?
func skipNumber(b []byte, i int) (int, bool) {
	if b[i] == '-' {
		i++
	}
	switch {
	case i < len(b) && b[i] == '0':
		i++
	case i < len(b) && b[i] >= '1' && b[i] <= '9':
		i = digits(b, i)
	default:
		return 0, false
	}
	if i < len(b) && b[i] == '.' {
		j := digits(b, i+1)
		if j == i+1 {
			return 0, false
		}
		i = j
	}
	if i < len(b) && (b[i] == 'e' || b[i] == 'E') {
		i++
		if i < len(b) && (b[i] == '+' || b[i] == '-') {
			i++
		}
		j := digits(b, i)
		if j == i {
			return 0, false
		}
		i = j
	}
	return i, true
}

func digits(b []byte, i int) int {
	for i < len(b) && b[i] >= '0' && b[i] <= '9' {
		i++
	}
	return i
}
