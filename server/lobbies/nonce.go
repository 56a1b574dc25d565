package lobbies

import (
	"errors"
	"time"

	"sdkpp/server/store"
	"sdkpp/wire"
)

// nonceKey identifies a message sent with an enforced nonce.
type nonceKey struct {
	lobby, author uint64
	nonce         string
}

// nonceMemory remembers the messages sent with an enforced nonce for NonceWindow, oldest first,
// so that a send repeated after a lost answer gets the first message back instead of making a
// second one. The store keeps each message's enforced nonce too: for NonceWindow after the memory
// starts (the service started, or forgot what a failed commit may have lost), a nonce the memory
// does not know is looked up there (storedNonce), so that a send repeated across a restart of the
// service finds the first message as well.
type nonceMemory struct {
	byKey map[nonceKey]wire.LobbyMessage
	order []nonceAt
}

type nonceAt struct {
	key nonceKey
	at  time.Time
}

// find returns the message remembered for k at now.
func (m *nonceMemory) find(k nonceKey, now time.Time) (wire.LobbyMessage, bool) {
	m.expire(now)
	obj, ok := m.byKey[k]
	return obj, ok
}

// keep remembers obj for k from now on.
func (m *nonceMemory) keep(k nonceKey, obj wire.LobbyMessage, now time.Time) {
	m.expire(now)
	if m.byKey == nil {
		m.byKey = make(map[nonceKey]wire.LobbyMessage)
	}
	m.byKey[k] = obj
	m.order = append(m.order, nonceAt{key: k, at: now})
}

// expire forgets what is older than NonceWindow.
func (m *nonceMemory) expire(now time.Time) {
	n := 0
	for n < len(m.order) && now.Sub(m.order[n].at) >= NonceWindow {
		delete(m.byKey, m.order[n].key)
		n++
	}
	if n > 0 {
		m.order = append(m.order[:0], m.order[n:]...)
	}
}

// storedNonce looks k up in the store while the memory may lack it (see nonceMemory): the message
// the member sent with that nonce within NonceWindow. Only while the newest message with an
// enforced nonce stored before the memory started is younger than NonceWindow does that cost a
// query. Call with s.order held.
func (s *Service) storedNonce(q *request, member *hotMember, k nonceKey, now time.Time) (wire.LobbyMessage, bool, error) {
	if !s.noncesStarted {
		latest, err := s.Store.LatestNonceMessageAt(q.ctx)
		if err != nil {
			return wire.LobbyMessage{}, false, err
		}
		s.noncesStarted, s.storedBefore = true, latest
	}
	if !now.Before(s.storedBefore.Add(NonceWindow)) {
		return wire.LobbyMessage{}, false, nil // the memory holds the whole window
	}
	s.flush() // what was accepted before the memory started is stored
	m, err := s.Store.FindLobbyMessageByNonce(q.ctx, k.lobby, k.author, k.nonce, now.Add(-NonceWindow))
	switch {
	case errors.Is(err, store.ErrNotFound):
		return wire.LobbyMessage{}, false, nil
	case err != nil:
		return wire.LobbyMessage{}, false, err
	}
	return messageObject(m, member.author), true, nil
}

// forgetNonces empties the memory; the store answers for what it held until NonceWindow has
// passed. Call with s.order held.
func (s *Service) forgetNonces() {
	s.nonces = nonceMemory{}
	s.noncesStarted = false
}
