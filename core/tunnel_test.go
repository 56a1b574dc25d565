package core

import (
	"encoding/json"
	"reflect"
	"testing"
)

// op 100's d carries the request as the service reads it, the body as it was encoded, and no body
// at all when there is none.
func TestRequestData(t *testing.T) {
	type request struct {
		Nonce, Method, Path string
		Body                json.RawMessage
	}
	for _, tc := range []request{
		{"n1", "POST", "/lobbies/1/messages", json.RawMessage(`{"content":"<é \"quoted\">","metadata":{"k":"v"}}`)},
		{"n2", "GET", "/users/@me", nil},
	} {
		d, err := requestData(tc.Nonce, tc.Method, tc.Path, tc.Body)
		if err != nil || !json.Valid(d) {
			t.Fatalf("%s: %s %v", tc.Nonce, d, err)
		}
		var got request
		if err := json.Unmarshal(d, &got); err != nil || !reflect.DeepEqual(got, tc) {
			t.Fatalf("%s: decoded %+v from %s (%v)", tc.Nonce, got, d, err)
		}
	}
}
