package lobbies

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"strings"

	"sdkpp/server/httpx"
	"sdkpp/server/lobbies/internal/jsonfield"
	"sdkpp/wire"
)

// Bodies are read field by field (package jsonfield): a wrong type is a 50035 naming its field.

// opt is an optional field: set when the field is present, null when it is present as null.
type opt[T any] struct {
	set, null bool
	v         T
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

// readBody reads the request's body as JSON. A gateway session's object is given as it is: the
// reading of its fields checks it (jsonfield.ObjectIn), which spares it a pass.
func (q *request) readBody() (json.RawMessage, error) {
	if q.Request != nil {
		return readBody(q.Request)
	}
	if raw := bytes.TrimSpace(q.body); q.contentType == "application/json" && len(q.body) <= httpx.MaxBody &&
		len(raw) > 0 && raw[0] == '{' {
		return raw, nil
	}
	return httpx.RawJSONBytes(q.contentType, q.body)
}

// get reads field name with parse.
func get[T any](f jsonfield.Fields, name string, parse func(json.RawMessage, string) (T, error)) (opt[T], error) {
	var o opt[T]
	raw, ok := f.Raw(name)
	if !ok {
		return o, nil
	}
	o.set = true
	if jsonfield.IsNull(raw) {
		o.null = true
		return o, nil
	}
	v, err := parse(raw, jsonfield.Join(f.Path, name))
	if err != nil {
		return o, err
	}
	o.v = v
	return o, nil
}

// checkMetadata requires keys and values to total at most MaxMetadataChars characters.
func checkMetadata(path string, m map[string]string) error {
	total := 0
	for k, v := range m {
		total += jsonfield.Chars(k) + jsonfield.Chars(v)
	}
	if total > MaxMetadataChars {
		return wire.InvalidAt(path, "BASE_TYPE_MAX_LENGTH",
			fmt.Sprintf("Must be %d or fewer in length (keys and values together).", MaxMetadataChars))
	}
	return nil
}

// metadataField reads an optional metadata map and checks its size; null reads as empty.
func metadataField(f jsonfield.Fields, name string) (opt[map[string]string], error) {
	o, err := get(f, name, jsonfield.Props)
	if err != nil {
		return o, err
	}
	return o, checkMetadata(jsonfield.Join(f.Path, name), o.v)
}

// idleTimeoutField reads idle_timeout_seconds (MinIdleTimeout..MaxIdleTimeout seconds); null is
// the same as absent.
func idleTimeoutField(f jsonfield.Fields) (opt[int64], error) {
	o, err := get(f, "idle_timeout_seconds", jsonfield.Int)
	if err != nil || !o.set || o.null {
		return opt[int64]{}, err
	}
	return o, jsonfield.CheckRange(jsonfield.Join(f.Path, "idle_timeout_seconds"), o.v, MinIdleTimeoutSeconds, MaxIdleTimeoutSeconds)
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
	f, err := jsonfield.Object(raw, path)
	if err != nil {
		return in, err
	}
	if kind != memberInPath {
		id, err := get(f, "id", jsonfield.Snowflake)
		if err != nil {
			return in, err
		}
		if !id.set || id.null {
			return in, wire.InvalidAt(jsonfield.Join(path, "id"), "BASE_TYPE_REQUIRED", "This field is required")
		}
		in.id = id.v
	}
	if kind == memberInBulk {
		rm, err := get(f, "remove_member", jsonfield.Bool)
		if err != nil {
			return in, err
		}
		in.remove = rm.v
	}
	if in.metadata, err = metadataField(f, "metadata"); err != nil {
		return in, err
	}
	if in.flags, err = get(f, "flags", jsonfield.Int); err != nil {
		return in, err
	}
	if in.flags.v&^wire.LobbyMemberCanLinkLobby != 0 {
		return in, wire.InvalidAt(jsonfield.Join(path, "flags"), "BASE_TYPE_CHOICES", "Only CanLinkLobby (1) may be set.")
	}
	if in.additionalName, err = get(f, "additional_name", jsonfield.String); err != nil {
		return in, err
	}
	if in.additionalName.set && !in.additionalName.null {
		if err := jsonfield.CheckLength(jsonfield.Join(path, "additional_name"), in.additionalName.v, 1, MaxAdditionalName); err != nil {
			return in, err
		}
	}
	return in, nil
}

// parseMemberList reads an array of member operations (at most MaxMembersPerRequest, at least
// min).
func parseMemberList(raw json.RawMessage, path string, min int, kind memberKind) ([]memberInput, error) {
	items, err := jsonfield.Array(raw, path)
	if err != nil {
		return nil, err
	}
	if err := jsonfield.CheckCount(path, len(items), min, MaxMembersPerRequest); err != nil {
		return nil, err
	}
	out := make([]memberInput, 0, len(items))
	for i, item := range items {
		m, err := parseMember(item, jsonfield.Join(path, fmt.Sprint(i)), kind)
		if err != nil {
			return nil, err
		}
		out = append(out, m)
	}
	return out, nil
}

// required reads a required string field.
func required(f jsonfield.Fields, name string) (string, error) {
	o, err := get(f, name, jsonfield.String)
	if err != nil {
		return "", err
	}
	if !o.set || o.null {
		return "", wire.InvalidAt(jsonfield.Join(f.Path, name), "BASE_TYPE_REQUIRED", "This field is required")
	}
	return o.v, nil
}

// bodyObject reads the request body as a JSON object.
func bodyObject(r *http.Request) (jsonfield.Fields, error) {
	raw, err := readBody(r)
	if err != nil {
		return jsonfield.Fields{}, err
	}
	return jsonfield.Object(raw, "")
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
	if err = jsonfield.CheckLength("secret", req.secret, 1, MaxSecretChars); err != nil {
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
	var buf [8]jsonfield.Member // room for the usual message's fields
	f, err := jsonfield.ObjectIn(raw, "", buf[:])
	if err != nil {
		return req, err
	}
	if req.content, err = required(f, "content"); err != nil {
		return req, err
	}
	if err = jsonfield.CheckLength("content", req.content, 1, wire.MaxMessageContentChars); err != nil {
		return req, err
	}
	if strings.TrimSpace(req.content) == "" {
		return req, wire.InvalidAt("content", "BASE_TYPE_BAD_LENGTH", "Cannot send an empty message.")
	}
	if req.meta, err = metadataField(f, "metadata"); err != nil {
		return req, err
	}
	if req.flags, err = get(f, "flags", jsonfield.Int); err != nil {
		return req, err
	}
	if req.flags.v&^sendableFlags != 0 {
		return req, wire.InvalidAt("flags", "BASE_TYPE_CHOICES", "Only SUPPRESS_EMBEDS and SUPPRESS_NOTIFICATIONS may be set.")
	}
	if req.nonce, err = nonceField(f); err != nil {
		return req, err
	}
	enforce, err := get(f, "enforce_nonce", jsonfield.Bool)
	if err != nil {
		return req, err
	}
	req.enforceNonce = enforce.v && req.nonce != ""
	if raw, ok := f.Raw("message_reference"); ok && !jsonfield.IsNull(raw) {
		req.reference = raw
	}
	return req, nil
}

// nonceField reads a message's nonce: a string of at most MaxNonceChars or an integer, as the
// platform takes it; "" when absent or null.
func nonceField(f jsonfield.Fields) (string, error) {
	raw, ok := f.Raw("nonce")
	if !ok || jsonfield.IsNull(raw) {
		return "", nil
	}
	s, ok := jsonfield.StringOf(raw)
	if !ok {
		n, err := jsonfield.Int(raw, "nonce")
		if err != nil {
			return "", wire.InvalidAt("nonce", "BASE_TYPE_BAD_TYPE", "Must be a string or an integer.")
		}
		s = strconv.FormatInt(n, 10)
	}
	if err := jsonfield.CheckLength("nonce", s, 0, MaxNonceChars); err != nil {
		return "", err
	}
	return s, nil
}

// parseModeration reads a moderation metadata body: a string map of at most 5 keys, keys of at
// most 1024 characters, values of at most 2000 (rule MODR-1).
func parseModeration(raw json.RawMessage) (map[string]string, error) {
	if jsonfield.IsNull(raw) {
		return nil, wire.InvalidAt("", "DICT_TYPE_CONVERT", "Only dictionaries may be used in a DictType")
	}
	m, err := jsonfield.Props(raw, "")
	if err != nil {
		return nil, err
	}
	if len(m) > MaxModerationKeys {
		return nil, wire.InvalidAt("", "BASE_TYPE_MAX_LENGTH", "Must have 5 or fewer keys.")
	}
	for k, v := range m {
		if jsonfield.Chars(k) > MaxModerationKeyChars {
			return nil, wire.InvalidAt("", "BASE_TYPE_MAX_LENGTH", "Keys must be 1024 or fewer in length.")
		}
		if jsonfield.Chars(v) > MaxModerationValueChars {
			return nil, wire.Invalid(k, "BASE_TYPE_MAX_LENGTH", "Must be 2000 or fewer in length.")
		}
	}
	return m, nil
}
