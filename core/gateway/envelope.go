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
	gwire "sdkpp/wire/gateway"
)

// decodePayload decodes one gateway payload into a new Payload.
func decodePayload(b []byte) (*Payload, error) {
	return new(received).decode(b, nil)
}

// received is a decoded payload with the storage of its sequence number. A client decodes every
// payload it reads into its one received, which it keeps between messages: a payload allocated
// per message was the last allocation of a lobby message's receipt.
type received struct {
	p   Payload
	seq int64
	// last is the event name of the last dispatch split read: under fan-out most dispatches are
	// of one event, whose name is then neither checked nor looked up again.
	last string
}

// decode decodes one gateway payload into r and returns it; it is valid until r's next decode
// (its D is part of b). Under fan-out the client spends most of its time decoding envelopes:
// encoding/json scans a payload twice (once to validate it, once to decode) and then copies d.
// The fast path reads the envelope the service sends ({"op","d","s","t"}) in one pass,
// validating d as it goes and leaving it in place in b (b is the payload's own buffer, as
// wsConn.ReadMessage returns it). Anything it does not recognise exactly (another key, a key
// spelt differently, an escaped event name, a number that is not a plain integer, invalid JSON)
// goes to encoding/json, so the result and the errors are always encoding/json's.
//
// With checked (Config.DataChecked), a dispatch's d that its OnDispatch checks is not scanned at
// all: split reads the envelope around it, and OnDispatch's decoder, which rejects what is not
// valid JSON, is its one check (encoding/json, or a jsonscan decoder, scanned d a second time).
func (r *received) decode(b []byte, checked func(event string) bool) (*Payload, error) {
	r.p = Payload{}
	if checked != nil && r.split(b) {
		if r.p.Op == gwire.OpDispatch && r.p.T != gwire.EventReady && r.p.T != gwire.EventResumed && checked(r.p.T) {
			return &r.p, nil
		}
		if jsonscan.Valid(r.p.D) { // then b is valid, and split read it as encoding/json does
			return &r.p, nil
		}
		r.p = Payload{}
	}
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

// split reads a payload in exactly the form the service writes a dispatch in,
// {"op":N,"d":D,"s":N,"t":"NAME"} without white space, from both ends, leaving D unscanned: the
// head from the front, the tail from the back. It reports false for any other form, leaving r
// partly written. When D is one valid JSON value, b is valid JSON with exactly these four members
// and the result is encoding/json's (every quote split reads is preceded by a byte that is not a
// backslash, so it delimits a string, and the bytes around it fix which). When D is not, b may
// still be valid JSON (D holding more members, a duplicate "d" the last one) that encoding/json
// reads otherwise: so D must be checked before it is used, as decode does.
func (r *received) split(b []byte) bool {
	const head, dKey, sKey = `{"op":`, `,"d":`, `,"s":`
	if len(b) < len(head) || string(b[:len(head)]) != head {
		return false
	}
	op, i, ok := leadingInt(b, len(head))
	if !ok || len(b)-i < len(dKey) || string(b[i:i+len(dKey)]) != dKey {
		return false
	}
	start := i + len(dKey)
	// The tail, backwards: "}, the event name, ,"t":", s's digits, ,"s":.
	end := len(b) - 2
	if end <= start || b[end] != '"' || b[end+1] != '}' {
		return false
	}
	open := bytes.LastIndexByte(b[start:end], '"')
	if open < 0 {
		return false
	}
	open += start
	name := b[open+1 : end]
	const tMark = `,"t":`
	j := open - len(tMark)
	if j <= start || string(b[j:open]) != tMark {
		return false
	}
	same := string(name) == r.last // plain already: r.last is a name plainName accepted
	if !same && !plainName(name) {
		return false
	}
	// s's digits, read once, backwards: a plain JSON integer (no sign, no leading zero) as
	// leadingInt reads it, of 18 digits at most, which never overflow.
	k, seq, unit := j, int64(0), int64(1)
	for k > start && b[k-1] >= '0' && b[k-1] <= '9' {
		if j-k == 18 {
			return false
		}
		k--
		seq += int64(b[k]-'0') * unit
		unit *= 10
	}
	if k == j || (b[k] == '0' && j-k > 1) || k-len(sKey) <= start || string(b[k-len(sKey):k]) != sKey {
		return false
	}
	d := b[start : k-len(sKey)]
	if d[0] <= ' ' || d[len(d)-1] <= ' ' { // white space around d, which encoding/json leaves out
		return false
	}
	if !same {
		r.last = eventName(name)
	}
	r.p.Op, r.seq = int(op), seq
	r.p.S, r.p.D, r.p.T = &r.seq, json.RawMessage(d), r.last
	return true
}

// leadingInt reads the JSON integer of plain digits (no sign, no leading zero) at b[i:] up to the
// first other byte or b's end, returning it and where it ends; false when there is none or it
// overflows an int64.
func leadingInt(b []byte, i int) (int64, int, bool) {
	j := i
	for j < len(b) && b[j] >= '0' && b[j] <= '9' {
		j++
	}
	if j == i || (b[i] == '0' && j > i+1) || j-i > 18 { // 18 digits never overflow
		return 0, 0, false
	}
	var n int64
	for _, c := range b[i:j] {
		n = n*10 + int64(c-'0')
	}
	return n, j, true
}

// plainName reports whether name is the text of a JSON string as it is, with nothing to decode:
// no quote, backslash or control character, valid UTF-8.
func plainName(name []byte) bool {
	for _, c := range name {
		if c < 0x20 || c == '"' || c == '\\' {
			return false
		}
	}
	return utf8.Valid(name)
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
