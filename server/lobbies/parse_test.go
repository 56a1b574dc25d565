package lobbies

import (
	"encoding/json"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"sdkpp/server/httpx"
	"sdkpp/wire"
)

// A message body's fields are read as encoding/json reads the object: a key given twice counts
// by its last value, an escaped key by what it spells, and a body that is not an object is the
// same 50035.
func TestParseMessageReadsFieldsAsEncodingJSON(t *testing.T) {
	for _, tc := range []struct {
		name, body     string
		content, nonce string
		flags          int64
		enforce        bool
		reference      string
	}{
		{name: "usual", body: `{"content":"hi","nonce":"n1","enforce_nonce":true}`, content: "hi", nonce: "n1", enforce: true},
		{name: "a key twice: the last", body: `{"content":"a","content":"b","nonce":"1","nonce":"2"}`, content: "b", nonce: "2"},
		{name: "an escaped key", body: `{"cont\u0065nt":"esc","nonce":7}`, content: "esc", nonce: "7"},
		{name: "an escaped key twice", body: `{"content":"a","cont\u0065nt":"b"}`, content: "b"},
		{name: "escaped values", body: `{"content":"a\"b","nonce":"\u00e9"}`, content: `a"b`, nonce: "é"},
		{name: "more fields than the room on the stack",
			body:    `{"a":1,"b":2,"c":3,"d":4,"e":5,"f":6,"g":7,"h":8,"content":"late","message_reference":{"message_id":"1"}}`,
			content: "late", reference: `{"message_id":"1"}`},
		{name: "integers", body: `{"content":"i","flags":4096,"nonce":-12}`, content: "i", nonce: "-12", flags: 4096},
		{name: "an integer past 18 digits", body: `{"content":"i","nonce":1234567890123456789}`, content: "i", nonce: "1234567890123456789"},
		{name: "enforce without a nonce", body: `{"content":"x","enforce_nonce":true}`, content: "x"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			req, err := parseMessage(json.RawMessage(tc.body), nil)
			require.NoError(t, err)
			assert.Equal(t, tc.content, req.content)
			assert.Equal(t, tc.nonce, req.nonce)
			assert.Equal(t, tc.flags, req.flags.v)
			assert.Equal(t, tc.enforce, req.enforceNonce)
			assert.Equal(t, tc.reference, string(req.reference))
		})
	}
}

func TestParseMessageErrors(t *testing.T) {
	for _, tc := range []struct {
		name, body, path, code string
	}{
		{"not an object", `[1]`, "", "DICT_TYPE_CONVERT"},
		{"no content", `{"nonce":"1"}`, "content", "BASE_TYPE_REQUIRED"},
		{"null content", `{"content":null}`, "content", "BASE_TYPE_REQUIRED"},
		{"content not a string", `{"content":1}`, "content", "STRING_TYPE_CONVERT"},
		{"blank content", `{"content":"  "}`, "content", "BASE_TYPE_BAD_LENGTH"},
		{"the last of two contents is wrong", `{"content":"a","content":2}`, "content", "STRING_TYPE_CONVERT"},
		{"nonce neither string nor integer", `{"content":"a","nonce":1.5}`, "nonce", "BASE_TYPE_BAD_TYPE"},
		{"flags not sendable", `{"content":"a","flags":1}`, "flags", "BASE_TYPE_CHOICES"},
		{"flags not an integer", `{"content":"a","flags":1.5}`, "flags", "NUMBER_TYPE_COERCE"},
		{"flags with an exponent", `{"content":"a","flags":0e1}`, "flags", "NUMBER_TYPE_COERCE"},
		{"flags a string", `{"content":"a","flags":"4096"}`, "flags", "NUMBER_TYPE_COERCE"},
		{"flags past int64", `{"content":"a","flags":99999999999999999999}`, "flags", "NUMBER_TYPE_COERCE"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := parseMessage(json.RawMessage(tc.body), nil)
			var apiErr *wire.APIError
			require.ErrorAs(t, err, &apiErr)
			assert.Equal(t, wire.CodeInvalidFormBody, apiErr.Code)
			assert.Equal(t, tc.code, fieldCode(t, apiErr, tc.path))
		})
	}
}

// fieldCode is the code of e's error at path ("" for the body).
func fieldCode(t *testing.T, e *wire.APIError, path string) string {
	node := e.Errors
	if path != "" {
		for _, p := range strings.Split(path, ".") {
			next, ok := node[p].(map[string]any)
			require.True(t, ok, "no error at %s: %v", path, e.Errors)
			node = next
		}
	}
	errs, ok := node["_errors"].([]wire.FieldError)
	require.True(t, ok && len(errs) == 1, "no error at %s: %v", path, e.Errors)
	return errs[0].Code
}

// Reading the usual message allocates only its content and its nonce: its fields are kept on
// the stack, their keys are never strings, and its body is not copied.
func TestParseMessageAllocatesItsStringsOnly(t *testing.T) {
	q := &request{contentType: "application/json", body: []byte(`{"content":"hello","nonce":"42","enforce_nonce":true,"flags":4096}`)}
	allocs := testing.AllocsPerRun(100, func() {
		req, err := parseMessage(q.readBody())
		if err != nil || req.content != "hello" || req.nonce != "42" {
			t.Fatal(req, err)
		}
	})
	assert.Equal(t, 2.0, allocs)
}

// A message carried by a gateway session, whose object is checked as its fields are read, reads
// as the same body sent over HTTP: the same request or the same error.
func TestParseMessageOverGatewayAsOverHTTP(t *testing.T) {
	for _, tc := range []struct{ name, ct, body string }{
		{"usual", "application/json", ` {"content":"hi","nonce":"n"} `},
		{"invalid", "application/json", `{"content":`},
		{"trailing bytes", "application/json", `{"content":"hi"} x`},
		{"two objects", "application/json", `{"content":"hi"}{}`},
		{"invalid UTF-8 in a key", "application/json", "{\"c\xff\":1,\"content\":\"hi\"}"},
		{"escaped key", "application/json", `{"cont\u0065nt":"hi"}`},
		{"an array", "application/json", `[{"content":"hi"}]`},
		{"empty", "application/json", ``},
		{"another type", "text/plain", `{"content":"hi"}`},
		{"too large", "application/json", `{"content":"` + strings.Repeat("a", httpx.MaxBody) + `"}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := httptest.NewRequest("POST", "/x", strings.NewReader(tc.body))
			r.Header.Set("Content-Type", tc.ct)
			want, wantErr := parseMessage((&request{Request: r}).readBody())
			got, err := parseMessage((&request{contentType: tc.ct, body: []byte(tc.body)}).readBody())
			require.Equal(t, wantErr, err)
			assert.Equal(t, want, got)
		})
	}
}
