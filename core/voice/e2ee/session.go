package e2ee

import (
	"bytes"
	"fmt"
	"io"
	"math"
	"slices"
	"sync"
	"time"
)

// KeyDelivery is a key message for one participant: signaling carries Message to To alone, which
// passes it to its Session.ReceiveKey.
type KeyDelivery struct {
	// To is the participant the message is encrypted to.
	To PublicKeys
	// Message is the key message (KeyMessageSize bytes).
	Message []byte
}

// peer is what a Session holds about another participant. A peer that left stays in the map,
// inactive and without keys, so that if it comes back its Opener still refuses the generations
// it had before (a replayed old key message cannot bring an old key back).
type peer struct {
	opener *Opener
	active bool
}

// Session is the encryption state of the local participant in one call: its own Identity and
// sender key, and an Opener for every other participant. The call layer drives it as the
// participant list changes:
//
//   - Join when participants join (including, for a newcomer, everyone already in the call);
//   - Leave when participants leave;
//   - ReceiveKey for every key message signaling delivers to the local participant.
//
// Join and Leave rotate the local sender key (a fresh random key, the next generation), seal the
// new key to every participant present after the change, switch the sealer to it, and return the
// key messages to send. So a participant who left never receives a key used after it left, and
// one who joined never receives a key used before it joined. Every other participant does the
// same on its side, so after a change every sender's frames are under keys only the present
// participants hold. Send the returned messages before the next frame: a frame that reaches a
// participant before the key it is sealed under is refused with ErrUnknownGeneration.
//
// All methods are safe for concurrent use.
type Session struct {
	mu     sync.RWMutex
	id     *Identity
	rand   io.Reader
	grace  time.Duration
	sealer *Sealer
	peers  map[PublicKeys]*peer
}

// NewSession starts the session of id with its first sender key (generation 1), read from rand
// (crypto/rand.Reader outside tests), and no other participant. grace is the Opener grace period
// (DefaultGrace if zero or negative).
func NewSession(id *Identity, rand io.Reader, grace time.Duration) (*Session, error) {
	key, err := NewSenderKey(rand, 1)
	if err != nil {
		return nil, fmt.Errorf("e2ee: new session: %w", err)
	}
	sealer, err := NewSealer(id, key)
	if err != nil {
		return nil, fmt.Errorf("e2ee: new session: %w", err)
	}
	return &Session{id: id, rand: rand, grace: grace, sealer: sealer, peers: map[PublicKeys]*peer{}}, nil
}

// Identity returns the local participant's identity.
func (s *Session) Identity() *Identity { return s.id }

// Generation returns the generation of the local sender key.
func (s *Session) Generation() uint32 { return s.sealer.Generation() }

// Join adds the given participants and rotates the local sender key (see Session). Keys equal to
// the local identity's or of participants already present are ignored; if nobody new remains,
// nothing changes and Join returns no messages.
func (s *Session) Join(joiners ...PublicKeys) ([]KeyDelivery, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	var added []PublicKeys
	for _, pk := range joiners {
		if pk == s.id.public || slices.Contains(added, pk) {
			continue
		}
		if p, ok := s.peers[pk]; ok && p.active {
			continue
		}
		if _, err := pk.hpkeKey(); err != nil {
			return nil, fmt.Errorf("e2ee: join: %w", err)
		}
		added = append(added, pk)
	}
	if len(added) == 0 {
		return nil, nil
	}
	recipients := append(s.activeLocked(), added...)
	deliveries, err := s.rotateLocked(recipients)
	if err != nil {
		return nil, fmt.Errorf("e2ee: join: %w", err)
	}
	for _, pk := range added {
		p, ok := s.peers[pk]
		if !ok {
			p = &peer{opener: NewOpener(s.id.callID, pk, s.grace)}
			s.peers[pk] = p
		}
		p.active = true
	}
	return deliveries, nil
}

// Leave removes the given participants, forgets their keys and rotates the local sender key,
// sealing it to the remaining participants only (see Session). If the rotation fails, the
// participants are still removed and Seal refuses (ErrNeedsRotation) until Rotate succeeds. Keys of participants not present
// are ignored; if nobody present is named, nothing changes and Leave returns no messages.
func (s *Session) Leave(leavers ...PublicKeys) ([]KeyDelivery, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	var gone []*peer
	for _, pk := range leavers {
		if p, ok := s.peers[pk]; ok && p.active && !slices.Contains(gone, p) {
			gone = append(gone, p)
		}
	}
	if len(gone) == 0 {
		return nil, nil
	}
	for _, p := range gone {
		p.active = false
		p.opener.Forget()
	}
	deliveries, err := s.rotateLocked(s.activeLocked())
	if err != nil {
		// Fail closed: the leavers hold the current key, so nothing more is sealed under it.
		s.sealer.Block()
		return nil, fmt.Errorf("e2ee: leave: %w", err)
	}
	return deliveries, nil
}

