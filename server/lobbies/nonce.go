package lobbies

import (
	"time"

	"sdkpp/server/wire"
)

// nonceKey identifies a message sent with an enforced nonce.
type nonceKey struct {
	lobby, author uint64
	nonce         string
}

// nonceMemory remembers the messages sent with an enforced nonce for NonceWindow, oldest first,
// so that a send repeated after a lost answer gets the first message back instead of making a
// second one. It lives in memory: a send repeated across a restart of the service makes a second
// message.
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
