package e2ee

import (
	"bytes"
	"crypto/ed25519"
	"encoding/binary"
	"math"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

var testHeader = []byte{0x90, 0x78, 0x00, 0x01, 0xde, 0xad, 0xbe, 0xef}

func TestFrameRoundTrip(t *testing.T) {
	_, s, o := pair(t, newKey(t, 1, 1))
	for i, header := range [][]byte{testHeader, nil, {}, bytes.Repeat([]byte{7}, 300)} {
		payload := opusFrame(i)
		f := seal(t, s, header, payload)
		require.Len(t, f, len(payload)+FrameOverhead)
		assert.False(t, bytes.Contains(f, payload[:16]), "the payload travels encrypted")
		assert.Equal(t, uint64(i), binary.BigEndian.Uint64(f[4:12]), "counter")

		got, err := o.Open([]byte("dst:"), header, f, 0)
		require.NoError(t, err)
		assert.Equal(t, append([]byte("dst:"), payload...), got, "appends to dst")
	}
	empty := seal(t, s, testHeader, nil)
	got, err := o.Open(nil, testHeader, empty, 0)
	require.NoError(t, err)
	assert.Empty(t, got)
}

// TestOpenRefusesEveryTamperedByte changes each byte of the header and of the sealed frame
// (generation, counter, ciphertext, tag, signature) in turn, and also changes the lengths.
func TestOpenRefusesEveryTamperedByte(t *testing.T) {
	_, s, o := pair(t, newKey(t, 1, 1))
	payload := opusFrame(1)
	f := seal(t, s, testHeader, payload)

	part := func(i int) string {
		switch {
		case i < 4:
			return "generation"
		case i < FramePrefixSize:
			return "counter"
		case i < FramePrefixSize+len(payload):
			return "ciphertext"
		case i < FramePrefixSize+len(payload)+TagSize:
			return "tag"
		default:
			return "signature"
		}
	}
	for i := range f {
		for _, flip := range []byte{0x01, 0x80, 0xff} {
			bad := bytes.Clone(f)
			bad[i] ^= flip
			got, err := o.Open(nil, testHeader, bad, 0)
			assert.Error(t, err, "%s byte %d ^ %#x", part(i), i, flip)
			assert.Nil(t, got)
		}
	}
	for i := range testHeader {
		bad := bytes.Clone(testHeader)
		bad[i] ^= 0x01
		_, err := o.Open(nil, bad, f, 0)
		assert.ErrorIs(t, err, ErrBadSignature, "header byte %d", i)
	}
	for _, tt := range []struct {
		name          string
		header, frame []byte
	}{
		{"header dropped", nil, f},
		{"header extended", append(bytes.Clone(testHeader), 0), f},
		{"header byte moved into frame", testHeader[:len(testHeader)-1], f},
		{"frame truncated", testHeader, f[:len(f)-1]},
		{"frame extended", testHeader, append(bytes.Clone(f), 0)},
		{"signature only", testHeader, f[len(f)-64:]},
	} {
		_, err := o.Open(nil, tt.header, tt.frame, 0)
		assert.Error(t, err, tt.name)
	}

	got, err := o.Open(nil, testHeader, f, 0)
	require.NoError(t, err, "tampered copies do not use up the genuine frame's counter")
	assert.Equal(t, payload, got)
}

func TestOpenRefusesReplay(t *testing.T) {
	_, s, o := pair(t, newKey(t, 1, 1))
	f := seal(t, s, testHeader, opusFrame(0))
	_, err := o.Open(nil, testHeader, f, 0)
	require.NoError(t, err)
	_, err = o.Open(nil, testHeader, f, 0)
	assert.ErrorIs(t, err, ErrReplay)

	// A replay of an older frame after newer ones is refused too.
	g := seal(t, s, testHeader, opusFrame(1))
	_, err = o.Open(nil, testHeader, g, 0)
	require.NoError(t, err)
	_, err = o.Open(nil, testHeader, f, 0)
	assert.ErrorIs(t, err, ErrReplay)
}

func TestOpenReorderWindow(t *testing.T) {
	tests := []struct {
		name  string
		order []int   // counters in arrival order
		want  []error // per arrival
	}{
		{"in order", []int{0, 1, 2}, []error{nil, nil, nil}},
		{"swapped", []int{1, 0, 2}, []error{nil, nil, nil}},
		{"late by the window minus one", []int{ReplayWindow - 1, 0}, []error{nil, nil}},
		{"late by the window", []int{ReplayWindow, 0}, []error{nil, ErrTooOld}},
		{"late by much more", []int{1000, 3}, []error{nil, ErrTooOld}},
		{"first frame sets the window", []int{500, 400, 373, 372}, []error{nil, nil, nil, ErrTooOld}},
		{"gap then fill", []int{0, 70, 10, 69, 10}, []error{nil, nil, nil, nil, ErrReplay}},
		{"old duplicate across word", []int{5, 100, 5}, []error{nil, nil, ErrReplay}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, s, o := pair(t, newKey(t, 1, 1))
			frames := make([][]byte, slices.Max(tt.order)+1)
			for i := range frames {
				frames[i] = seal(t, s, testHeader, opusFrame(i))
			}
			for i, c := range tt.order {
				got, err := o.Open(nil, testHeader, frames[c], 0)
				if tt.want[i] == nil {
					require.NoError(t, err, "arrival %d (counter %d)", i, c)
					assert.Equal(t, opusFrame(c), got)
				} else {
					assert.ErrorIs(t, err, tt.want[i], "arrival %d (counter %d)", i, c)
				}
			}
		})
	}
}

