package busmsg

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"

	"sdkpp/internal/jsonscan"
	"sdkpp/wire"
)

// Decode decodes msg, an encoded Envelope, into e (overwritten whole), as json.Unmarshal does
// and then with each dispatch's users taken from the message's table of user lists (Lists,
// List). Dispatches and groups of them are read in one pass without reflection, and their
// Data shares msg's bytes (msg must not change after); anything else (another Type, a key or
// value written as this package does not write it, a malformed message) is read by
// encoding/json, which also gives the errors.
//
// A group whose dispatches carry their users inline ("u"), as nodes of builds before the table
// wrote them, decodes as well: a node of the previous build may still publish during an
// upgrade, and the outbox may hold its messages for a relay or a replay.
func Decode(msg []byte, e *Envelope) error {
	*e = Envelope{}
	if decodeEnvelope(msg, e) && e.resolve() == nil {
		return nil
	}
	*e = Envelope{}
	if err := json.Unmarshal(msg, e); err != nil {
		return err
	}
	return e.resolve()
}

// resolve sets the users of e's dispatches that name a list of e's table (List), and drops
// the table.
func (e *Envelope) resolve() error {
	if err := e.Dispatch.resolve(e.Lists); err != nil {
		return err
	}
	for i := range e.Group {
		if err := e.Group[i].resolve(e.Lists); err != nil {
			return err
		}
	}
	e.Lists = nil
	return nil
}

func (d *Dispatch) resolve(lists []Users) error {
	if d.List == 0 {
		return nil
	}
	if d.List < 0 || d.List > len(lists) || d.Users != nil {
		return fmt.Errorf("busmsg: dispatch %s: no user list %d", d.Event, d.List)
	}
	d.Users, d.List = lists[d.List-1], 0
	return nil
}

// Envelope keys that decodeEnvelope reads, as bits, to refuse a key given twice (encoding/json
// would merge a repeated group into the first one's elements: left to it).
const (
	keyT = 1 << iota
	keyP
	keyG
	keyUT
	keyU
	keyUL
	keyK
	keyA
	keyI
	keyS
	keyTo
	keyE
	keyD
)

// decodeEnvelope is Decode's one pass for a dispatch or a group; false when msg is anything
// else, and e may then hold part of it.
func decodeEnvelope(msg []byte, e *Envelope) bool {
	var seen uint32
	return jsonscan.Object(msg, func(k, v []byte) bool {
		var bit uint32
		ok := false
		switch string(k) {
		case "t":
			bit = keyT
			e.Type, ok = plainString(v)
		case "p":
			bit = keyP
			e.Sent, ok = intValue(v)
		case "g":
			bit = keyG
			// Room for each "e" (at most MaxGroup); empty, not nil, as encoding/json reads [].
			e.Group = make([]Dispatch, 0, min(bytes.Count(v, []byte(`"e"`)), MaxGroup))
			ok = elements(v, func(d []byte) bool {
				e.Group = append(e.Group, Dispatch{})
				return decodeDispatch(d, &e.Group[len(e.Group)-1])
			})
		case "ut":
			bit = keyUT
			e.Lists = []Users{}
			ok = elements(v, func(l []byte) bool {
				ids, ok := plainIDs(l, idsFor(l))
				e.Lists = append(e.Lists, ids)
				return ok
			})
		default:
			bit, ok = dispatchField(k, v, &e.Dispatch)
		}
		if !ok || seen&bit != 0 {
			return false
		}
		seen |= bit
		return true
	})
}

// decodeDispatch reads the object b, a group's dispatch, into d; false when it cannot exactly.
func decodeDispatch(b []byte, d *Dispatch) bool {
	var seen uint32
	return jsonscan.Object(b, func(k, v []byte) bool {
		bit, ok := dispatchField(k, v, d)
		if !ok || seen&bit != 0 {
			return false
		}
		seen |= bit
		return true
	})
}

// dispatchField reads the member k: v of a dispatch into d, and returns its key's bit; false
// for a key or value it does not read exactly as encoding/json would (null among them: it
// leaves a field as it was).
func dispatchField(k, v []byte, d *Dispatch) (uint32, bool) {
	var ok bool
	switch string(k) {
	case "u":
		d.Users, ok = plainIDs(v, idsFor(v))
		return keyU, ok
	case "ul":
		var n int64
		n, ok = intValue(v)
		d.List = int(n)
		return keyUL, ok && int64(d.List) == n
	case "k":
		n, err := strconv.ParseUint(string(v), 10, 8)
		d.Kind = FilterKind(n)
		return keyK, err == nil
	case "a":
		d.App, ok = uintValue(v)
		return keyA, ok
	case "i":
		d.Intent, ok = uintValue(v)
		return keyI, ok
	case "s":
		d.Split, ok = uintValue(v)
		return keyS, ok
	case "to":
		d.To, ok = plainString(v)
		return keyTo, ok
	case "e":
		d.Event, ok = plainString(v)
		return keyE, ok
	case "d":
		d.Data = v // valid JSON (jsonscan.Object); encoding/json would copy it
		return keyD, string(v) != "null"
	}
	return 0, false
}

