package wire

import (
	"encoding/json"
	"net/http"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// ParseMessageReference reads replies and forwards (rule FWD-1: type 1), and answers a malformed
// message_reference with a 400 50035 form error naming the field.
func TestParseMessageReference(t *testing.T) {
	for _, tc := range []struct {
		raw  string
		want *MessageReferenceRequest
	}{
		{``, nil},
		{`null`, nil},
		{`{"message_id": "12"}`, &MessageReferenceRequest{MessageID: 12, FailIfNotExists: true}},
		{`{"message_id": 12, "type": 0, "channel_id": "34", "guild_id": 56, "fail_if_not_exists": false}`,
			&MessageReferenceRequest{MessageID: 12, ChannelID: 34, GuildID: 56}},
		{`{"message_id": "12", "type": 1, "channel_id": null, "fail_if_not_exists": null}`,
			&MessageReferenceRequest{Type: MessageReferenceForward, MessageID: 12, FailIfNotExists: true}},
		{` {"message_id": "9223372036854775807", "type": null, "extra": [1]}`,
			&MessageReferenceRequest{MessageID: MaxSnowflake, FailIfNotExists: true}},
	} {
		got, err := ParseMessageReference(json.RawMessage(tc.raw))
		require.NoError(t, err, "%s", tc.raw)
		assert.Equal(t, tc.want, got, "%s", tc.raw)
	}

	for _, tc := range []struct {
		raw, path, code string
	}{
		{`5`, "message_reference", "MODEL_TYPE_CONVERT"},
		{`"12"`, "message_reference", "MODEL_TYPE_CONVERT"},
		{`[{"message_id": "12"}]`, "message_reference", "MODEL_TYPE_CONVERT"},
		{`{}`, "message_reference.message_id", "BASE_TYPE_REQUIRED"},
		{`{"message_id": null}`, "message_reference.message_id", "BASE_TYPE_REQUIRED"},
		{`{"message_id": "x"}`, "message_reference.message_id", "NUMBER_TYPE_COERCE"},
		{`{"message_id": "0"}`, "message_reference.message_id", "NUMBER_TYPE_COERCE"},
		{`{"message_id": -1}`, "message_reference.message_id", "NUMBER_TYPE_COERCE"},
		{`{"message_id": 1.5}`, "message_reference.message_id", "NUMBER_TYPE_COERCE"},
		{`{"message_id": "9223372036854775808"}`, "message_reference.message_id", "NUMBER_TYPE_COERCE"},
		{`{"message_id": {"id": 1}}`, "message_reference.message_id", "NUMBER_TYPE_COERCE"},
		{`{"message_id": "12", "channel_id": 1e30}`, "message_reference.channel_id", "NUMBER_TYPE_COERCE"},
		{`{"message_id": "12", "guild_id": true}`, "message_reference.guild_id", "NUMBER_TYPE_COERCE"},
		{`{"message_id": "12", "type": 7}`, "message_reference.type", "ENUM_TYPE_COERCE"},
		{`{"message_id": "12", "type": -1}`, "message_reference.type", "ENUM_TYPE_COERCE"},
		{`{"message_id": "12", "type": "1"}`, "message_reference.type", "NUMBER_TYPE_COERCE"},
		{`{"message_id": "12", "type": 1e400}`, "message_reference.type", "NUMBER_TYPE_COERCE"},
		{`{"message_id": "12", "type": 99999999999}`, "message_reference.type", "NUMBER_TYPE_COERCE"},
		{`{"message_id": "12", "fail_if_not_exists": "no"}`, "message_reference.fail_if_not_exists", "BOOLEAN_TYPE_COERCE"},
		{`{"message_id": "12", "fail_if_not_exists": 0}`, "message_reference.fail_if_not_exists", "BOOLEAN_TYPE_COERCE"},
	} {
		_, err := ParseMessageReference(json.RawMessage(tc.raw))
		var apiErr *APIError
		require.ErrorAs(t, err, &apiErr, "%s", tc.raw)
		assert.Equal(t, http.StatusBadRequest, apiErr.Status, "%s", tc.raw)
		assert.Equal(t, CodeInvalidFormBody, apiErr.Code, "%s", tc.raw)
		want := InvalidAt(tc.path, tc.code, "")
		raw, err := json.Marshal(apiErr.Errors)
		require.NoError(t, err)
		// The error sits at the path, with the code.
		var node any
		require.NoError(t, json.Unmarshal(raw, &node))
		wantRaw, err := json.Marshal(want.Errors)
		require.NoError(t, err)
		var wantNode any
		require.NoError(t, json.Unmarshal(wantRaw, &wantNode))
		assert.Equal(t, stripMessages(wantNode), stripMessages(node), "%s", tc.raw)
	}
}

// stripMessages drops the "message" of every field error, leaving paths and codes.
func stripMessages(v any) any {
	switch v := v.(type) {
	case map[string]any:
		out := map[string]any{}
		for k, x := range v {
			if k != "message" {
				out[k] = stripMessages(x)
			}
		}
		return out
	case []any:
		out := make([]any, len(v))
		for i, x := range v {
			out[i] = stripMessages(x)
		}
		return out
	}
	return v
}

// referenced_message is absent on a message that is not a reply, null on a reply whose message
// was deleted, and the message otherwise; each reads back as it was.
func TestReferencedMessageJSON(t *testing.T) {
	orig := GuildMessage{ID: 1, Content: "first", Mentions: []Mention{}, MentionRoles: []string{}}
	for _, tc := range []struct {
		name string
		ref  ReferencedMessage
		want string // the raw field, "" for absent
	}{
		{"not a reply", ReferencedMessage{}, ""},
		{"deleted", ReferencedMessage{Present: true}, "null"},
		{"there", ReferencedMessage{Present: true, Message: &orig}, `"first"`},
	} {
		raw, err := json.Marshal(GuildMessage{ID: 2, ReferencedMessage: tc.ref})
		require.NoError(t, err)
		var fields map[string]json.RawMessage
		require.NoError(t, json.Unmarshal(raw, &fields))
		field, ok := fields["referenced_message"]
		assert.Equal(t, tc.want != "", ok, "%s: %s", tc.name, raw)
		if tc.ref.Message != nil {
			var content struct {
				Content json.RawMessage `json:"content"`
			}
			require.NoError(t, json.Unmarshal(field, &content))
			field = content.Content
		}
		if ok {
			assert.Equal(t, tc.want, string(field), tc.name)
		}
		var back GuildMessage
		require.NoError(t, json.Unmarshal(raw, &back))
		assert.Equal(t, tc.ref.Present, back.ReferencedMessage.Present, tc.name)
		assert.Equal(t, tc.ref.Message != nil, back.ReferencedMessage.Message != nil, tc.name)
	}
}
