package gateway

import (
	"encoding/json"
	"net/http"
	"strings"

	"sdkpp/internal/jsonscan"
)

// Valid tells whether a request's fields are well formed: a method the API has, a nonce of 1 to
// MaxNonceChars characters, a path below the API base without a fragment, line break or NUL.
func (r Request) Valid() bool {
	switch r.Method {
	case http.MethodGet, http.MethodPost, http.MethodPut, http.MethodPatch, http.MethodDelete:
	default:
		return false
	}
	return r.Nonce != "" && len(r.Nonce) <= MaxNonceChars &&
		strings.HasPrefix(r.Path, "/") && !strings.HasPrefix(r.Path, "//") && !strings.ContainsAny(r.Path, "#\r\n\x00")
}

// ReadRequest reads the OpRequest payload the SDK sends, {"op":100,"d":{"nonce","method","path","body"}}
// with plain strings, in one pass (jsonscan): encoding/json would scan the payload three times
// and copy the body twice, which was a tenth of a lobby message's time in the service. It returns
// what encoding/json would decode, and false for anything else (another opcode, an unusual
// spelling, invalid JSON), which then takes the encoding/json path.
func ReadRequest(data []byte) (Request, bool) {
	var r Request
	var op, d []byte
	if !jsonscan.Object(data, func(k, v []byte) bool {
		switch string(k) {
		case "op":
			op = v
		case "d":
			d = v
		}
		return true
	}) || string(op) != "100" || len(d) == 0 || d[0] != '{' {
		return r, false
	}
	ok := jsonscan.Object(d, func(k, v []byte) bool {
		var ok bool
		switch string(k) {
		case "nonce":
			r.Nonce, ok = jsonscan.Plain(v)
		case "method":
			r.Method, ok = jsonscan.Plain(v)
		case "path":
			r.Path, ok = jsonscan.Plain(v)
		case "body":
			r.Body, ok = json.RawMessage(v), true
		default:
			ok = true // ignored, as encoding/json ignores it
		}
		return ok
	})
	return r, ok
}
