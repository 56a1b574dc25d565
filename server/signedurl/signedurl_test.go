package signedurl

import (
	"net/url"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"sdkpp/internal/clock"
)

// A signed URL is valid for its path until ex; any other path, key or parameter fails.
func TestSignAndCheck(t *testing.T) {
	t0 := time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC)
	c := clock.NewFake(t0)
	s := NewWithKey([]byte("key"), c)
	u := s.Sign("http://h/attachments/1/2/a.txt", "/attachments/1/2/a.txt")
	require.True(t, strings.HasSuffix(u, "&"), u)
	p, err := url.Parse(u)
	require.NoError(t, err)
	q := p.Query()
	assert.Equal(t, "69f495c0", q.Get("is"), "hex Unix seconds")
	assert.Equal(t, strconv.FormatInt(t0.Add(24*time.Hour).Unix(), 16), q.Get("ex"), "a day later")
	assert.Len(t, q.Get("hm"), 64)
	assert.True(t, s.Valid("/attachments/1/2/a.txt", q))
	assert.False(t, s.Valid("/attachments/1/2/b.txt", q), "another path")
	assert.False(t, NewWithKey([]byte("other"), c).Valid("/attachments/1/2/a.txt", q), "another key")
	for _, name := range []string{"ex", "is", "hm"} {
		changed := url.Values{}
		for k, v := range q {
			changed[k] = v
		}
		changed.Set(name, "1"+q.Get(name))
		assert.False(t, s.Valid("/attachments/1/2/a.txt", changed), name)
		changed.Del(name)
		assert.False(t, s.Valid("/attachments/1/2/a.txt", changed), "without "+name)
	}
	c.Advance(TTL - time.Second)
	assert.True(t, s.Valid("/attachments/1/2/a.txt", q))
	c.Advance(time.Second)
	assert.False(t, s.Valid("/attachments/1/2/a.txt", q), "expired")
}