// TestWindowMatchesModel compares the bitmap window with a set-based model on random arrivals.
func TestWindowMatchesModel(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for run := range 50 {
		var w window
		seen := map[uint64]bool{}
		var top uint64
		base := r.Uint64N(1 << 40)
		for step := range 2000 {
			c := base + r.Uint64N(uint64(step/4+2)*3)
			var want error
			switch {
			case len(seen) > 0 && c <= top && top-c >= ReplayWindow:
				want = ErrTooOld
			case seen[c]:
				want = ErrReplay
			}
			got := w.check(c)
			require.Equal(t, want, got, "run %d step %d counter %d top %d", run, step, c, top)
			if got == nil {
				w.mark(c)
				seen[c] = true
				if c > top || len(seen) == 1 {
					top = c
				}
			}
		}
	}
}

func TestOpenGenerations(t *testing.T) {
	k1, k2, k3 := newKey(t, 1, 1), newKey(t, 2, 2), newKey(t, 3, 3)
	_, s, o := pair(t, k1)
	old := seal(t, s, testHeader, opusFrame(0))
	old2 := seal(t, s, testHeader, opusFrame(1))
	require.NoError(t, s.Rotate(k2))
	assert.Equal(t, uint32(2), s.Generation())
	next := seal(t, s, testHeader, opusFrame(2))
	assert.Equal(t, uint64(0), binary.BigEndian.Uint64(next[4:12]), "the counter restarts under a new key")

	_, err := o.Open(nil, testHeader, next, 0)
	assert.ErrorIs(t, err, ErrUnknownGeneration, "key 2 has not arrived")

	const rotatedAt = 10 * time.Second
	require.NoError(t, o.AddKey(k2, rotatedAt))
	assert.Equal(t, uint32(2), o.Generation())
	_, err = o.Open(nil, testHeader, next, rotatedAt)
	require.NoError(t, err)
	_, err = o.Open(nil, testHeader, old, rotatedAt+DefaultGrace-time.Millisecond)
	require.NoError(t, err, "the previous generation opens during the grace period")
	_, err = o.Open(nil, testHeader, old, rotatedAt+DefaultGrace-time.Millisecond)
	assert.ErrorIs(t, err, ErrReplay, "and keeps its own replay window")
	_, err = o.Open(nil, testHeader, old2, rotatedAt+DefaultGrace)
	assert.ErrorIs(t, err, ErrRetiredGeneration, "but not after it")

	assert.ErrorIs(t, o.AddKey(k1, rotatedAt), ErrStaleKey)
	assert.ErrorIs(t, o.AddKey(k2, rotatedAt), ErrStaleKey)
	assert.ErrorIs(t, o.AddKey(SenderKey{}, rotatedAt), ErrStaleKey)
	assert.ErrorIs(t, s.Rotate(k2), ErrStaleKey)
	assert.ErrorIs(t, s.Rotate(k1), ErrStaleKey)

	// Two quick rotations: the generation before the previous one is dropped at once.
	require.NoError(t, s.Rotate(k3))
	third := seal(t, s, testHeader, opusFrame(3))
	require.NoError(t, o.AddKey(k3, rotatedAt+time.Second))
	_, err = o.Open(nil, testHeader, old2, rotatedAt+time.Second)
	assert.ErrorIs(t, err, ErrRetiredGeneration)
	_, err = o.Open(nil, testHeader, third, rotatedAt+time.Second)
	require.NoError(t, err)

	o.Forget()
	assert.Equal(t, uint32(3), o.Generation(), "forgetting keeps the generation number")
	_, err = o.Open(nil, testHeader, seal(t, s, testHeader, opusFrame(4)), rotatedAt+time.Second)
	assert.ErrorIs(t, err, ErrRetiredGeneration)
	assert.ErrorIs(t, o.AddKey(k3, rotatedAt), ErrStaleKey, "a forgotten key cannot be put back")
}

