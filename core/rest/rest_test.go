package rest

import (
	"cmp"
	"context"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestDo(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/api/ok":
			if r.Header.Get("Authorization") != "Bearer tok" || r.Header.Get("Content-Type") != "application/x-www-form-urlencoded" {
				http.Error(w, "bad headers", 400)
				return
			}
			r.ParseForm()
			io.WriteString(w, `{"echo":"`+r.PostForm.Get("a")+`"}`)
		case "/api/json":
			b, _ := io.ReadAll(r.Body)
			w.Write(b)
		case "/api/invalid":
			w.WriteHeader(400)
			io.WriteString(w, `{"code": 50035, "message": "Invalid Form Body", "errors": {"content": {}}}`)
		case "/api/oauth":
			w.WriteHeader(400)
			io.WriteString(w, `{"error":"invalid_grant","error_description":"the code was used"}`)
		case "/api/ratelimit":
			w.Header().Set("Retry-After", "3")
			w.WriteHeader(429)
			io.WriteString(w, `{"message":"You are being rate limited.","retry_after":1.25,"global":false}`)
		case "/api/plain":
			w.Header().Set("Retry-After", "7")
			w.WriteHeader(503)
			io.WriteString(w, "<html>down</html>")
		case "/api/slow": // answers only once the client gave up
			<-r.Context().Done()
		case "/api/garbage":
			io.WriteString(w, "{not json")
		}
	}))
	defer srv.Close()
	timeout := 10 * time.Second // only /slow runs on a short one
	c := &Client{Base: srv.URL + "/api/", Timeout: func() time.Duration { return timeout }}
	ctx := context.Background()

	var out struct{ Echo string }
	require.NoError(t, c.Do(ctx, Request{Method: "POST", Path: "/ok", Form: url.Values{"a": {"x y"}}, Auth: "Bearer tok"}, &out), "ok")
	assert.Equal(t, "x y", out.Echo)
	var js struct{ A int }
	require.NoError(t, c.Do(ctx, Request{Method: "POST", Path: "/json", JSON: map[string]int{"a": 5}}, &js), "json")
	assert.Equal(t, 5, js.A)

	cases := []struct {
		path    string
		timeout time.Duration
		want    func(t *testing.T, e *Error)
	}{
		{"/invalid", 0, func(t *testing.T, e *Error) {
			assert.Equal(t, 400, e.Status)
			assert.Equal(t, 50035, e.Code)
			assert.Equal(t, "Invalid Form Body", e.Message)
			assert.False(t, e.Retryable())
		}},
		{"/oauth", 0, func(t *testing.T, e *Error) {
			assert.Equal(t, "invalid_grant", e.OAuthError)
			assert.Equal(t, "the code was used", e.OAuthDescription)
		}},
		{"/ratelimit", 0, func(t *testing.T, e *Error) {
			assert.Equal(t, 429, e.Status)
			assert.Equal(t, 1.25, e.RetryAfter)
			assert.True(t, e.Retryable())
		}},
		{"/plain", 0, func(t *testing.T, e *Error) {
			assert.Equal(t, 503, e.Status)
			assert.EqualValues(t, 7, e.RetryAfter)
			assert.True(t, e.Retryable())
			assert.Equal(t, "Service Unavailable", e.Message)
		}},
		{"/slow", 50 * time.Millisecond, func(t *testing.T, e *Error) {
			assert.True(t, e.Network)
			assert.True(t, e.Timeout)
			assert.True(t, e.Retryable())
		}},
		{"/garbage", 0, func(t *testing.T, e *Error) {
			assert.Equal(t, 200, e.Status)
			assert.Equal(t, "{not json", e.Body)
		}},
	}
	for _, tc := range cases {
		t.Run(tc.path, func(t *testing.T) {
			timeout = cmp.Or(tc.timeout, 10*time.Second)
			var e *Error
			require.ErrorAs(t, c.Do(ctx, Request{Path: tc.path}, &out), &e)
			tc.want(t, e)
			assert.NotEmpty(t, e.Error(), "the error's message")
		})
	}

	dead := &Client{Base: "http://127.0.0.1:1"}
	var e *Error
	require.ErrorAs(t, dead.Do(ctx, Request{Path: "/"}, nil), &e, "refused connection")
	assert.True(t, e.Network, "refused connection: a network error")
	assert.False(t, e.Timeout, "refused connection: not a timeout")
}

// Unprocessed tells the failures after which the service provably did not act on a request: no
// connection could be made, or it refused before handling (429, 503). A request cut after it
// was sent, or a 502/504 from a proxy, may have been handled.
func TestUnprocessed(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	closed := "http://" + ln.Addr().String()
	require.NoError(t, ln.Close()) // nothing listens there now: the dial is refused

	cutting := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		conn, _, err := w.(http.Hijacker).Hijack()
		if err == nil {
			conn.Close()
		}
	}))
	defer cutting.Close()
	status := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		code, _ := strconv.Atoi(strings.TrimPrefix(r.URL.Path, "/"))
		w.WriteHeader(code)
	}))
	defer status.Close()

	for _, tc := range []struct {
		name, base, path string
		unprocessed      bool
	}{
		{"connection refused", closed, "/", true},
		{"cut after sending", cutting.URL, "/", false},
		{"429", status.URL, "/429", true},
		{"503", status.URL, "/503", true},
		{"502", status.URL, "/502", false},
		{"504", status.URL, "/504", false},
		{"400", status.URL, "/400", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := &Client{Base: tc.base}
			err := c.Do(context.Background(), Request{Method: http.MethodPost, Path: tc.path, Form: url.Values{"a": {"b"}}}, nil)
			var e *Error
			require.ErrorAs(t, err, &e)
			assert.Equal(t, tc.unprocessed, e.Unprocessed(), "%v", e)
		})
	}
}
