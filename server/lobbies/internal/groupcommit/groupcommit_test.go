package groupcommit

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"sdkpp/server/store"
)

// txStore is a store.Store that records the messages of each transaction the writer commits, and
// can hold its first transaction until released or fail them: what a real store cannot be made
// to do on demand. The writer calls nothing else.
type txStore struct {
	store.Store

	mu      sync.Mutex
	groups  [][]uint64    // message ids, per committed transaction
	held    chan struct{} // gets a value when the first transaction is held; nil: none is
	release chan struct{}
	fail    error
	txs     int
}

func (s *txStore) WithTx(ctx context.Context, fn func(store.Store) error) error {
	s.mu.Lock()
	s.txs++
	first := s.txs == 1
	s.mu.Unlock()
	if first && s.held != nil {
		s.held <- struct{}{}
		<-s.release
	}
	tx := &txTx{}
	if err := fn(tx); err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.fail != nil {
		return s.fail
	}
	s.groups = append(s.groups, tx.ids)
	return nil
}

// txTx is one transaction of a txStore.
type txTx struct {
	store.Store
	ids []uint64
}

// StoreLobbyMessages of one lobby is a transaction of its own.
func (s *txStore) StoreLobbyMessages(ctx context.Context, id uint64, ms []*store.LobbyMessage, hooks []*store.WebhookDelivery, out *store.OutboxRows) error {
	return s.WithTx(ctx, func(tx store.Store) error { return tx.StoreLobbyMessages(ctx, id, ms, hooks, out) })
}

func (t *txTx) StoreLobbyMessages(_ context.Context, _ uint64, ms []*store.LobbyMessage, _ []*store.WebhookDelivery, _ *store.OutboxRows) error {
	for _, m := range ms {
		t.ids = append(t.ids, m.ID)
	}
	return nil
}

func msg(id uint64) *Pending {
	return &Pending{Msg: &store.LobbyMessage{ID: id, LobbyID: 1}}
}

func quietLog() *slog.Logger { return slog.New(slog.NewTextHandler(io.Discard, nil)) }

// Messages queued while a commit runs form the next group, committed by one of their waiters;
// every waiter gets its message's result.
func TestWriterCommitsGroupsByItsWaiters(t *testing.T) {
	st := &txStore{held: make(chan struct{}), release: make(chan struct{})}
	w := New(st, quietLog(), nil, nil)
	results := make(chan error, 3)
	first := msg(1)
	w.Enqueue(first)
	go func() { results <- w.Await(first) }()
	<-st.held // the first waiter commits {1}, held in its transaction
	for _, p := range []*Pending{msg(2), msg(3)} {
		w.Enqueue(p)
		go func() { results <- w.Await(p) }()
	}
	close(st.release)
	for range 3 {
		require.NoError(t, <-results)
	}
	want := [][]uint64{{1}, {2, 3}}
	require.Equal(t, want, st.groups, "transactions")
}

// A flush commits what is queued itself, before the messages' senders wait for them; Close
// commits what is queued and takes nothing more.
func TestWriterFlushAndClose(t *testing.T) {
	st := &txStore{}
	w := New(st, quietLog(), nil, nil)
	a, b := msg(1), msg(2)
	w.Enqueue(a)
	w.Enqueue(b)
	w.Flush()
	require.True(t, a.committed, "after flush: committed %v %v, transactions %v", a.committed, b.committed, st.groups)
	require.True(t, b.committed, "after flush: committed %v %v, transactions %v", a.committed, b.committed, st.groups)
	require.Len(t, st.groups, 1, "after flush: committed %v %v, transactions %v", a.committed, b.committed, st.groups)
	require.NoError(t, w.Await(a))
	c := msg(3)
	w.Enqueue(c)
	w.Close()
	require.True(t, c.committed, "after Close: committed %v, or a message was taken", c.committed)
	require.False(t, w.Enqueue(msg(4)), "after Close: committed %v, or a message was taken", c.committed)
}

// A failed commit is every message of its group's result, and is reported to fail.
func TestWriterFailedCommit(t *testing.T) {
	boom := errors.New("disk full")
	st := &txStore{fail: boom}
	failed := 0
	w := New(st, quietLog(), nil, func() { failed++ })
	a, b := msg(1), msg(2)
	w.Enqueue(a)
	w.Enqueue(b)
	require.ErrorIs(t, w.Await(a), boom, "await")
	err := w.Await(b)
	require.ErrorIs(t, err, boom, "await of the same group: %v, fail called %d times", err, failed)
	require.Equal(t, 1, failed, "await of the same group: %v, fail called %d times", err, failed)
}

