package httpx

import (
	"encoding/json"
	"net/url"
	"strconv"
	"time"

	"sdkpp/wire"
)

// The request parsers below read one value of a query or of a JSON body. Each failure is the
// platform's 400 50035 (Invalid Form Body) naming the parameter or field.

// QueryID reads the optional snowflake query parameter name: 0 when absent.
func QueryID(v url.Values, name string) (uint64, error) {
	if !v.Has(name) {
		return 0, nil
	}
	id, ok := wire.ParseSnowflake(v.Get(name))
	if !ok {
		return 0, wire.InvalidAt(name, "NUMBER_TYPE_COERCE", "The value is not snowflake.")
	}
	return uint64(id), nil
}

// QueryIDs reads the snowflakes of a query parameter given any number of times, at most max of
// them, in the order given; nil when absent.
func QueryIDs(v url.Values, name string, max int) ([]uint64, error) {
	var out []uint64
	for _, raw := range v[name] {
		id, ok := wire.ParseSnowflake(raw)
		if !ok {
			return nil, wire.InvalidAt(name, "NUMBER_TYPE_COERCE", "The value is not snowflake.")
		}
		out = append(out, uint64(id))
	}
	if len(out) > max {
		return nil, wire.InvalidAt(name, "BASE_TYPE_MAX_LENGTH", "Must be "+strconv.Itoa(max)+" or fewer in length.")
	}
	return out, nil
}

// QueryInt reads the optional integer query parameter name between lo and hi: def when absent.
// Given more than once, the first value counts.
func QueryInt(v url.Values, name string, def, lo, hi int) (int, error) {
	if !v.Has(name) {
		return def, nil
	}
	n, err := strconv.Atoi(v.Get(name))
	if err != nil {
		return 0, wire.InvalidAt(name, "NUMBER_TYPE_COERCE", "The value is not int.")
	}
	if n < lo || n > hi {
		return 0, wire.InvalidAt(name, "NUMBER_TYPE_MAX", "Must be between "+strconv.Itoa(lo)+" and "+strconv.Itoa(hi)+".")
	}
	return n, nil
}

// QueryLimit reads ?limit= of a list route: between 1 and max, def when absent.
func QueryLimit(v url.Values, def, max int) (int, error) { return QueryInt(v, "limit", def, 1, max) }

// QueryTimePage reads ?limit= (QueryLimit, def and max) and ?before= (QueryTime) of a list route
// paged by time, such as Get Channel Pins.
func QueryTimePage(v url.Values, def, max int) (limit int, before time.Time, err error) {
	if limit, err = QueryLimit(v, def, max); err != nil {
		return 0, time.Time{}, err
	}
	before, err = QueryTime(v, "before")
	return limit, before, err
}

// QueryTime reads an ISO 8601 timestamp parameter (?before= of Get Channel Pins): zero when
// absent; 400 50035 DATE_TIME_TYPE_PARSE when malformed.
func QueryTime(v url.Values, name string) (time.Time, error) {
	if !v.Has(name) {
		return time.Time{}, nil
	}
	t, err := time.Parse(time.RFC3339Nano, v.Get(name))
	if err != nil {
		return time.Time{}, wire.InvalidAt(name, "DATE_TIME_TYPE_PARSE", "Could not parse "+v.Get(name)+". Should be ISO8601.")
	}
	return t, nil
}

// absent tells whether a JSON field was left out or given as null.
func absent(raw json.RawMessage) bool { return len(raw) == 0 || string(raw) == "null" }

// IntField reads an integer field of a JSON body between 0 and max: def when absent or null.
func IntField(field string, raw json.RawMessage, def, max int) (int, error) {
	if absent(raw) {
		return def, nil
	}
	var v int
	if json.Unmarshal(raw, &v) != nil {
		return 0, wire.InvalidAt(field, "NUMBER_TYPE_COERCE", "The value is not int.")
	}
	if v < 0 || v > max {
		return 0, wire.InvalidAt(field, "NUMBER_TYPE_MAX", "Must be between 0 and "+strconv.Itoa(max)+".")
	}
	return v, nil
}

// BoolField reads a boolean field of a JSON body: false when absent or null.
func BoolField(field string, raw json.RawMessage) (bool, error) {
	if absent(raw) {
		return false, nil
	}
	var v bool
	if json.Unmarshal(raw, &v) != nil {
		return false, wire.InvalidAt(field, "BOOLEAN_TYPE_COERCE", "Must be either true or false.")
	}
	return v, nil
}

// IDsField reads an array field of at most max snowflakes, each kept once in the order given:
// nil when absent, null or empty. A bad element is named by its index (field.i).
func IDsField(field string, raw json.RawMessage, max int) ([]uint64, error) {
	if absent(raw) {
		return nil, nil
	}
	var elems []json.RawMessage
	if json.Unmarshal(raw, &elems) != nil {
		return nil, wire.InvalidAt(field, "LIST_TYPE_CONVERT", "Must be an array of snowflakes.")
	}
	if len(elems) > max {
		return nil, wire.InvalidAt(field, "BASE_TYPE_MAX_LENGTH", "Must be "+strconv.Itoa(max)+" or fewer in length.")
	}
	var out []uint64
	seen := make(map[uint64]bool, len(elems))
	for i, e := range elems {
		var id wire.Snowflake
		if json.Unmarshal(e, &id) != nil || id == 0 {
			return nil, wire.InvalidAt(field+"."+strconv.Itoa(i), "NUMBER_TYPE_COERCE", "The value is not snowflake.")
		}
		if !seen[uint64(id)] {
			seen[uint64(id)] = true
			out = append(out, uint64(id))
		}
	}
	return out, nil
}

// OptionalString reads a string field of a PATCH body: absent (set false: keep), null (set, "":
// clear) or a string.
func OptionalString(field string, raw json.RawMessage) (v string, set bool, err error) {
	if len(raw) == 0 {
		return "", false, nil
	}
	if string(raw) == "null" {
		return "", true, nil
	}
	if json.Unmarshal(raw, &v) != nil {
		return "", false, wire.InvalidAt(field, "STRING_TYPE_CONVERT", "Could not interpret the value as string.")
	}
	return v, true, nil
}

// TimeField reads an ISO 8601 timestamp field: the zero time when absent, null or empty, which
// is a BASE_TYPE_REQUIRED error when required.
func TimeField(field string, raw json.RawMessage, required bool) (time.Time, error) {
	v, set, err := OptionalString(field, raw)
	if err != nil {
		return time.Time{}, err
	}
	if !set || v == "" {
		if required {
			return time.Time{}, wire.InvalidAt(field, "BASE_TYPE_REQUIRED", "This field is required")
		}
		return time.Time{}, nil
	}
	t, err := time.Parse(time.RFC3339Nano, v)
	if err != nil {
		return time.Time{}, wire.InvalidAt(field, "DATE_TIME_TYPE_PARSE", "Could not parse "+v+". Should be ISO8601.")
	}
	return t, nil
}