// Rotate moves to a new sender key now and seals it to everyone present, without a membership
// change: after a failed Leave (Seal refuses with ErrNeedsRotation until a rotation succeeds), or
// to limit how long one key is used.
func (s *Session) Rotate() ([]KeyDelivery, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	deliveries, err := s.rotateLocked(s.activeLocked())
	if err != nil {
		return nil, fmt.Errorf("e2ee: rotate: %w", err)
	}
	return deliveries, nil
}

// activeLocked returns the present participants other than the local one, in encoding order.
func (s *Session) activeLocked() []PublicKeys {
	var out []PublicKeys
	for pk, p := range s.peers {
		if p.active {
			out = append(out, pk)
		}
	}
	slices.SortFunc(out, comparePublicKeys)
	return out
}

// rotateLocked makes the next sender key, seals it to every recipient and, once all are sealed,
// switches the sealer to it.
func (s *Session) rotateLocked(recipients []PublicKeys) ([]KeyDelivery, error) {
	gen := s.sealer.Generation()
	if gen == math.MaxUint32 {
		return nil, fmt.Errorf("rotate from generation %d: %w", gen, ErrExhausted)
	}
	key, err := NewSenderKey(s.rand, gen+1)
	if err != nil {
		return nil, fmt.Errorf("rotate: %w", err)
	}
	deliveries := make([]KeyDelivery, 0, len(recipients))
	for _, pk := range recipients {
		msg, err := s.id.SealKeyFor(pk, key)
		if err != nil {
			return nil, fmt.Errorf("rotate: %w", err)
		}
		deliveries = append(deliveries, KeyDelivery{To: pk, Message: msg})
	}
	if err := s.sealer.Rotate(key); err != nil {
		return nil, fmt.Errorf("rotate: %w", err)
	}
	return deliveries, nil
}

// opener returns the Opener of a present participant.
func (s *Session) opener(from PublicKeys) (*Opener, error) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	p, ok := s.peers[from]
	if !ok || !p.active {
		return nil, ErrUnknownSender
	}
	return p.opener, nil
}

// ReceiveKey opens a key message that participant from sealed to the local participant and
// installs the key in from's Opener. now is on the scale the caller passes to Open.
func (s *Session) ReceiveKey(from PublicKeys, msg []byte, now time.Duration) error {
	o, err := s.opener(from)
	if err != nil {
		return fmt.Errorf("e2ee: receive key: %w", err)
	}
	key, err := s.id.OpenKey(from, msg)
	if err != nil {
		return fmt.Errorf("e2ee: receive key: %w", err)
	}
	if err := o.AddKey(key, now); err != nil {
		return fmt.Errorf("e2ee: receive key: %w", err)
	}
	return nil
}

// Seal seals a frame of the local participant under its current key (see Sealer.Seal).
func (s *Session) Seal(dst, header, payload []byte) ([]byte, error) {
	return s.sealer.Seal(dst, header, payload)
}

// Open opens a frame that participant from sealed (see Opener.Open).
func (s *Session) Open(from PublicKeys, dst, header, frame []byte, now time.Duration) ([]byte, error) {
	o, err := s.opener(from)
	if err != nil {
		return dst, fmt.Errorf("e2ee: open: %w", err)
	}
	return o.Open(dst, header, frame, now)
}

// Participants returns the public keys of everyone present, the local participant included, in
// encoding order.
func (s *Session) Participants() []PublicKeys {
	s.mu.RLock()
	defer s.mu.RUnlock()
	out := append(s.activeLocked(), s.id.public)
	slices.SortFunc(out, comparePublicKeys)
	return out
}

// VerificationCode returns the call's verification code for the participants present now (see
// the package function VerificationCode).
func (s *Session) VerificationCode() string {
	return VerificationCode(s.id.callID, s.Participants())
}

// comparePublicKeys orders public keys by their encoding.
func comparePublicKeys(a, b PublicKeys) int {
	if c := bytes.Compare(a.kem[:], b.kem[:]); c != 0 {
		return c
	}
	return bytes.Compare(a.sig[:], b.sig[:])
}
