// Package apicheck sends requests to a service handler in tests and checks the answers against
// the platform's shapes: every answer below 500, errors as {"code", "message", "errors"} with a
// 50035 naming its field.
package apicheck

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"reflect"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"sdkpp/wire"
)

// Client sends requests straight to Handler.
type Client struct {
	T       testing.TB
	Handler http.Handler
}

// Resp is an answer of the service.
type Resp struct {
	Status int
	Body   []byte
}

// Do sends a request; body is sent as is when it is a string or []byte, else as JSON. Every
// answer must be below 500.
func (c Client) Do(method, path, auth string, body any) Resp {
	c.T.Helper()
	return c.DoType(method, path, auth, "application/json", body)
}

// DoType is Do with a content type ("" for none).
func (c Client) DoType(method, path, auth, contentType string, body any) Resp {
	c.T.Helper()
	var rd io.Reader
	switch b := body.(type) {
	case nil:
	case string:
		rd = strings.NewReader(b)
	case []byte:
		rd = bytes.NewReader(b)
	default:
		raw, err := json.Marshal(b)
		require.NoError(c.T, err)
		rd = bytes.NewReader(raw)
	}
	req := httptest.NewRequest(method, path, rd)
	if rd != nil && contentType != "" {
		req.Header.Set("Content-Type", contentType)
	}
	if auth != "" {
		req.Header.Set("Authorization", auth)
	}
	rec := httptest.NewRecorder()
	c.Handler.ServeHTTP(rec, req)
	assert.Less(c.T, rec.Code, 500, "%s %s: HTTP %d (never a 5xx): %s", method, path, rec.Code, rec.Body.Bytes())
	return Resp{Status: rec.Code, Body: rec.Body.Bytes()}
}

// OK requires status and decodes the body into v (when v is not nil).
func (r Resp) OK(t testing.TB, status int, v any) {
	t.Helper()
	require.Equal(t, status, r.Status, "HTTP %d, want %d: %s", r.Status, status, r.Body)
	if v != nil {
		reflect.ValueOf(v).Elem().SetZero() // decode into a fresh value: json merges into maps
		require.NoError(t, json.Unmarshal(r.Body, v), "decode %s", r.Body)
	}
}

// Fails requires an error answer with status and JSON code; for 50035 the errors must name
// field (a dotted path; "" for the body itself).
func (r Resp) Fails(t testing.TB, status, code int, field string) {
	t.Helper()
	var e wire.APIError
	require.NoError(t, json.Unmarshal(r.Body, &e), "HTTP %d, body not an error: %s", r.Status, r.Body)
	require.Equal(t, status, r.Status, "HTTP %d code %d, want %d code %d: %s", r.Status, e.Code, status, code, r.Body)
	require.Equal(t, code, e.Code, "HTTP %d code %d, want %d code %d: %s", r.Status, e.Code, status, code, r.Body)
	require.NotEmpty(t, e.Message, "HTTP %d code %d, want %d code %d: %s", r.Status, e.Code, status, code, r.Body)
	if code == wire.CodeInvalidFormBody {
		require.True(t, Names(e.Errors, field), "the 50035 error does not name %q: %s", field, r.Body)
	}
}

// Names tells whether errs has "_errors" at the dotted path.
func Names(errs map[string]any, path string) bool {
	node := errs
	if path != "" {
		for _, p := range strings.Split(path, ".") {
			next, ok := node[p].(map[string]any)
			if !ok {
				return false
			}
			node = next
		}
	}
	list, ok := node["_errors"].([]any)
	return ok && len(list) > 0
}
