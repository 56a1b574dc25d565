package wire

import (
	"bytes"
	"encoding/json"
	"net/http"
	"strconv"
)

// Message types of guild messages (the platform's values).
const (
	MessageTypeDefault = 0
	MessageTypeReply   = 19
)

// Message reference types (message_reference.type, the platform's values).
const (
	// MessageReferenceDefault makes a reply: the new message answers one of its channel.
	MessageReferenceDefault = 0
	// MessageReferenceForward makes a forward (rule FWD-1): the new message carries a snapshot of
	// one the caller may read, in any channel.
	MessageReferenceForward = 1
)

// MessageFlagHasSnapshot is the message flag of a forward: it has message_snapshots (the
// platform's HAS_SNAPSHOT).
const MessageFlagHasSnapshot = 1 << 14

// CodeCannotForwardUnreadable is the platform's code for forwarding a message whose content the
// app cannot read (rule FWD-1).
const CodeCannotForwardUnreadable = 160014

// CannotForwardUnreadable is the 403 160014 of a forward whose source message's content the
// caller's app may not read (rule FWD-1), with the spec's message text.
func CannotForwardUnreadable() *APIError {
	return &APIError{Status: http.StatusForbidden, Code: CodeCannotForwardUnreadable,
		Message: "You cannot forward a message whose content you cannot read."}
}

// UnknownReferencedMessage is the 400 50035 of a message_reference naming a message that is not
// there: {"message_reference": {"_errors": [{"code": "MESSAGE_REFERENCE_UNKNOWN_MESSAGE", ...}]}}.
func UnknownReferencedMessage() *APIError {
	return InvalidAt("message_reference", "MESSAGE_REFERENCE_UNKNOWN_MESSAGE", "Unknown message")
}

// MessageReference is a message's message_reference: the message it replies to (Type
// MessageReferenceDefault, on a message of type MessageTypeReply) or forwards (Type
// MessageReferenceForward).
type MessageReference struct {
	Type      int       `json:"type"`
	MessageID Snowflake `json:"message_id"`
	ChannelID Snowflake `json:"channel_id"`
	GuildID   Snowflake `json:"guild_id,omitempty"` // absent in a DM channel
}

// Referenced is a reply's referenced_message: the message (of type M) it replies to, or JSON
// null when that message has been deleted since. Its zero value (Present false) is left out of a
// message that is not a reply (the field is tagged omitzero).
type Referenced[M any] struct {
	Present bool
	Message *M // nil: deleted
}

// ReferencedMessage is a guild message's referenced_message.
type ReferencedMessage = Referenced[GuildMessage]

// IsZero tells whether the field is absent.
func (r Referenced[M]) IsZero() bool { return !r.Present }

// MarshalJSON writes the message, or null.
func (r Referenced[M]) MarshalJSON() ([]byte, error) {
	if r.Message == nil {
		return []byte("null"), nil
	}
	return json.Marshal(r.Message)
}

// UnmarshalJSON reads the message, or null (Present stays true: the message was deleted).
func (r *Referenced[M]) UnmarshalJSON(b []byte) error {
	r.Present, r.Message = true, nil
	if string(bytes.TrimSpace(b)) == "null" {
		return nil
	}
	var m M
	if err := json.Unmarshal(b, &m); err != nil {
		return err
	}
	r.Message = &m
	return nil
}

// MessageSnapshot is an entry of a forward's message_snapshots (rule FWD-1).
type MessageSnapshot struct {
	Message SnapshotMessage `json:"message"`
}

// SnapshotMessage is the forwarded message as it was when it was forwarded: the fields the
// platform copies.
type SnapshotMessage struct {
	Type            int          `json:"type"`
	Content         string       `json:"content"`
	Embeds          []struct{}   `json:"embeds"`
	Attachments     []Attachment `json:"attachments"`
	Timestamp       string       `json:"timestamp"`
	EditedTimestamp *string      `json:"edited_timestamp"`
	Flags           int          `json:"flags"`
	Mentions        []User       `json:"mentions"`
	MentionRoles    []string     `json:"mention_roles"`
}

// MessageReferenceRequest is the message_reference of a request that sends a message, as read by
// ParseMessageReference. ChannelID and GuildID are 0 when not given.
type MessageReferenceRequest struct {
	Type      int
	MessageID Snowflake
	ChannelID Snowflake
	GuildID   Snowflake
	// FailIfNotExists is false only when the request says so: then a reply to a message that is
	// not there is sent as a plain message.
	FailIfNotExists bool
}

// ParseMessageReference reads a request's message_reference: {type?, message_id, channel_id?,
// guild_id?, fail_if_not_exists?}, ids as strings or integers. Absent or null gives nil. A
// malformed one is a 400 50035 naming the field: message_reference itself when it is not an
// object, else message_reference.<field> (a required message_id, snowflakes, type 0 or 1, a
// boolean fail_if_not_exists).
func ParseMessageReference(raw json.RawMessage) (*MessageReferenceRequest, error) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || string(raw) == "null" {
		return nil, nil
	}
	var fields map[string]json.RawMessage
	if raw[0] != '{' || json.Unmarshal(raw, &fields) != nil {
		return nil, InvalidAt("message_reference", "MODEL_TYPE_CONVERT", "Only dictionaries may be used in a ModelType")
	}
	given := func(name string) (json.RawMessage, bool) {
		v, ok := fields[name]
		v = bytes.TrimSpace(v)
		return v, ok && string(v) != "null"
	}
	out := &MessageReferenceRequest{FailIfNotExists: true}
	if v, ok := given("type"); ok {
		n, err := strconv.ParseInt(string(v), 10, 32)
		switch {
		case err != nil:
			return nil, InvalidAt("message_reference.type", "NUMBER_TYPE_COERCE", "The value is not int.")
		case n != MessageReferenceDefault && n != MessageReferenceForward:
			return nil, InvalidAt("message_reference.type", "ENUM_TYPE_COERCE", "The value is not a valid enum value.")
		}
		out.Type = int(n)
	}
	v, ok := given("message_id")
	if !ok {
		return nil, InvalidAt("message_reference.message_id", "BASE_TYPE_REQUIRED", "This field is required")
	}
	var err error
	if out.MessageID, err = referenceID("message_id", v); err != nil {
		return nil, err
	}
	for _, f := range []struct {
		name string
		dst  *Snowflake
	}{{"channel_id", &out.ChannelID}, {"guild_id", &out.GuildID}} {
		if v, ok := given(f.name); ok {
			if *f.dst, err = referenceID(f.name, v); err != nil {
				return nil, err
			}
		}
	}
	if v, ok := given("fail_if_not_exists"); ok {
		if json.Unmarshal(v, &out.FailIfNotExists) != nil {
			return nil, InvalidAt("message_reference.fail_if_not_exists", "BOOLEAN_TYPE_COERCE", "Must be either true or false.")
		}
	}
	return out, nil
}

// referenceID reads a snowflake of a message_reference: a decimal string or a JSON integer.
func referenceID(field string, v json.RawMessage) (Snowflake, error) {
	s := string(v)
	if len(v) > 0 && v[0] == '"' {
		if json.Unmarshal(v, &s) != nil {
			s = ""
		}
	}
	id, ok := ParseSnowflake(s)
	if !ok {
		return 0, InvalidAt("message_reference."+field, "NUMBER_TYPE_COERCE", "The value is not snowflake.")
	}
	return id, nil
}
