package lobbies

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"unicode/utf8"

	"sdkpp/internal/jsonscan"
	"sdkpp/server/httpx"
	"sdkpp/wire"
)

// Bodies are read field by field, so that a wrong type is a 50035 naming its field (the platform's
// answer) rather than a generic invalid-JSON error. Unknown fields are ignored; no error message
// repeats a value (a lobby secret must never be echoed or logged).

// opt is an optional field: set when the field is present, null when it is present as null.
type opt[T any] struct {
	set, null bool
	v         T
}

// fields is a JSON object being read; path locates it in the body ("" for the body itself).
type fields struct {
	path string
	m    map[string]json.RawMessage
}

// join appends a field name to a path.
func join(path, name string) string {
	if path == "" {
		return name
	}
	return path + "." + name
}

// readBody decodes the request body (application/json, at most httpx.MaxBody, valid JSON) into
// its raw form.
func readBody(r *http.Request) (json.RawMessage, error) {
	var raw json.RawMessage
	if err := httpx.DecodeJSON(r, &raw); err != nil {
		return nil, err
	}
	return raw, nil
}

// readBody reads the request's body as JSON.
func (q *request) readBody() (json.RawMessage, error) {
	if q.Request != nil {
		return readBody(q.Request)
	}
	var raw json.RawMessage
	return raw, httpx.DecodeJSONBytes(q.contentType, q.body, &raw)
}

// object reads raw as a JSON object; null reads as an empty object.
func object(raw json.RawMessage, path string) (fields, error) {
	f := fields{path: path, m: map[string]json.RawMessage{}}
	if isNull(raw) {
		return f, nil
	}
	// One pass (jsonscan) for the usual object; encoding/json for the rest, and for its errors.
	if jsonscan.Object(raw, func(k, v []byte) bool { f.m[string(k)] = v; return true }) {
		return f, nil
	}
	clear(f.m)
	if err := json.Unmarshal(raw, &f.m); err != nil {
		return f, wire.InvalidAt(path, "DICT_TYPE_CONVERT", "Only dictionaries may be used in a DictType")
	}
	return f, nil
}

func isNull(raw json.RawMessage) bool { return bytes.Equal(bytes.TrimSpace(raw), []byte("null")) }

// get reads field name with parse.
func get[T any](f fields, name string, parse func(json.RawMessage, string) (T, error)) (opt[T], error) {
	var o opt[T]
	raw, ok := f.m[name]
	if !ok {
		return o, nil
	}
	o.set = true
	if isNull(raw) {
		o.null = true
		return o, nil
	}
	v, err := parse(raw, join(f.path, name))
	if err != nil {
		return o, err
	}
	o.v = v
	return o, nil
}

func parseString(raw json.RawMessage, path string) (string, error) {
	if s, ok := jsonscan.Plain(raw); ok { // raw is one valid value: a field of an object
		return s, nil
	}
	var s string
	if err := json.Unmarshal(raw, &s); err != nil {
		return "", wire.InvalidAt(path, "STRING_TYPE_CONVERT", "Could not interpret the value as string.")
	}
	return s, nil
}

func parseInt(raw json.RawMessage, path string) (int64, error) {
	var n json.Number
	if err := json.Unmarshal(raw, &n); err == nil {
		if v, err := n.Int64(); err == nil && !strings.HasPrefix(string(bytes.TrimSpace(raw)), `"`) {
			return v, nil
		}
	}
	return 0, wire.InvalidAt(path, "NUMBER_TYPE_COERCE", "The value is not int.")
}

func parseBool(raw json.RawMessage, path string) (bool, error) {
	if v := string(raw); v == "true" || v == "false" { // as encoding/json reads them, without its reflection
		return v == "true", nil
	}
	var b bool
	if err := json.Unmarshal(raw, &b); err != nil {
		return false, wire.InvalidAt(path, "BOOLEAN_TYPE_CONVERT", "The value must be one of (false, true).")
	}
	return b, nil
}

