// Package signedurl signs URLs with an expiry as the platform's CDN signs attachment URLs: three
// query parameters, ex (when the URL expires) and is (when it was issued), each in Unix seconds
// as hexadecimal, and hm, the hexadecimal HMAC-SHA256 of the path with both, under a key of the
// service. A URL whose hm does not match, or whose ex has passed, is refused.
package signedurl

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"net/url"
	"strconv"
	"time"

	"sdkpp/internal/clock"
	"sdkpp/server/secret"
	"sdkpp/server/store"
)

// TTL is how long a signed URL stays valid: the platform's attachment URLs last a day.
const TTL = 24 * time.Hour

// keySetting is the store setting that keeps the key, so that every node and every restart
// signs and checks alike.
const keySetting = "signedurl.key"

// Signer signs and checks URLs.
type Signer struct {
	key   []byte
	clock clock.Clock
}

// New returns a Signer whose key is kept in st (made on first use) and whose time is c's.
func New(ctx context.Context, st store.Store, c clock.Clock) (*Signer, error) {
	key, err := st.GetSetting(ctx, keySetting)
	if errors.Is(err, store.ErrNotFound) {
		if err := st.PutSetting(ctx, keySetting, []byte(secret.Token())); err != nil {
			return nil, fmt.Errorf("signedurl: keep key: %w", err)
		}
		// Read back: a node that started at the same time may have written its own.
		key, err = st.GetSetting(ctx, keySetting)
	}
	if err != nil {
		return nil, fmt.Errorf("signedurl: key: %w", err)
	}
	return &Signer{key: key, clock: c}, nil
}

// NewWithKey returns a Signer with the given key and clock (tests).
func NewWithKey(key []byte, c clock.Clock) *Signer { return &Signer{key: key, clock: c} }

// Sign returns u (an absolute URL or a path, without a query) with ex, is and hm for path (u's
// path as the server will see it) valid for TTL from now.
func (s *Signer) Sign(u, path string) string {
	now := s.clock.Now()
	is := strconv.FormatInt(now.Unix(), 16)
	ex := strconv.FormatInt(now.Add(TTL).Unix(), 16)
	return u + "?ex=" + ex + "&is=" + is + "&hm=" + s.mac(path, ex, is) + "&"
}

// Valid tells whether q signs path and has not expired.
func (s *Signer) Valid(path string, q url.Values) bool {
	ex, is, hm := q.Get("ex"), q.Get("is"), q.Get("hm")
	expires, err := strconv.ParseInt(ex, 16, 64)
	if err != nil || ex == "" || is == "" {
		return false
	}
	if _, err := strconv.ParseInt(is, 16, 64); err != nil {
		return false
	}
	want := s.mac(path, ex, is)
	if !hmac.Equal([]byte(hm), []byte(want)) {
		return false
	}
	return s.clock.Now().Unix() < expires
}

func (s *Signer) mac(path, ex, is string) string {
	m := hmac.New(sha256.New, s.key)
	m.Write([]byte(path))
	m.Write([]byte{0})
	m.Write([]byte(ex))
	m.Write([]byte{0})
	m.Write([]byte(is))
	return hex.EncodeToString(m.Sum(nil))
}
