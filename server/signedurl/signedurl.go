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
	"fmt"
	"hash"
	"net/url"
	"strconv"
	"strings"
	"sync"
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
	// macs holds *macState: a page of messages signs the URL of each of its attachments, and a
	// new HMAC costs its key's two hash blocks and several allocations each time.
	macs sync.Pool
}

// macState is an HMAC-SHA256 under a Signer's key, with room for a message and its sum.
type macState struct {
	h   hash.Hash
	msg []byte
	sum [sha256.Size]byte
}

// New returns a Signer whose key is kept in st (made on first use, by the first of the nodes
// that start together: store.InitSetting) and whose time is c's.
func New(ctx context.Context, st store.Store, c clock.Clock) (*Signer, error) {
	key, err := st.InitSetting(ctx, keySetting, []byte(secret.Token()))
	if err != nil {
		return nil, fmt.Errorf("signedurl: key: %w", err)
	}
	return NewWithKey(key, c), nil
}

// NewWithKey returns a Signer with the given key and clock (tests).
func NewWithKey(key []byte, c clock.Clock) *Signer {
	s := &Signer{key: key, clock: c}
	s.macs.New = func() any { return &macState{h: hmac.New(sha256.New, s.key)} }
	return s
}

// Sign returns u (an absolute URL or a path, without a query) with ex, is and hm for path (u's
// path as the server will see it) valid for TTL from now.
func (s *Signer) Sign(u, path string) string {
	now := s.clock.Now()
	var b strings.Builder
	b.Grow(len(u) + len("?ex=&is=&hm=&") + 2*16 + 2*sha256.Size)
	b.WriteString(u)
	b.WriteString("?ex=")
	start := b.Len()
	var num [16]byte
	b.Write(strconv.AppendInt(num[:0], now.Add(TTL).Unix(), 16))
	ex := b.String()[start:] // the Builder's bytes stay where they are while it has room
	b.WriteString("&is=")
	start = b.Len()
	b.Write(strconv.AppendInt(num[:0], now.Unix(), 16))
	is := b.String()[start:]
	b.WriteString("&hm=")
	m := s.mac(path, ex, is)
	var hexSum [2 * sha256.Size]byte
	hex.Encode(hexSum[:], m.sum[:])
	s.macs.Put(m)
	b.Write(hexSum[:])
	b.WriteByte('&')
	return b.String()
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
	m := s.mac(path, ex, is)
	var want [2 * sha256.Size]byte
	hex.Encode(want[:], m.sum[:])
	s.macs.Put(m)
	if !hmac.Equal([]byte(hm), want[:]) {
		return false
	}
	return s.clock.Now().Unix() < expires
}

// mac computes the HMAC of path, ex and is into the sum of a macState, which the caller puts
// back into s.macs once it has used the sum.
func (s *Signer) mac(path, ex, is string) *macState {
	m := s.macs.Get().(*macState)
	m.msg = append(append(append(append(append(m.msg[:0], path...), 0), ex...), 0), is...)
	m.h.Reset()
	m.h.Write(m.msg)
	m.h.Sum(m.sum[:0])
	return m
}
