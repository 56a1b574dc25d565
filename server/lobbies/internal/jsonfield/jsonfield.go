// Package jsonfield reads a request body's JSON object field by field, so that a wrong type is
// a 50035 naming its field (the platform's answer) rather than a generic invalid-JSON error.
// Unknown fields are ignored; no error message repeats a value (a lobby secret must never be
// echoed or logged). The usual body is read in one pass (jsonscan) and its fields are kept
// without a map; encoding/json reads the rest, with the same results.
package jsonfield

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"unicode/utf8"

	"sdkpp/internal/jsonscan"
	"sdkpp/wire"
)

// Fields is a JSON object being read; Path locates it in the body ("" for the body itself). Its
// members are a list, in order, searched by name: the few fields of a body need no map, and
// their keys no strings.
type Fields struct {
	Path string
	kv   []Member
}

// Member is a member of a JSON object: its key, unescaped, and its raw value.
type Member struct {
	key []byte
	v   json.RawMessage
}

// Raw returns the raw value of field name; of a name given more than once, the last, as
// encoding/json reads it.
func (f Fields) Raw(name string) (json.RawMessage, bool) {
	for i := len(f.kv) - 1; i >= 0; i-- {
		if string(f.kv[i].key) == name {
			return f.kv[i].v, true
		}
	}
	return nil, false
}

// Join appends a field name to a path.
func Join(path, name string) string {
	if path == "" {
		return name
	}
	return path + "." + name
}

// Object reads raw as a JSON object; null reads as an empty object.
func Object(raw json.RawMessage, path string) (Fields, error) { return ObjectIn(raw, path, nil) }

// ObjectIn is Object with its members appended to buf, which a caller may give room on its stack.
// raw need not be valid JSON: invalid JSON is the error of a body that is (wire.InvalidJSON).
func ObjectIn(raw json.RawMessage, path string, buf []Member) (Fields, error) {
	f := Fields{Path: path, kv: buf[:0]}
	if IsNull(raw) {
		return f, nil
	}
	// One pass (jsonscan) for the usual object; encoding/json for the rest, and for its errors.
	if jsonscan.Object(raw, func(k, v []byte) bool { f.kv = append(f.kv, Member{k, v}); return true }) {
		return f, nil
	}
	f.kv = f.kv[:0]
	if !json.Valid(raw) { // raw was not checked before (a body ObjectIn checks)
		return f, wire.InvalidJSON()
	}
	var m map[string]json.RawMessage
	if err := json.Unmarshal(raw, &m); err != nil {
		return f, wire.InvalidAt(path, "DICT_TYPE_CONVERT", "Only dictionaries may be used in a DictType")
	}
	for k, v := range m { // one member per key: their order does not matter
		f.kv = append(f.kv, Member{[]byte(k), v})
	}
	return f, nil
}

// IsNull reports whether raw is JSON's null.
func IsNull(raw json.RawMessage) bool { return bytes.Equal(bytes.TrimSpace(raw), []byte("null")) }

// String reads a string field at path.
func String(raw json.RawMessage, path string) (string, error) {
	s, ok := StringOf(raw)
	if !ok {
		return "", wire.InvalidAt(path, "STRING_TYPE_CONVERT", "Could not interpret the value as string.")
	}
	return s, nil
}

// StringOf reads raw, one valid JSON value, as a string, and reports whether it is one.
func StringOf(raw json.RawMessage) (string, bool) {
	if s, ok := jsonscan.Plain(raw); ok { // the usual string, read in one pass
		return s, true
	}
	return decodeString(raw)
}

// decodeString decodes the JSON string raw with encoding/json, for what jsonscan.Plain does not
// read; its variable goes to the heap in this function only, not on the plain path.
func decodeString(raw json.RawMessage) (string, bool) {
	var s string
	return s, json.Unmarshal(raw, &s) == nil
}

// Int reads an integer field at path (not one given as a string).
func Int(raw json.RawMessage, path string) (int64, error) {
	if v, ok := plainInt(raw); ok {
		return v, nil
	}
	var n json.Number
	if err := json.Unmarshal(raw, &n); err == nil {
		if v, err := n.Int64(); err == nil && !strings.HasPrefix(string(bytes.TrimSpace(raw)), `"`) {
			return v, nil
		}
	}
	return 0, wire.InvalidAt(path, "NUMBER_TYPE_COERCE", "The value is not int.")
}

