package rest

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"testing"
	"time"
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
		case "/api/slow":
			time.Sleep(300 * time.Millisecond)
		case "/api/garbage":
			io.WriteString(w, "{not json")
		}
	}))
	defer srv.Close()
	c := &Client{Base: srv.URL + "/api/", Timeout: func() time.Duration { return 100 * time.Millisecond }}
	ctx := context.Background()

	var out struct{ Echo string }
	if err := c.Do(ctx, Request{Method: "POST", Path: "/ok", Form: url.Values{"a": {"x y"}}, Auth: "Bearer tok"}, &out); err != nil || out.Echo != "x y" {
		t.Fatalf("ok: %v %+v", err, out)
	}
	var js struct{ A int }
	if err := c.Do(ctx, Request{Method: "POST", Path: "/json", JSON: map[string]int{"a": 5}}, &js); err != nil || js.A != 5 {
		t.Fatalf("json: %v %+v", err, js)
	}

	cases := []struct {
		path  string
		check func(*Error) bool
	}{
		{"/invalid", func(e *Error) bool {
			return e.Status == 400 && e.Code == 50035 && e.Message == "Invalid Form Body" && !e.Retryable()
		}},
		{"/oauth", func(e *Error) bool {
			return e.OAuthError == "invalid_grant" && e.OAuthDescription == "the code was used"
		}},
		{"/ratelimit", func(e *Error) bool { return e.Status == 429 && e.RetryAfter == 1.25 && e.Retryable() }},
		{"/plain", func(e *Error) bool {
			return e.Status == 503 && e.RetryAfter == 7 && e.Retryable() && e.Message == "Service Unavailable"
		}},
		{"/slow", func(e *Error) bool { return e.Network && e.Timeout && e.Retryable() }},
		{"/garbage", func(e *Error) bool { return e.Status == 200 && e.Body == "{not json" }},
	}
	for _, tc := range cases {
		err := c.Do(ctx, Request{Path: tc.path}, &out)
		var e *Error
		if !errors.As(err, &e) || !tc.check(e) {
			t.Errorf("%s: %#v", tc.path, err)
		}
		if e != nil && e.Error() == "" {
			t.Errorf("%s: empty message", tc.path)
		}
	}

	dead := &Client{Base: "http://127.0.0.1:1"}
	var e *Error
	if err := dead.Do(ctx, Request{Path: "/"}, nil); !errors.As(err, &e) || !e.Network || e.Timeout {
		t.Fatalf("refused connection: %#v", err)
	}
}
