package records

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func strp(s string) *string { return &s }

func TestClientResultToString(t *testing.T) {
	require.Equal(t, "ClientResult{Successful}", Success().ToString(), Success().ToString())
	r := Failure(ErrorTypeHTTPError, "rate limited, Bearer abcdefghijk")
	r.SetStatus(HttpStatusCodeTooManyRequests)
	r.SetErrorCode(0)
	r.SetRetryable(true)
	r.SetRetryAfter(1.5)
	s := r.ToString()
	assert.Contains(t, s, "HTTPError", s)
	assert.Contains(t, s, "429", s)
	assert.Contains(t, s, "RetryAfter: 1.5s", s)
	assert.NotContains(t, s, "abcdefghijk", s)
	assert.True(t, HttpStatusCode(418).Valid(), "HttpStatusCode is an open enum")
	assert.Equal(t, "unknown", HttpStatusCode(418).String(), "HttpStatusCode is an open enum")
	assert.False(t, IntegrationType(5).Valid(), "IntegrationType(5) is valid")
}
