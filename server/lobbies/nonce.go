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
//
// A message is kept in its wire form, encoded (the one its members got): one pointer for the
// garbage collector to follow per message, where its fields were many, and nothing to encode
// again when a send is repeated. Expiry moves the start of order, which is compacted only once
// most of it is gone, so that forgetting costs no copy of the window per message.
type nonceMemory struct {
	byKey map[nonceKey]wire.Encoded
	order []nonceAt
	first int // order[:first] is forgotten
}

type nonceAt struct {
	key nonceKey
	at  time.Time
}

// find returns the message remembered for k at now.
func (m *nonceMemory) find(k nonceKey, now time.Time) (wire.Encoded, bool) {
	m.expire(now)
	enc, ok := m.byKey[k]
	return enc, ok
}

// keep remembers enc, the encoded message sent with k, from now on.
func (m *nonceMemory) keep(k nonceKey, enc wire.Encoded, now time.Time) {
	m.expire(now)
	if m.byKey == nil {
		m.byKey = make(map[nonceKey]wire.Encoded)
	}
	m.byKey[k] = enc
	m.order = append(m.order, nonceAt{key: k, at: now})
}

// expire forgets what is older than NonceWindow.
func (m *nonceMemory) expire(now time.Time) {
	for m.first < len(m.order) && now.Sub(m.order[m.first].at) >= NonceWindow {
		delete(m.byKey, m.order[m.first].key)
		m.order[m.first] = nonceAt{}
		m.first++
	}
	if m.first > 0 && m.first >= len(m.order)/2 {
		m.order = m.order[:copy(m.order, m.order[m.first:])]
		m.first = 0
	}
}

// storedNonce looks k up in the store while the memory may lack it (see nonceMemory): the message
// the member sent with that nonce within NonceWindow. Only while the newest message with an
// enforced nonce stored before the memory started is younger than NonceWindow does that cost a
// query. Call with s.order held.
func (s *Service) storedNonce(q *request, member *hotMember, k nonceKey, now time.Time) (wire.Encoded, bool, error) {
	if !s.noncesStarted {
		latest, err := s.Store.LatestNonceMessageAt(q.ctx)
		if err != nil {
			return nil, false, err
		}
		s.noncesStarted, s.storedBefore = true, latest
	}
	if !now.Before(s.storedBefore.Add(NonceWindow)) {
		return nil, false, nil // the memory holds the whole window
	}
	s.flush() // what was accepted before the memory started is stored
	m, err := s.Store.FindLobbyMessageByNonce(q.ctx, k.lobby, k.author, k.nonce, now.Add(-NonceWindow))
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
	s.nonces = nonceMemory{}
	s.noncesStarted = false
}