// idsFor is room for the ids of v, a JSON array of them (one more than its commas).
func idsFor(v []byte) []uint64 { return make([]uint64, 0, bytes.Count(v, []byte{','})+1) }

// elements calls fn with each element of the JSON array v (valid JSON, as jsonscan.Object
// gives it), in order; false when v is not an array or fn returned false.
func elements(v []byte, fn func(el []byte) bool) bool {
	if len(v) == 0 || v[0] != '[' {
		return false
	}
	i := jsonscan.Space(v, 1)
	if v[i] == ']' {
		return true
	}
	for {
		end, ok := jsonscan.Value(v, i)
		if !ok || !fn(v[i:end]) {
			return false
		}
		i = jsonscan.Space(v, end)
		if v[i] == ']' {
			return true
		}
		i = jsonscan.Space(v, i+1) // a ','
	}
}

// plainString is a JSON string without escapes (jsonscan.Plain); false for anything else.
func plainString(v []byte) (string, bool) { return jsonscan.Plain(v) }

// intValue and uintValue read a JSON integer (v is a valid JSON number or other value) as
// encoding/json reads it into an int64 or a uint64; false for a fraction, an exponent, a value
// out of range or anything but a number.
func intValue(v []byte) (int64, bool) {
	n, err := strconv.ParseInt(string(v), 10, 64)
	return n, err == nil
}

func uintValue(v []byte) (uint64, bool) {
	n, err := strconv.ParseUint(string(v), 10, 64)
	return n, err == nil
}

// errNotJSON is a dispatch's data that is not one valid JSON value.
var errNotJSON = errors.New("data is not JSON")

// appendDispatch appends d's members after the users, as json.Marshal writes them, and the
// closing brace: `"k":1,...,"e":"E","d":...}` (the users are the caller's: inline or a list's
// number). The data is written compact, with encoding/json's HTML escapes.
func appendDispatch(b []byte, d *Dispatch) ([]byte, error) {
	if d.Kind != 0 {
		b = strconv.AppendUint(append(b, `,"k":`...), uint64(d.Kind), 10)
	}
	if d.App != 0 {
		b = strconv.AppendUint(append(b, `,"a":`...), d.App, 10)
	}
	if d.Intent != 0 {
		b = strconv.AppendUint(append(b, `,"i":`...), d.Intent, 10)
	}
	if d.Split != 0 {
		b = strconv.AppendUint(append(b, `,"s":`...), d.Split, 10)
	}
	if d.To != "" {
		b = wire.AppendString(append(b, `,"to":`...), d.To)
	}
	b = wire.AppendString(append(b, `,"e":`...), d.Event)
	if len(d.Data) > 0 {
		var ok bool
		if b, ok = appendCompact(append(b, `,"d":`...), d.Data); !ok {
			return b, errNotJSON
		}
	}
	return append(b, '}'), nil
}

// appendCompact appends raw, one JSON value, without white space outside its strings, as
// json.Marshal writes a json.RawMessage; false when raw is not valid JSON. Text that
// encoding/json escapes for HTML ('<', '>', '&', U+2028, U+2029) is left to it.
func appendCompact(b, raw []byte) ([]byte, bool) {
	if !jsonscan.Valid(raw) {
		return b, false
	}
	start := len(b)
	for i := 0; i < len(raw); {
		switch c := raw[i]; c {
		case ' ', '\t', '\n', '\r':
			i++
		case '<', '>', '&', 0xE2: // 0xE2 starts U+2028 and U+2029 (and others: rare)
			m, err := json.Marshal(json.RawMessage(raw))
			return append(b[:start], m...), err == nil
		case '"':
			end, _ := jsonscan.String(raw, i)
			if slices.ContainsFunc(raw[i:end], func(c byte) bool { return c == '<' || c == '>' || c == '&' || c == 0xE2 }) {
				m, err := json.Marshal(json.RawMessage(raw))
				return append(b[:start], m...), err == nil
			}
			b, i = append(b, raw[i:end]...), end
		default:
			b = append(b, c)
			i++
		}
	}
	return b, true
}

// appendIDs appends ids as a JSON array.
func appendIDs(b []byte, ids []uint64) []byte {
	b = append(b, '[')
	for i, id := range ids {
		if i > 0 {
			b = append(b, ',')
		}
		b = strconv.AppendUint(b, id, 10)
	}
	return append(b, ']')
}