// parseSnowflake reads an id given as a decimal string or a number.
func parseSnowflake(raw json.RawMessage, path string) (uint64, error) {
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

// parseProps reads a string map.
func parseProps(raw json.RawMessage, path string) (map[string]string, error) {
	var m map[string]json.RawMessage
	if err := json.Unmarshal(raw, &m); err != nil || m == nil {
		return nil, wire.InvalidAt(path, "DICT_TYPE_CONVERT", "Only dictionaries may be used in a DictType")
	}
	out := make(map[string]string, len(m))
	for k, v := range m {
		var s string
		if err := json.Unmarshal(v, &s); err != nil || isNull(v) {
			return nil, wire.InvalidAt(path, "STRING_TYPE_CONVERT", "Every value must be a string.")
		}
		out[k] = s
	}
	return out, nil
}

func parseArray(raw json.RawMessage, path string) ([]json.RawMessage, error) {
	var a []json.RawMessage
	if err := json.Unmarshal(raw, &a); err != nil || a == nil {
		return nil, wire.InvalidAt(path, "LIST_TYPE_CONVERT", "Only iterables may be used in a ListType")
	}
	return a, nil
}

// chars counts the characters (code points) of s.
func chars(s string) int { return utf8.RuneCountInString(s) }

// checkLength requires min..max characters.
func checkLength(path, s string, min, max int) error {
	if n := chars(s); n < min || n > max {
		return wire.InvalidAt(path, "BASE_TYPE_BAD_LENGTH", fmt.Sprintf("Must be between %d and %d in length.", min, max))
	}
	return nil
}

// checkRange requires min <= n <= max.
func checkRange(path string, n, min, max int64) error {
	switch {
	case n < min:
		return wire.InvalidAt(path, "NUMBER_TYPE_MIN", fmt.Sprintf("int value should be greater than or equal to %d.", min))
	case n > max:
		return wire.InvalidAt(path, "NUMBER_TYPE_MAX", fmt.Sprintf("int value should be less than or equal to %d.", max))
	}
	return nil
}

// checkCount requires a list of min..max items.
func checkCount(path string, n, min, max int) error {
	if n < min || n > max {
		return wire.InvalidAt(path, "BASE_TYPE_BAD_LENGTH", fmt.Sprintf("Must be between %d and %d in length.", min, max))
	}
	return nil
}

// checkMetadata requires keys and values to total at most MaxMetadataChars characters.
func checkMetadata(path string, m map[string]string) error {
	total := 0
	for k, v := range m {
		total += chars(k) + chars(v)
	}
	if total > MaxMetadataChars {
		return wire.InvalidAt(path, "BASE_TYPE_MAX_LENGTH",
			fmt.Sprintf("Must be %d or fewer in length (keys and values together).", MaxMetadataChars))
	}
	return nil
}

// metadataField reads an optional metadata map and checks its size; null reads as empty.
func metadataField(f fields, name string) (opt[map[string]string], error) {
	o, err := get(f, name, parseProps)
	if err != nil {
		return o, err
	}
	return o, checkMetadata(join(f.path, name), o.v)
}

// idleTimeoutField reads idle_timeout_seconds (MinIdleTimeout..MaxIdleTimeout seconds); null is
// the same as absent.
func idleTimeoutField(f fields) (opt[int64], error) {
	o, err := get(f, "idle_timeout_seconds", parseInt)
	if err != nil || !o.set || o.null {
		return opt[int64]{}, err
	}
	return o, checkRange(join(f.path, "idle_timeout_seconds"), o.v, MinIdleTimeoutSeconds, MaxIdleTimeoutSeconds)
}

// memberInput is one member operation of POST /lobbies, PATCH /lobbies/{id}, PUT
// /lobbies/{id}/members/{user_id} or the bulk endpoint.
type memberInput struct {
	id             uint64
	metadata       opt[map[string]string]
	flags          opt[int64]
	additionalName opt[string]
	remove         bool
}

// memberKind says which fields a member operation takes.
type memberKind int

const (
	memberInList memberKind = iota // {id, metadata?, flags?, additional_name?}
	memberInBulk                   // the same plus remove_member?
	memberInPath                   // {metadata?, flags?, additional_name?}: the id is in the path
)

// parseMember reads a member operation at path. additional_name is read here only: these are the
// application's (Bot) endpoints (rule MSG-2).
func parseMember(raw json.RawMessage, path string, kind memberKind) (memberInput, error) {
	var in memberInput
	f, err := object(raw, path)
	if err != nil {
		return in, err
	}
	if kind != memberInPath {
		id, err := get(f, "id", parseSnowflake)
		if err != nil {
			return in, err
		}
		if !id.set || id.null {
			return in, wire.InvalidAt(join(path, "id"), "BASE_TYPE_REQUIRED", "This field is required")
		}
		in.id = id.v
	}
	if kind == memberInBulk {
		rm, err := get(f, "remove_member", parseBool)
		if err != nil {
			return in, err
		}
		in.remove = rm.v
	}
	if in.metadata, err = metadataField(f, "metadata"); err != nil {
		return in, err
	}
	if in.flags, err = get(f, "flags", parseInt); err != nil {
		return in, err
	}
	if in.flags.v&^wire.LobbyMemberCanLinkLobby != 0 {
		return in, wire.InvalidAt(join(path, "flags"), "BASE_TYPE_CHOICES", "Only CanLinkLobby (1) may be set.")
	}
	if in.additionalName, err = get(f, "additional_name", parseString); err != nil {
		return in, err
	}
	if in.additionalName.set && !in.additionalName.null {
		if err := checkLength(join(path, "additional_name"), in.additionalName.v, 1, MaxAdditionalName); err != nil {
			return in, err
		}
	}
	return in, nil
}

// parseMemberList reads an array of member operations (at most MaxMembersPerRequest, at least
// min).
func parseMemberList(raw json.RawMessage, path string, min int, kind memberKind) ([]memberInput, error) {
	items, err := parseArray(raw, path)
	if err != nil {
		return nil, err
	}
	if err := checkCount(path, len(items), min, MaxMembersPerRequest); err != nil {
		return nil, err
	}
	out := make([]memberInput, 0, len(items))
	for i, item := range items {
		m, err := parseMember(item, join(path, fmt.Sprint(i)), kind)
		if err != nil {
			return nil, err
		}
		out = append(out, m)
	}
	return out, nil
}

// required reads a required string field.
func required(f fields, name string) (string, error) {
	o, err := get(f, name, parseString)
	if err != nil {
		return "", err
	}
	if !o.set || o.null {
		return "", wire.InvalidAt(join(f.path, name), "BASE_TYPE_REQUIRED", "This field is required")
	}
	return o.v, nil
}

// bodyObject reads the request body as a JSON object.
func bodyObject(r *http.Request) (fields, error) {
	raw, err := readBody(r)
	if err != nil {
		return fields{}, err
	}
	return object(raw, "")
}

// joinRequest is the body of PUT /lobbies.
type joinRequest struct {
	secret                string
	idle                  opt[int64]
	lobbyMeta, memberMeta opt[map[string]string]
}

func parseJoin(r *http.Request) (req joinRequest, err error) {
	f, err := bodyObject(r)
	if err != nil {
		return req, err
	}
	if req.secret, err = required(f, "secret"); err != nil {
		return req, err
	}
	if err = checkLength("secret", req.secret, 1, MaxSecretChars); err != nil {
		return req, err
	}
	if req.idle, err = idleTimeoutField(f); err != nil {
		return req, err
	}
	if req.lobbyMeta, err = metadataField(f, "lobby_metadata"); err != nil {
		return req, err
	}
	req.memberMeta, err = metadataField(f, "member_metadata")
	return req, err
}

// lobbyRequest is the body of POST /lobbies and PATCH /lobbies/{id}.
type lobbyRequest struct {
	meta    opt[map[string]string]
	idle    opt[int64]
	members opt[[]memberInput]
}

func parseLobby(r *http.Request) (req lobbyRequest, err error) {
	f, err := bodyObject(r)
	if err != nil {
		return req, err
	}
	if req.meta, err = metadataField(f, "metadata"); err != nil {
		return req, err
	}
	if req.idle, err = idleTimeoutField(f); err != nil {
		return req, err
	}
	req.members, err = get(f, "members", func(raw json.RawMessage, path string) ([]memberInput, error) {
		return parseMemberList(raw, path, 0, memberInList)
	})
	return req, err
}

// sendableFlags are the message flags a sender may set.
const sendableFlags = wire.MessageFlagSuppressEmbeds | wire.MessageFlagSuppressNotifications

// messageRequest is the body of POST /lobbies/{id}/messages.
type messageRequest struct {
	content string
	meta    opt[map[string]string]
	flags   opt[int64]
	// nonce with enforce_nonce makes the send idempotent: a message of the same author in the
	// same lobby with the same nonce in the last NonceWindow is answered instead of a new one.
	nonce        string
	enforceNonce bool
	reference    json.RawMessage // message_reference, unread
}

func parseMessage(raw json.RawMessage, err error) (req messageRequest, _ error) {
	if err != nil {
		return req, err
	}
	f, err := object(raw, "")
	if err != nil {
		return req, err
	}
	if req.content, err = required(f, "content"); err != nil {
		return req, err
	}
	if err = checkLength("content", req.content, 1, wire.MaxMessageContentChars); err != nil {
		return req, err
	}
	if strings.TrimSpace(req.content) == "" {
		return req, wire.InvalidAt("content", "BASE_TYPE_BAD_LENGTH", "Cannot send an empty message.")
	}
	if req.meta, err = metadataField(f, "metadata"); err != nil {
		return req, err
	}
	if req.flags, err = get(f, "flags", parseInt); err != nil {
		return req, err
	}
	if req.flags.v&^sendableFlags != 0 {
		return req, wire.InvalidAt("flags", "BASE_TYPE_CHOICES", "Only SUPPRESS_EMBEDS and SUPPRESS_NOTIFICATIONS may be set.")
	}
	if req.nonce, err = nonceField(f); err != nil {
		return req, err
	}
	enforce, err := get(f, "enforce_nonce", parseBool)
	if err != nil {
		return req, err
	}
	req.enforceNonce = enforce.v && req.nonce != ""
	if raw, ok := f.m["message_reference"]; ok && !isNull(raw) {
		req.reference = raw
	}
	return req, nil
}

// nonceField reads a message's nonce: a string of at most MaxNonceChars or an integer, as the
// platform takes it; "" when absent or null.
func nonceField(f fields) (string, error) {
	raw, ok := f.m["nonce"]
	if !ok || isNull(raw) {
		return "", nil
	}
	s, plain := jsonscan.Plain(raw) // the usual nonce, read in one pass
	if !plain && json.Unmarshal(raw, &s) != nil {
		n, err := parseInt(raw, "nonce")
		if err != nil {
			return "", wire.InvalidAt("nonce", "BASE_TYPE_BAD_TYPE", "Must be a string or an integer.")
		}
		s = strconv.FormatInt(n, 10)
	}
	if err := checkLength("nonce", s, 0, MaxNonceChars); err != nil {
		return "", err
	}
	return s, nil
}

// parseModeration reads a moderation metadata body: a string map of at most 5 keys, keys of at
// most 1024 characters, values of at most 2000 (rule MODR-1).
func parseModeration(raw json.RawMessage) (map[string]string, error) {
	if isNull(raw) {
		return nil, wire.InvalidAt("", "DICT_TYPE_CONVERT", "Only dictionaries may be used in a DictType")
	}
	m, err := parseProps(raw, "")
	if err != nil {
		return nil, err
	}
	if len(m) > MaxModerationKeys {
		return nil, wire.InvalidAt("", "BASE_TYPE_MAX_LENGTH", "Must have 5 or fewer keys.")
	}
	for k, v := range m {
		if chars(k) > MaxModerationKeyChars {
			return nil, wire.InvalidAt("", "BASE_TYPE_MAX_LENGTH", "Keys must be 1024 or fewer in length.")
		}
		if chars(v) > MaxModerationValueChars {
			return nil, wire.Invalid(k, "BASE_TYPE_MAX_LENGTH", "Must be 2000 or fewer in length.")
		}
	}
	return m, nil
}
