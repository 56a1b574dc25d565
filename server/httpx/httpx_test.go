package httpx

import (
	"bytes"
	"encoding/json"
	"log/slog"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"sdkpp/wire"
)

// A value that encodes itself (wire.LobbyMessage) is written as encoding/json's Encoder writes it.
func TestJSONOfAnAppender(t *testing.T) {
	m := wire.LobbyMessage{ID: 1, Content: `<b>"tags" & such</b>`, Metadata: map[string]string{"z": "1", "a": "\u2028"}}
	rec := httptest.NewRecorder()
	JSON(rec, 200, m)
	var want bytes.Buffer
	require.NoError(t, json.NewEncoder(&want).Encode(m))
	require.Equal(t, want.String(), rec.Body.String(), "wrote %d %q, want %q", rec.Code, rec.Body.String(), want.String())
	require.Equal(t, 200, rec.Code, "wrote %d %q, want %q", rec.Code, rec.Body.String(), want.String())
	require.Equal(t, "application/json", rec.Header().Get("Content-Type"), "wrote %d %q, want %q", rec.Code, rec.Body.String(), want.String())
}

// Data already encoded (wire.Encoded) is written as it is, as encoding/json's Encoder writes it.
func TestJSONOfEncoded(t *testing.T) {
	m := wire.LobbyMessage{ID: 1, Content: "hi"}
	rec := httptest.NewRecorder()
	JSON(rec, 201, wire.Encoded(m.AppendJSON(nil)))
	var want bytes.Buffer
	require.NoError(t, json.NewEncoder(&want).Encode(m))
	require.Equal(t, 201, rec.Code)
	require.Equal(t, "application/json", rec.Header().Get("Content-Type"))
	require.Equal(t, want.String(), rec.Body.String())
}

// Answer: an error as the platform's body, nil as 204, a Reply with its status, a value as 200.
func TestAnswer(t *testing.T) {
	for _, tc := range []struct {
		name   string
		out    any
		err    error
		status int
		body   string
	}{
		{"value", map[string]int{"a": 1}, nil, 200, `{"a":1}`},
		{"nothing", nil, nil, 204, ``},
		{"reply", Reply{Status: 202, Body: map[string]int{"retry_after": 2}}, nil, 202, `{"retry_after":2}`},
		{"error", nil, wire.MissingAccess(), 403, `{"code":50001,"message":"Missing Access"}`},
	} {
		rec := httptest.NewRecorder()
		Answer(rec, httptest.NewRequest("GET", "/", nil), slog.New(slog.DiscardHandler), tc.out, tc.err)
		require.Equal(t, tc.status, rec.Code, tc.name)
		if tc.body == "" {
			require.Empty(t, rec.Body.String(), tc.name)
		} else {
			require.JSONEq(t, tc.body, rec.Body.String(), tc.name)
		}
	}
}

// A Recorder keeps the first status written (200 when the handler only writes) and the body.
func TestRecorder(t *testing.T) {
	w := NewRecorder()
	Answer(w, httptest.NewRequest("GET", "/", nil), slog.New(slog.DiscardHandler), nil, wire.MissingAccess())
	w.WriteHeader(200)
	require.Equal(t, 403, w.Status)
	require.JSONEq(t, `{"code":50001,"message":"Missing Access"}`, w.Body.String())
	w = NewRecorder()
	_, _ = w.Write([]byte("x"))
	w.WriteHeader(500)
	require.Equal(t, 200, w.Status)
	require.Equal(t, "x", w.Body.String())
}

// RawJSONBytes, for a body another carrier brought, gives what DecodeJSON gives for the same
// content type and body: the same value or the same error.
func TestRawJSONBytesAsDecodeJSON(t *testing.T) {
	for _, tc := range []struct {
		name, ct, body string
	}{
		{"object", "application/json", `{"a":1}`},
		{"with a charset", "application/json; charset=utf-8", ` {"a":1} `},
		{"no content type", "", `{"a":1}`},
		{"another type", "text/plain", `{"a":1}`},
		{"empty", "application/json", ``},
		{"invalid", "application/json", `{"a":`},
		{"not UTF-8", "application/json", "\"\xff\""},
		{"too large", "application/json", `"` + strings.Repeat("a", MaxBody) + `"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := httptest.NewRequest("POST", "/x", strings.NewReader(tc.body))
			if tc.ct != "" {
				r.Header.Set("Content-Type", tc.ct)
			}
			var overHTTP json.RawMessage
			want := DecodeJSON(r, &overHTTP)
			carried, got := RawJSONBytes(tc.ct, []byte(tc.body))
			require.Equal(t, want, got)
			require.Equal(t, string(overHTTP), string(carried))
		})
	}
}