// plainInt reads raw, one valid JSON value, when it is an integer of at most 18 digits: what
// json.Number's Int64 reads, without encoding/json. Longer ones are left to it.
func plainInt(raw []byte) (int64, bool) {
	digits := bytes.TrimPrefix(raw, []byte("-"))
	if len(digits) == 0 || len(digits) > 18 {
		return 0, false
	}
	var v int64
	for _, c := range digits {
		if c < '0' || c > '9' {
			return 0, false
		}
		v = v*10 + int64(c-'0')
	}
	if len(digits) < len(raw) {
		v = -v
	}
	return v, true
}

// Bool reads a boolean field at path.
func Bool(raw json.RawMessage, path string) (bool, error) {
	if v := string(raw); v == "true" || v == "false" { // as encoding/json reads them, without its reflection
		return v == "true", nil
	}
	var b bool
	if err := json.Unmarshal(raw, &b); err != nil {
		return false, wire.InvalidAt(path, "BOOLEAN_TYPE_CONVERT", "The value must be one of (false, true).")
	}
	return b, nil
}

// Snowflake reads an id given as a decimal string or a number.
func Snowflake(raw json.RawMessage, path string) (uint64, error) {
	var v any
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	if dec.Decode(&v) == nil {
		var s string
		switch x := v.(type) {
		case string:
			s = x
		case json.Number:
			s = x.String()
		}
		if id, ok := wire.ParseSnowflake(s); ok && s == strings.TrimSpace(s) {
			return uint64(id), nil
		}
	}
	return 0, wire.InvalidAt(path, "NUMBER_TYPE_COERCE", "The value is not snowflake.")
}

// Props reads a string map at path.
func Props(raw json.RawMessage, path string) (map[string]string, error) {
	var m map[string]json.RawMessage
	if err := json.Unmarshal(raw, &m); err != nil || m == nil {
		return nil, wire.InvalidAt(path, "DICT_TYPE_CONVERT", "Only dictionaries may be used in a DictType")
	}
	out := make(map[string]string, len(m))
	for k, v := range m {
		var s string
		if err := json.Unmarshal(v, &s); err != nil || IsNull(v) {
			return nil, wire.InvalidAt(path, "STRING_TYPE_CONVERT", "Every value must be a string.")
		}
		out[k] = s
	}
	return out, nil
}

// Array reads an array field at path.
func Array(raw json.RawMessage, path string) ([]json.RawMessage, error) {
	var a []json.RawMessage
	if err := json.Unmarshal(raw, &a); err != nil || a == nil {
		return nil, wire.InvalidAt(path, "LIST_TYPE_CONVERT", "Only iterables may be used in a ListType")
	}
	return a, nil
}

// Chars counts the characters (code points) of s.
func Chars(s string) int { return utf8.RuneCountInString(s) }

// CheckLength requires min..max characters of s, the field at path.
func CheckLength(path, s string, min, max int) error {
	if n := Chars(s); n < min || n > max {
		return wire.InvalidAt(path, "BASE_TYPE_BAD_LENGTH", fmt.Sprintf("Must be between %d and %d in length.", min, max))
	}
	return nil
}

// CheckRange requires min <= n <= max of n, the field at path.
func CheckRange(path string, n, min, max int64) error {
	switch {
	case n < min:
		return wire.InvalidAt(path, "NUMBER_TYPE_MIN", fmt.Sprintf("int value should be greater than or equal to %d.", min))
	case n > max:
		return wire.InvalidAt(path, "NUMBER_TYPE_MAX", fmt.Sprintf("int value should be less than or equal to %d.", max))
	}
	return nil
}

// CheckCount requires a list of min..max items (n) at path.
func CheckCount(path string, n, min, max int) error {
	if n < min || n > max {
		return wire.InvalidAt(path, "BASE_TYPE_BAD_LENGTH", fmt.Sprintf("Must be between %d and %d in length.", min, max))
	}
	return nil
}
