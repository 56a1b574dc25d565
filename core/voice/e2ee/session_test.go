package e2ee

import (
	"bytes"
	"crypto/sha256"
	"fmt"
	"io"
	"regexp"
	"slices"
	"strings"
	"testing"
	"testing/cryptotest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// call is a test call: the sessions of its participants by name, and a signaling stand-in that
// delivers key messages.
type call struct {
	t        *testing.T
	sessions map[string]*Session
	seed     uint64
	now      time.Duration
	keys     map[[2]PublicKeys]SenderKey // newest key each recipient got from each sender
}

func newCall(t *testing.T) *call {
	cryptotest.SetGlobalRandom(t, 42) // HPKE's ephemeral keys
	return &call{t: t, sessions: map[string]*Session{}, seed: 100,
		keys: map[[2]PublicKeys]SenderKey{}}
}

func (c *call) pk(name string) PublicKeys { return c.sessions[name].Identity().Public() }

// deliver hands key messages from sender to their recipients.
func (c *call) deliver(from string, ds []KeyDelivery) {
	c.t.Helper()
	for _, d := range ds {
		for name, s := range c.sessions {
			if s.Identity().Public() == d.To {
				require.NoError(c.t, s.ReceiveKey(c.pk(from), d.Message, c.now), "%s -> %s", from, name)
				k, err := s.Identity().OpenKey(c.pk(from), d.Message)
				require.NoError(c.t, err)
				c.keys[[2]PublicKeys{d.To, c.pk(from)}] = k
			}
		}
	}
}

// join adds a participant: it joins everyone present, and everyone present joins it.
func (c *call) join(name string) {
	c.t.Helper()
	c.seed++
	id, err := NewIdentity(testCallID, seeded(c.seed))
	require.NoError(c.t, err)
	s, err := NewSession(id, seeded(c.seed+1000), 0)
	require.NoError(c.t, err)
	var present []PublicKeys
	for _, o := range c.sessions {
		present = append(present, o.Identity().Public())
	}
	c.sessions[name] = s
	ds, err := s.Join(present...)
	require.NoError(c.t, err)
	assert.Len(c.t, ds, len(present), "%s seals its key to everyone present", name)
	others := c.names(name)
	for _, o := range others {
		ods, err := c.sessions[o].Join(id.Public())
		require.NoError(c.t, err)
		assert.Len(c.t, ods, len(c.sessions)-1, "%s seals its new key to everyone, %s included", o, name)
		c.deliver(o, ods)
	}
	c.deliver(name, ds)
}

// leave removes a participant; the others leave it and rotate. The leaver's session is kept in
// leavers so tests can show what it can no longer do.
func (c *call) leave(name string) *Session {
	c.t.Helper()
	gone := c.sessions[name]
	delete(c.sessions, name)
	for _, o := range c.names("") {
		ds, err := c.sessions[o].Leave(gone.Identity().Public())
		require.NoError(c.t, err)
		assert.Len(c.t, ds, len(c.sessions)-1)
		for _, d := range ds {
			assert.NotEqual(c.t, gone.Identity().Public(), d.To, "nothing is sealed to the leaver")
		}
		c.deliver(o, ds)
	}
	return gone
}

// names returns the participants' names in order, without except.
func (c *call) names(except string) []string {
	var out []string
	for n := range c.sessions {
		if n != except {
			out = append(out, n)
		}
	}
	slices.Sort(out)
	return out
}

// speak seals a frame from name and returns it.
func (c *call) speak(name string, i int) []byte {
	c.t.Helper()
	f, err := c.sessions[name].Seal(nil, testHeader, opusFrame(i))
	require.NoError(c.t, err)
	return f
}

// hearsAll checks that every frame each participant sends opens for every other one.
func (c *call) hearsAll(i int) {
	c.t.Helper()
	for _, from := range c.names("") {
		f := c.speak(from, i)
		for _, to := range c.names(from) {
			got, err := c.sessions[to].Open(c.pk(from), nil, testHeader, f, c.now)
			require.NoError(c.t, err, "%s hears %s", to, from)
			assert.Equal(c.t, opusFrame(i), got)
		}
	}
}

func TestSessionThreeParticipantsRoundTrip(t *testing.T) {
	c := newCall(t)
	for _, n := range []string{"alice", "bob", "carol"} {
		c.join(n)
	}
	for i := range 10 {
		c.hearsAll(i)
	}
	for _, n := range c.names("") {
		assert.Len(t, c.sessions[n].Participants(), 3)
	}
}

func TestSessionLeaverCannotOpenLaterFrames(t *testing.T) {
	c := newCall(t)
	for _, n := range []string{"alice", "bob", "carol"} {
		c.join(n)
	}
	c.hearsAll(0)
	before := c.speak("alice", 1)
	gen := c.sessions["alice"].Generation()

	carol := c.leave("carol")
	assert.Equal(t, gen+1, c.sessions["alice"].Generation(), "alice rotated")
	c.hearsAll(2)

	_, err := carol.Open(c.pk("alice"), nil, testHeader, before, c.now)
	require.NoError(t, err, "carol still opens what was sent while she was there")
	for _, from := range []string{"alice", "bob"} {
		f := c.speak(from, 3)
		_, err := carol.Open(c.sessions[from].Identity().Public(), nil, testHeader, f, c.now)
		assert.ErrorIs(t, err, ErrUnknownGeneration, "carol has no key for %s's frames after she left", from)
		// Even with the opener's generation check bypassed, the key carol holds does not open it.
		o := NewOpener(testCallID, c.pk(from), 0)
		k := c.keys[[2]PublicKeys{carol.Identity().Public(), c.pk(from)}]
		require.NotZero(t, k.Generation)
		require.NoError(t, o.AddKey(SenderKey{Generation: k.Generation + 1, Secret: k.Secret}, c.now))
		_, err = o.Open(nil, testHeader, f, c.now)
		assert.ErrorIs(t, err, ErrDecrypt)
	}
	// The remaining participants no longer accept carol's frames or keys.
	_, err = c.sessions["alice"].Open(carol.Identity().Public(), nil, testHeader, mustSeal(t, carol), c.now)
	assert.ErrorIs(t, err, ErrUnknownSender)
}

func mustSeal(t *testing.T, s *Session) []byte {
	t.Helper()
	f, err := s.Seal(nil, testHeader, opusFrame(0))
	require.NoError(t, err)
	return f
}

func TestSessionNewcomerCannotOpenEarlierFrames(t *testing.T) {
	c := newCall(t)
	c.join("alice")
	c.join("bob")
	early := map[string][]byte{"alice": c.speak("alice", 1), "bob": c.speak("bob", 1)}
	c.join("dave")
	c.hearsAll(2)
	for from, f := range early {
		_, err := c.sessions["dave"].Open(c.pk(from), nil, testHeader, f, c.now)
		assert.ErrorIs(t, err, ErrRetiredGeneration, "dave cannot open %s's frame from before he joined", from)
	}
	// The others still open those frames during the grace period.
	_, err := c.sessions["bob"].Open(c.pk("alice"), nil, testHeader, early["alice"], c.now)
	assert.NoError(t, err)
}

func TestSessionRefusesStaleAndForeignKeys(t *testing.T) {
	c := newCall(t)
	c.join("alice")
	c.join("bob")
	alice, bob := c.sessions["alice"], c.sessions["bob"]

	// Capture a key message alice sends bob, deliver it, then replay it.
	ds, err := alice.Leave(bob.Identity().Public())
	require.NoError(t, err)
	assert.Empty(t, ds)
	ds, err = alice.Join(bob.Identity().Public())
	require.NoError(t, err)
	require.Len(t, ds, 1)
	require.NoError(t, bob.ReceiveKey(c.pk("alice"), ds[0].Message, 0))
	assert.ErrorIs(t, bob.ReceiveKey(c.pk("alice"), ds[0].Message, 0), ErrStaleKey)

	stranger := newIdentity(t, 77)
	msg, err := stranger.SealKeyFor(bob.Identity().Public(), newKey(t, 1, 9))
	require.NoError(t, err)
	assert.ErrorIs(t, bob.ReceiveKey(stranger.Public(), msg, 0), ErrUnknownSender)

	// Joining oneself, someone present, or nobody changes nothing.
	gen := alice.Generation()
	for _, pks := range [][]PublicKeys{nil, {alice.Identity().Public()}, {bob.Identity().Public()}} {
		ds, err := alice.Join(pks...)
		require.NoError(t, err)
		assert.Empty(t, ds)
	}
	ds, err = alice.Leave(stranger.Public())
	require.NoError(t, err)
	assert.Empty(t, ds)
	assert.Equal(t, gen, alice.Generation())
	_, err = alice.Join(PublicKeys{})
	assert.ErrorIs(t, err, ErrMalformed)
}

// TestSessionRejoinKeepsOldGenerationsRefused: when a participant leaves and comes back with the
// same keys, key messages from before it left cannot be replayed to bring old keys back.
func TestSessionRejoinKeepsOldGenerationsRefused(t *testing.T) {
	c := newCall(t)
	c.join("alice")
	c.join("bob")
	alice, bob := c.sessions["alice"], c.sessions["bob"]
	oldMsg, err := bob.Identity().SealKeyFor(alice.Identity().Public(), newKey(t, 5, bob.Generation()))
	require.NoError(t, err)

	_, err = alice.Leave(bob.Identity().Public())
	require.NoError(t, err)
	_, err = alice.Join(bob.Identity().Public())
	require.NoError(t, err)
	assert.ErrorIs(t, alice.ReceiveKey(bob.Identity().Public(), oldMsg, 0), ErrStaleKey)
}

var codeShape = regexp.MustCompile(`^\d{5}( \d{5}){5}$`)

func TestVerificationCode(t *testing.T) {
	c := newCall(t)
	for _, n := range []string{"alice", "bob", "carol"} {
		c.join(n)
	}
	codes := func() map[string]string {
		out := map[string]string{}
		for _, n := range c.names("") {
			out[n] = c.sessions[n].VerificationCode()
		}
		return out
	}
	sameEverywhere := func(m map[string]string) string {
		var first string
		for n, code := range m {
			assert.Regexp(t, codeShape, code, n)
			if first == "" {
				first = code
			}
			assert.Equal(t, first, code, "%s shows the same code", n)
		}
		return first
	}
	three := sameEverywhere(codes())

	c.join("dave")
	four := sameEverywhere(codes())
	assert.NotEqual(t, three, four, "the code changes when someone joins")

	c.leave("dave")
	assert.Equal(t, three, sameEverywhere(codes()), "the code is a function of who is present")
	c.leave("carol")
	two := sameEverywhere(codes())
	assert.NotEqual(t, three, two, "the code changes when someone leaves")

	pks := []PublicKeys{newIdentity(t, 1).Public(), newIdentity(t, 2).Public(), newIdentity(t, 3).Public()}
	want := VerificationCode(testCallID, pks)
	for _, perm := range [][]int{{0, 1, 2}, {2, 1, 0}, {1, 0, 2}, {2, 0, 1}} {
		var p []PublicKeys
		for _, i := range perm {
			p = append(p, pks[i])
		}
		assert.Equal(t, want, VerificationCode(testCallID, p), "order %v", perm)
	}
	assert.NotEqual(t, want, VerificationCode([]byte("call-9999"), pks), "the call id counts")
	assert.NotEqual(t, want, VerificationCode(testCallID, pks[:2]))
	assert.NotEqual(t, want, VerificationCode(testCallID, append(pks, pks[0])), "duplicates count")
	assert.Regexp(t, codeShape, VerificationCode(testCallID, nil))
}

// TestVerificationCodeKnownAnswer recomputes the code step by step as VerificationCode's
// documentation states it.
func TestVerificationCodeKnownAnswer(t *testing.T) {
	pks := []PublicKeys{newIdentity(t, 1).Public(), newIdentity(t, 2).Public()}
	enc := [][]byte{pks[0].Bytes(), pks[1].Bytes()}
	slices.SortFunc(enc, bytes.Compare)
	var in []byte
	in = append(in, "sdkpp-e2ee-v1 verification code\x00"...)
	in = append(in, 0, byte(len(testCallID)))
	in = append(in, testCallID...)
	in = append(in, 0, 0, 0, 2)
	in = append(in, enc[0]...)
	in = append(in, enc[1]...)
	d := sha256.Sum256(in)
	var groups []string
	for i := range 6 {
		var v uint64
		for _, b := range d[5*i : 5*i+5] {
			v = v<<8 | uint64(b)
		}
		groups = append(groups, fmt.Sprintf("%05d", v%100000))
	}
	assert.Equal(t, strings.Join(groups, " "), VerificationCode(testCallID, pks))
}

// failingReader yields n bytes of zeros and then fails.
type failingReader struct{ n int }

func (r *failingReader) Read(p []byte) (int, error) {
	if r.n <= 0 {
		return 0, io.ErrUnexpectedEOF
	}
	k := min(len(p), r.n)
	clear(p[:k])
	r.n -= k
	return k, nil
}

// TestSessionFailedLeaveFailsClosed: if no new key can be made when someone leaves, nothing more
// is sealed under the key the leaver holds until a rotation succeeds.
func TestSessionFailedLeaveFailsClosed(t *testing.T) {
	c := newCall(t)
	c.join("alice")
	c.join("bob")
	alice := c.sessions["alice"]
	gen := alice.Generation()
	rand := alice.rand
	alice.rand = &failingReader{}
	_, err := alice.Leave(c.pk("bob"))
	require.ErrorIs(t, err, io.ErrUnexpectedEOF)
	_, err = alice.Seal(nil, testHeader, opusFrame(0))
	assert.ErrorIs(t, err, ErrNeedsRotation)
	assert.Equal(t, gen, alice.Generation())
	_, err = alice.Rotate()
	assert.Error(t, err, "still no randomness")

	alice.rand = rand
	ds, err := alice.Rotate()
	require.NoError(t, err)
	assert.Empty(t, ds, "nobody else is present")
	assert.Equal(t, gen+1, alice.Generation())
	_, err = alice.Seal(nil, testHeader, opusFrame(0))
	assert.NoError(t, err)
}
