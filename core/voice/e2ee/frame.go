package e2ee

import (
	"crypto/aes"
	"crypto/cipher"
	"crypto/ed25519"
	"encoding/binary"
	"fmt"
	"math"
	"sync"
	"time"
)

// Sizes of the parts of a sealed frame (see the package documentation for the layout).
const (
	// FramePrefixSize is the clear generation and counter at the start of a sealed frame.
	FramePrefixSize = 4 + 8
	// TagSize is the AES-GCM tag that follows the encrypted payload.
	TagSize = 16
	// FrameOverhead is how many bytes Seal adds to the payload: prefix, tag and signature.
	FrameOverhead = FramePrefixSize + TagSize + ed25519.SignatureSize
	// MaxHeader is the longest unencrypted header a frame may authenticate.
	MaxHeader = 1 << 16
)

// DefaultGrace is how long an Opener keeps accepting the previous generation of a sender's key
// after the next one arrives, so that frames already in flight when the sender rotated still
// open.
const DefaultGrace = 5 * time.Second

// newGCM makes the AES-128-GCM AEAD (12-byte nonce, 16-byte tag) for a media key.
func newGCM(secret *[KeySize]byte) (cipher.AEAD, error) {
	block, err := aes.NewCipher(secret[:])
	if err != nil {
		return nil, fmt.Errorf("aes: %w", err)
	}
	gcm, err := cipher.NewGCM(block)
	if err != nil {
		return nil, fmt.Errorf("gcm: %w", err)
	}
	return gcm, nil
}

// frameContext is the fixed start of every frame signature of sender in call callID.
func frameContext(callID []byte, sender PublicKeys) []byte {
	return appendCallContext(nil, labelFrameSig, callID, sender)
}

// appendAAD appends the AEAD additional data of a frame: its clear prefix, then the header.
func appendAAD(b, prefix, header []byte) []byte {
	b = append(b, prefix...)
	return append(b, header...)
}

// appendSigned appends the message a frame signature covers: the sender's frame context, the
// clear prefix (generation and counter), the header with a 4-byte length, and the ciphertext with
// its tag.
func appendSigned(b, context, prefix, header, ciphertext []byte) []byte {
	b = append(b, context...)
	b = append(b, prefix...)
	b = binary.BigEndian.AppendUint32(b, uint32(len(header)))
	b = append(b, header...)
	return append(b, ciphertext...)
}

// Sealer seals one sender's frames. Make one per call with NewSealer; the call layer rotates its
// key with Rotate. Seal and Rotate may be called from different goroutines.
type Sealer struct {
	mu      sync.Mutex
	sig     ed25519.PrivateKey
	context []byte
	gen     uint32
	aead    cipher.AEAD
	next    uint64 // counter of the next frame under gen
	blocked bool   // Seal refuses until the next Rotate (see Block)
	scratch []byte
}

// NewSealer returns a Sealer for id's frames, starting with key.
func NewSealer(id *Identity, key SenderKey) (*Sealer, error) {
	s := &Sealer{sig: id.sig, context: frameContext(id.callID, id.public)}
	if err := s.Rotate(key); err != nil {
		return nil, fmt.Errorf("e2ee: new sealer: %w", err)
	}
	return s, nil
}

// Rotate switches to key, whose generation must be newer than the current one; the counter starts
// again at 0 under the new key. Frames sealed after Rotate returns use the new key.
func (s *Sealer) Rotate(key SenderKey) error {
	aead, err := newGCM(&key.Secret)
	if err != nil {
		return fmt.Errorf("e2ee: rotate: %w", err)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if key.Generation <= s.gen {
		return fmt.Errorf("e2ee: rotate to generation %d from %d: %w", key.Generation, s.gen, ErrStaleKey)
	}
	s.gen, s.aead, s.next, s.blocked = key.Generation, aead, 0, false
	return nil
}

// Block makes Seal refuse (ErrNeedsRotation) until the next successful Rotate: the current key
// must not be used any more (someone who holds it has left) but no new key could be made yet.
func (s *Sealer) Block() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.blocked = true
}

