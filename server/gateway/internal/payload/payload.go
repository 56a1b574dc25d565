// Package payload reads the JSON of the payloads gateway clients send: what shape a raw value
// has (IsObject, IsArray, IsNull), an object decoded only when it is one (DecodeObject), and a
// snowflake or an array of them (Snowflakes); and it adds fields to an encoded object the gateway
// sends (AddFields).
package payload

import (
	"bytes"
	"encoding/json"

	"sdkpp/wire"
)

// IsObject tells whether raw is a JSON object (after leading white space).
func IsObject(raw []byte) bool {
	raw = bytes.TrimLeft(raw, " \t\r\n")
	return len(raw) > 0 && raw[0] == '{'
}

// IsArray tells whether raw is a JSON array (after leading white space).
func IsArray(raw []byte) bool {
	raw = bytes.TrimLeft(raw, " \t\r\n")
	return len(raw) > 0 && raw[0] == '['
}

// IsNull tells whether raw is absent or JSON null.
func IsNull(raw []byte) bool {
	raw = bytes.TrimSpace(raw)
	return len(raw) == 0 || string(raw) == "null"
}

// DecodeObject decodes raw, which must be a JSON object, into v.
func DecodeObject(raw []byte, v any) bool {
	return IsObject(raw) && json.Unmarshal(raw, v) == nil
}

// NullIfAbsent returns raw, or JSON null when raw is empty (a field that was absent).
func NullIfAbsent(raw json.RawMessage) []byte {
	if len(raw) == 0 {
		return []byte("null")
	}
	return raw
}

// Snowflakes reads a snowflake or an array of snowflakes; absent or null is none.
func Snowflakes(raw json.RawMessage) ([]uint64, bool) {
	if IsNull(raw) {
		return nil, true
	}
	var one wire.Snowflake
	if json.Unmarshal(raw, &one) == nil {
		return []uint64{uint64(one)}, true
	}
	var many []wire.Snowflake
	if json.Unmarshal(raw, &many) != nil {
		return nil, false
	}
	out := make([]uint64, len(many))
	for i, id := range many {
		out[i] = uint64(id)
	}
	return out, true
}

// AddFields returns the JSON object obj with the fields of extra it does not have yet, each
// encoded with encoding/json; the fields obj has keep their values. An error when obj is not an
// object or a field does not encode.
func AddFields(obj []byte, extra map[string]any) ([]byte, error) {
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(obj, &fields); err != nil {
		return nil, err
	}
	for k, v := range extra {
		if _, taken := fields[k]; taken {
			continue
		}
		raw, err := json.Marshal(v)
		if err != nil {
			return nil, err
		}
		fields[k] = raw
	}
	return json.Marshal(fields)
}
