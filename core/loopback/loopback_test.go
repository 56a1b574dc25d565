package loopback

import (
	"context"
	"errors"
	"net/http"
	"testing"
)

func get(t *testing.T, url string) int {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		return -1
	}
	resp.Body.Close()
	return resp.StatusCode
}

func TestReceivesCode(t *testing.T) {
	r, err := Listen("st")
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	if got := get(t, r.RedirectURI()+"?code=abc&state=st"); got != 200 {
		t.Fatalf("status %d", got)
	}
	code, err := r.Wait(context.Background())
	if err != nil || code != "abc" {
		t.Fatalf("Wait = %q, %v", code, err)
	}
}

func TestRejections(t *testing.T) {
	cases := []struct {
		query string
		check func(error) bool
	}{
		{"?code=abc&state=other", func(err error) bool { return errors.Is(err, ErrStateMismatch) }}, // rule AA-3
		{"?code=abc", func(err error) bool { return errors.Is(err, ErrStateMismatch) }},
		{"?error=access_denied&error_description=no&state=st", func(err error) bool {
			var d *DeniedError
			return errors.As(err, &d) && d.Code == "access_denied" && d.Description == "no"
		}},
		{"?state=st", func(err error) bool { return errors.Is(err, ErrNoCode) }},
	}
	for _, c := range cases {
		r, err := Listen("st")
		if err != nil {
			t.Fatal(err)
		}
		if got := get(t, r.RedirectURI()+c.query); got != 400 {
			t.Errorf("%s: status %d", c.query, got)
		}
		if _, err := r.Wait(context.Background()); !c.check(err) {
			t.Errorf("%s: %v", c.query, err)
		}
		r.Close()
	}
}

func TestCloseAndCancel(t *testing.T) {
	r, err := Listen("st")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 0) // past its deadline already
	defer cancel()
	if _, err := r.Wait(ctx); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("Wait = %v", err)
	}
	uri := r.RedirectURI()
	r.Close()
	if got := get(t, uri+"?code=late&state=st"); got != -1 {
		t.Fatalf("a redirect after Close got status %d", got)
	}
}