// Await yields the CPU before it commits a lone message, not when its message's group is
// committed already (the answers of a group are taken one after another, and only the first one
// waits), nor, on a store without a Starter, when its message is queued with others: messages
// accepted together were delivered together, and their chain has no time to give away. (With a
// Starter a waiter yields before it sends a group of several: start_test.go.)
func TestAwaitYieldsOnlyToWaitAlone(t *testing.T) {
	for _, c := range []struct {
		name   string
		ids    []uint64
		yields int
	}{
		{"a lone message", []uint64{1}, 1},
		{"three messages queued together", []uint64{1, 2, 3}, 0},
	} {
		t.Run(c.name, func(t *testing.T) {
			yields := 0
			defer func(f func()) { yield = f }(yield)
			yield = func() { yields++ }
			st := &txStore{}
			w := New(st, quietLog(), nil, nil)
			defer w.Close()
			var ps []*Pending
			for _, id := range c.ids {
				ps = append(ps, msg(id))
				require.True(t, w.Enqueue(ps[len(ps)-1]))
			}
			for _, p := range ps {
				require.NoError(t, w.Await(p))
			}
			require.Equal(t, [][]uint64{c.ids}, st.groups, "one group")
			require.Equal(t, c.yields, yields)
		})
	}
}

// lobbyStore is a store.Store whose StoreLobbyMessages records the lobby and the messages'
// ids of each call, and whose transactions record nothing of their own.
type lobbyStore struct {
	store.Store
	calls [][2]uint64 // lobby id, message count
	txs   int
}

func (s *lobbyStore) StoreLobbyMessages(_ context.Context, id uint64, ms []*store.LobbyMessage, _ []*store.WebhookDelivery, _ *store.OutboxRows) error {
	s.calls = append(s.calls, [2]uint64{id, uint64(len(ms))})
	return nil
}

func (s *lobbyStore) WithTx(_ context.Context, fn func(store.Store) error) error {
	s.txs++
	return fn(s)
}

func inLobby(lobby, id uint64) *Pending {
	return &Pending{Msg: &store.LobbyMessage{ID: id, LobbyID: lobby}}
}

// A batch of one lobby is one StoreLobbyMessages, outside a transaction of the writer's; a batch
// of several lobbies is one call per lobby, in the order of their first messages, in one
// transaction; outbox events go only with one lobby's batch.
func TestCommitByLobby(t *testing.T) {
	st := &lobbyStore{}
	require.NoError(t, Commit(st, []*Pending{inLobby(1, 1), inLobby(1, 2)}, nil))
	require.Equal(t, [][2]uint64{{1, 2}}, st.calls)
	require.Zero(t, st.txs)

	st = &lobbyStore{}
	require.NoError(t, Commit(st, []*Pending{inLobby(2, 1), inLobby(1, 2), inLobby(2, 3)}, nil))
	require.Equal(t, [][2]uint64{{2, 2}, {1, 1}}, st.calls)
	require.Equal(t, 1, st.txs)

	require.Error(t, Commit(st, []*Pending{inLobby(2, 1), inLobby(1, 2)}, &store.OutboxRows{}))
	require.Error(t, Commit(st, nil, &store.OutboxRows{}))
}

// A group of one lobby costs Commit the list of its messages only, and the writer reuses a
// committed group's array for the next: a steady stream of groups allocates nothing else.
func TestCommitOfOneLobbyAllocations(t *testing.T) {
	st := &lobbyStore{calls: make([][2]uint64, 0, 1000)}
	w := New(st, quietLog(), nil, nil)
	defer func(f func()) { yield = f }(yield)
	yield = func() {}
	group := make([]*Pending, 8)
	for i := range group {
		group[i] = inLobby(1, uint64(i))
	}
	send := func() {
		for _, p := range group {
			p.committed = false
			w.Enqueue(p)
		}
		for _, p := range group {
			if err := w.Await(p); err != nil {
				t.Fatal(err)
			}
		}
	}
	send() // the queue's array grows once
	require.Equal(t, 1.0, testing.AllocsPerRun(100, send), "the list of the messages")
}