// Generation returns the generation of the key frames are sealed under now.
func (s *Sealer) Generation() uint32 {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.gen
}

// Seal appends the sealed frame of payload to dst and returns the result: generation and counter
// in clear, the payload encrypted with AES-GCM under the current key with header, generation and
// counter as additional data, then the sender's Ed25519 signature. header is the caller's
// unencrypted part of the packet (it is authenticated, not copied into the result); the receiver
// must pass the same bytes to Opener.Open. The result is len(payload)+FrameOverhead bytes longer
// than dst.
func (s *Sealer) Seal(dst, header, payload []byte) ([]byte, error) {
	if len(header) > MaxHeader {
		return dst, fmt.Errorf("e2ee: seal: header of %d bytes, at most %d: %w", len(header), MaxHeader, ErrMalformed)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.blocked {
		return dst, fmt.Errorf("e2ee: seal: generation %d: %w", s.gen, ErrNeedsRotation)
	}
	if s.next == math.MaxUint64 {
		return dst, fmt.Errorf("e2ee: seal: generation %d: %w", s.gen, ErrExhausted)
	}
	var prefix [FramePrefixSize]byte
	binary.BigEndian.PutUint32(prefix[:4], s.gen)
	binary.BigEndian.PutUint64(prefix[4:], s.next)
	s.next++

	start := len(dst)
	dst = append(dst, prefix[:]...)
	s.scratch = appendAAD(s.scratch[:0], prefix[:], header)
	dst = s.aead.Seal(dst, prefix[:], payload, s.scratch) // the 12-byte prefix is the GCM nonce
	s.scratch = appendSigned(s.scratch[:0], s.context, prefix[:], header, dst[start+FramePrefixSize:])
	return append(dst, ed25519.Sign(s.sig, s.scratch)...), nil
}

// generation is one key generation an Opener holds.
type generation struct {
	gen      uint32
	aead     cipher.AEAD
	seen     window
	retireAt time.Duration // for the previous generation: when it stops being accepted
}

// Opener opens the frames of one remote sender. Make one per sender with NewOpener, give it the
// sender's keys with AddKey as they arrive through signaling, and open frames with Open. AddKey
// and Open may be called from different goroutines.
//
// Times are time.Duration values on one monotonic scale of the caller's choosing (for example
// time since the call started); the Opener never reads a clock.
type Opener struct {
	mu      sync.Mutex
	sender  ed25519.PublicKey
	context []byte
	grace   time.Duration
	cur     *generation
	prev    *generation
	scratch []byte
}

// NewOpener returns an Opener for the frames sender seals in call callID. It holds no key yet.
// grace is how long the previous generation stays usable after a newer key arrives (DefaultGrace
// if zero or negative).
func NewOpener(callID []byte, sender PublicKeys, grace time.Duration) *Opener {
	if grace <= 0 {
		grace = DefaultGrace
	}
	return &Opener{sender: sender.signer(), context: frameContext(callID, sender), grace: grace}
}

// AddKey installs key, which must be newer than the newest held (ErrStaleKey otherwise). The key
// it replaces stays usable until now+grace; the one before that is forgotten at once.
func (o *Opener) AddKey(key SenderKey, now time.Duration) error {
	if key.Generation == 0 {
		return fmt.Errorf("e2ee: add key: generation 0: %w", ErrStaleKey)
	}
	aead, err := newGCM(&key.Secret)
	if err != nil {
		return fmt.Errorf("e2ee: add key: %w", err)
	}
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.cur != nil && key.Generation <= o.cur.gen {
		return fmt.Errorf("e2ee: add key: generation %d, holding %d: %w", key.Generation, o.cur.gen, ErrStaleKey)
	}
	o.prev = o.cur
	if o.prev != nil && o.prev.aead == nil {
		o.prev = nil // forgotten: only its generation number was kept
	}
	if o.prev != nil {
		o.prev.retireAt = now + o.grace
	}
	o.cur = &generation{gen: key.Generation, aead: aead}
	return nil
}

// Generation returns the newest generation held, 0 if none.
func (o *Opener) Generation() uint32 {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.cur == nil {
		return 0
	}
	return o.cur.gen
}

// Forget drops every key the Opener holds; later frames fail with ErrUnknownGeneration until
// AddKey gives it a newer one.
func (o *Opener) Forget() {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.cur != nil {
		// Keep the generation number so that an older key is still refused.
		o.cur = &generation{gen: o.cur.gen}
	}
	o.prev = nil
}

// lookup returns the generation a frame names, or why it cannot be opened.
func (o *Opener) lookup(gen uint32, now time.Duration) (*generation, error) {
	if o.prev != nil && now >= o.prev.retireAt {
		o.prev = nil
	}
	switch {
	case o.cur == nil || gen > o.cur.gen:
		return nil, ErrUnknownGeneration
	case gen == o.cur.gen:
		if o.cur.aead == nil {
			return nil, ErrRetiredGeneration
		}
		return o.cur, nil
	case o.prev != nil && gen == o.prev.gen:
		return o.prev, nil
	default:
		return nil, ErrRetiredGeneration
	}
}

// Open checks a frame sealed by the Opener's sender and appends its payload to dst. header must
// be the bytes the sender passed to Seal. In this order it refuses: a frame too short
// (ErrMalformed); a generation not yet received (ErrUnknownGeneration) or replaced more than the
// grace period ago (ErrRetiredGeneration); a counter already opened (ErrReplay) or more than
// ReplayWindow behind the newest (ErrTooOld); a signature that is not the sender's over header,
// generation, counter and ciphertext (ErrBadSignature); a ciphertext that does not decrypt
// (ErrDecrypt). Only a frame with a valid signature uses up its counter, so no (generation,
// counter) is ever decrypted twice, and garbage cannot make a genuine frame be refused later.
func (o *Opener) Open(dst, header, frame []byte, now time.Duration) ([]byte, error) {
	if len(frame) < FrameOverhead {
		return dst, fmt.Errorf("e2ee: open: frame of %d bytes, at least %d: %w", len(frame), FrameOverhead, ErrMalformed)
	}
	if len(header) > MaxHeader {
		return dst, fmt.Errorf("e2ee: open: header of %d bytes, at most %d: %w", len(header), MaxHeader, ErrMalformed)
	}
	prefix := frame[:FramePrefixSize]
	gen := binary.BigEndian.Uint32(prefix)
	ctr := binary.BigEndian.Uint64(prefix[4:])
	ciphertext := frame[FramePrefixSize : len(frame)-ed25519.SignatureSize]
	sig := frame[len(frame)-ed25519.SignatureSize:]

	o.mu.Lock()
	defer o.mu.Unlock()
	g, err := o.lookup(gen, now)
	if err != nil {
		return dst, fmt.Errorf("e2ee: open: generation %d: %w", gen, err)
	}
	if err := g.seen.check(ctr); err != nil {
		return dst, fmt.Errorf("e2ee: open: generation %d counter %d: %w", gen, ctr, err)
	}
	o.scratch = appendSigned(o.scratch[:0], o.context, prefix, header, ciphertext)
	if !ed25519.Verify(o.sender, o.scratch, sig) {
		return dst, fmt.Errorf("e2ee: open: generation %d counter %d: %w", gen, ctr, ErrBadSignature)
	}
	g.seen.mark(ctr)
	o.scratch = appendAAD(o.scratch[:0], prefix, header)
	out, err := g.aead.Open(dst, prefix, ciphertext, o.scratch)
	if err != nil {
		return dst, fmt.Errorf("e2ee: open: generation %d counter %d: %w", gen, ctr, ErrDecrypt)
	}
	return out, nil
}
