package gateway

import (
	"context"
	"encoding/json"
	"errors"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Discover takes the gateway's URL from the service's answer, and fails clearly without one.
func TestDiscover(t *testing.T) {
	answer := func(body string, err error) func(context.Context, string, any) error {
		return func(_ context.Context, path string, out any) error {
			assert.Equal(t, "/gateway", path)
			if err != nil {
				return err
			}
			return json.Unmarshal([]byte(body), out)
		}
	}
	cfg := Config{Token: func() string { return "t" }}
	_, err := Discover(context.Background(), answer("", errors.New("refused")), cfg)
	assert.ErrorContains(t, err, "cannot find the gateway: refused")
	_, err = Discover(context.Background(), answer(`{}`, nil), cfg)
	assert.ErrorContains(t, err, "the service named none")
	c, err := Discover(context.Background(), answer(`{"url": "ws://127.0.0.1:1/gateway"}`, nil), cfg)
	require.NoError(t, err)
	assert.Contains(t, c.cfg.URL, "ws://127.0.0.1:1/gateway")
}
