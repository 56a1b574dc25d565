package loopback

import (
	"context"
	"errors"
	"net/http"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
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
	require.NoError(t, err)
	defer r.Close()
	got := get(t, r.RedirectURI()+"?code=abc&state=st")
	require.EqualValues(t, 200, got, "status %d", got)
	code, err := r.Wait(context.Background())
	assert.NoError(t, err, "Wait = %q,", code)
	assert.Equal(t, "abc", code, "Wait = %q, %v", code, err)
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
		require.NoError(t, err)
		got := get(t, r.RedirectURI()+c.query)
		assert.EqualValues(t, 400, got, "%s: status %d", c.query, got)
		_, err = r.Wait(context.Background())
		assert.True(t, c.check(err), "%s: %v", c.query, err)
		r.Close()
	}
}

func TestCloseAndCancel(t *testing.T) {
	r, err := Listen("st")
	require.NoError(t, err)
	ctx, cancel := context.WithTimeout(context.Background(), 0) // past its deadline already
	defer cancel()
	_, err = r.Wait(ctx)
	require.ErrorIs(t, err, context.DeadlineExceeded, "Wait = %v", err)
	uri := r.RedirectURI()
	r.Close()
	got := get(t, uri+"?code=late&state=st")
	assert.EqualValues(t, -1, got, "a redirect after Close got status %d", got)
}
