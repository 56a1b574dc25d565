package lobbies

import (
	"cmp"
	"errors"
	"time"

	"sdkpp/server/lobbies/internal/noncemem"
	"sdkpp/server/store"
	"sdkpp/wire"
)

// nonceKey identifies a message sent with an enforced nonce.
type nonceKey = noncemem.Key

// nonceMemory returns the memory of the messages sent with an enforced nonce within NonceWindow
// since it started (it starts empty: see storedNonce). Call with s.order held.
func (s *Service) nonceMemory() *noncemem.Memory {
	if s.nonces == nil {
		s.nonces = noncemem.New(NonceWindow, cmp.Or(s.NonceMemory, DefaultNonceMemory))
	}
	return s.nonces
}

// storedNonce looks k up in the store while the memory may lack it, and returns the message the
// member sent with that nonce within NonceWindow. The store keeps each message's enforced nonce
// too, so for NonceWindow after the memory starts (the service started, or forgot what a failed
// commit may have lost) a send repeated across that start still finds its first message, and so
// does one whose first message the memory forgot early (over its limit). That costs a query for
// a send whose key's hash the memory kept (noncemem.Memory.Sent), and for every send while the
// newest message with an enforced nonce stored before the memory started, or forgotten early
// whole, is younger than NonceWindow. Call with s.order held.
func (s *Service) storedNonce(q *request, member *hotMember, k nonceKey, now time.Time) (wire.Encoded, bool, error) {
	if !s.noncesStarted {
		latest, err := s.Store.LatestNonceMessageAt(q.ctx, now.Add(-NonceWindow))
		if err != nil {
			return nil, false, err
		}
		s.noncesStarted, s.storedBefore = true, latest
	}
	mem, before := s.nonceMemory(), s.storedBefore
	if early := mem.ForgotEarly(); early.After(before) {
		before = early
	}
	if !mem.Sent(k) && !now.Before(before.Add(NonceWindow)) {
		return nil, false, nil // the memory holds the whole window
	}
	s.flush() // what was accepted before the memory started, or forgot, is stored
	m, err := s.Store.FindLobbyMessageByNonce(q.ctx, k.Lobby, k.Author, k.Nonce, now.Add(-NonceWindow))
	switch {
	case errors.Is(err, store.ErrNotFound):
		return nil, false, nil
	case err != nil:
		return nil, false, err
	}
	return messageObject(m, member.author).AppendJSON(nil), true, nil
}

// forgetNonces empties the memory; the store answers for what it held until NonceWindow has
// passed. Call with s.order held.
func (s *Service) forgetNonces() {
	s.nonces = nil
	s.noncesStarted = false
}