func TestOpenWithoutKey(t *testing.T) {
	id, s, _ := pair(t, newKey(t, 1, 1))
	o := NewOpener(testCallID, id.Public(), time.Second)
	assert.Equal(t, uint32(0), o.Generation())
	_, err := o.Open(nil, testHeader, seal(t, s, testHeader, opusFrame(0)), 0)
	assert.ErrorIs(t, err, ErrUnknownGeneration)
}

// TestMemberCannotForgeSender: bob holds alice's media key (he must, to hear her) but cannot make
// a frame that alice's Opener accepts.
func TestMemberCannotForgeSender(t *testing.T) {
	key := newKey(t, 1, 1)
	_, alice, fromAlice := pair(t, key)
	genuine := seal(t, alice, testHeader, opusFrame(0))
	bob := newIdentity(t, 2)

	// Bob seals under alice's key and signs with his own key.
	bobAsAlice, err := NewSealer(bob, key)
	require.NoError(t, err)
	forged := seal(t, bobAsAlice, testHeader, []byte("forged"))
	_, err = fromAlice.Open(nil, testHeader, forged, 0)
	assert.ErrorIs(t, err, ErrBadSignature)

	// Bob builds a valid AES-GCM frame under alice's key and reuses one of alice's signatures.
	aead, err := newGCM(&key.Secret)
	require.NoError(t, err)
	for _, ctr := range []uint64{0, 1} {
		var prefix [FramePrefixSize]byte
		binary.BigEndian.PutUint32(prefix[:], 1)
		binary.BigEndian.PutUint64(prefix[4:], ctr)
		f := aead.Seal(bytes.Clone(prefix[:]), prefix[:], []byte("forged"), appendAAD(nil, prefix[:], testHeader))
		f = append(f, genuine[len(genuine)-ed25519.SignatureSize:]...)
		_, err = fromAlice.Open(nil, testHeader, f, 0)
		assert.ErrorIs(t, err, ErrBadSignature, "counter %d", ctr)
	}

	got, err := fromAlice.Open(nil, testHeader, genuine, 0)
	require.NoError(t, err, "forgeries do not use up counters")
	assert.Equal(t, opusFrame(0), got)
}

// TestFramesAreBoundToCallAndSender: the same frame does not open as another sender's or in
// another call, even with the right media key.
func TestFramesAreBoundToCallAndSender(t *testing.T) {
	key := newKey(t, 1, 1)
	id, s, _ := pair(t, key)
	f := seal(t, s, testHeader, opusFrame(0))
	for name, o := range map[string]*Opener{
		"other call":   NewOpener([]byte("call-9999"), id.Public(), 0),
		"other sender": NewOpener(testCallID, newIdentity(t, 5).Public(), 0),
	} {
		require.NoError(t, o.AddKey(key, 0))
		_, err := o.Open(nil, testHeader, f, 0)
		assert.ErrorIs(t, err, ErrBadSignature, name)
	}
}

func TestSealLimits(t *testing.T) {
	_, s, o := pair(t, newKey(t, 1, 1))
	_, err := s.Seal(nil, make([]byte, MaxHeader+1), nil)
	assert.ErrorIs(t, err, ErrMalformed)
	_, err = o.Open(nil, make([]byte, MaxHeader+1), make([]byte, FrameOverhead), 0)
	assert.ErrorIs(t, err, ErrMalformed)

	s.next = math.MaxUint64 - 1
	last := seal(t, s, testHeader, opusFrame(0))
	_, err = o.Open(nil, testHeader, last, 0)
	require.NoError(t, err)
	_, err = s.Seal(nil, testHeader, opusFrame(1))
	assert.ErrorIs(t, err, ErrExhausted, "the counter never wraps under one key")
	require.NoError(t, s.Rotate(newKey(t, 2, 2)))
	_, err = s.Seal(nil, testHeader, opusFrame(1))
	assert.NoError(t, err)
}

// TestForgottenKeyStaysGoneAfterNewKey: a key forgotten (the sender left) does not come back as
// the previous generation when the sender returns with a newer key.
func TestForgottenKeyStaysGoneAfterNewKey(t *testing.T) {
	k1, k2 := newKey(t, 1, 1), newKey(t, 2, 2)
	_, s, o := pair(t, k1)
	old := seal(t, s, testHeader, opusFrame(0))
	o.Forget()
	require.NoError(t, o.AddKey(k2, 0))
	_, err := o.Open(nil, testHeader, old, 0)
	assert.ErrorIs(t, err, ErrRetiredGeneration)
}
