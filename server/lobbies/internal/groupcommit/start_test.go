package groupcommit

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"testing/synctest"

	"github.com/stretchr/testify/require"

	"sdkpp/server/store"
)

// startStore is a store.Store that can start a group's statement (Starter) and records, in
// order, what the writer does with it: "start 1 2" when a group is sent, "wait 1 2" when its
// result is read, "commit 1 2" when a group is stored at once. Its hooks run with the writer's
// lock released, as a real store's statements do.
type startStore struct {
	store.Store

	mu      sync.Mutex
	events  []string
	refuse  bool                           // StartLobbyMessages sends nothing
	onStart func(ms []*store.LobbyMessage) // called as a group is sent
	fail    map[uint64]error               // a group's result, by its first message
	groups  [][]*store.LobbyMessage        // every group sent or committed, in order
}

func (s *startStore) note(what string, ms []*store.LobbyMessage) {
	s.mu.Lock()
	defer s.mu.Unlock()
	e := what
	for _, m := range ms {
		e += fmt.Sprint(" ", m.ID)
	}
	s.events = append(s.events, e)
}

func (s *startStore) StartsLobbyMessages() bool { return true }

func (s *startStore) WithTx(_ context.Context, fn func(store.Store) error) error { return fn(s) }

func (s *startStore) StartLobbyMessages(_ context.Context, _ uint64, ms []*store.LobbyMessage) (func() error, bool) {
	if s.refuse {
		if s.onStart != nil {
			s.onStart(ms)
		}
		return nil, false
	}
	s.note("start", ms)
	s.mu.Lock()
	s.groups = append(s.groups, ms)
	s.mu.Unlock()
	if s.onStart != nil {
		s.onStart(ms)
	}
	return func() error {
		s.note("wait", ms)
		return s.fail[ms[0].ID]
	}, true
}

func (s *startStore) StoreLobbyMessages(_ context.Context, _ uint64, ms []*store.LobbyMessage, _ []*store.WebhookDelivery, _ *store.OutboxRows) error {
	s.note("commit", ms)
	s.mu.Lock()
	s.groups = append(s.groups, ms)
	s.mu.Unlock()
	return nil
}

// recordYields makes yield note "yield" in st's events and then run then (may be nil), for the
// test's length.
func recordYields(t *testing.T, st *startStore, then func()) {
	t.Cleanup(func(f func()) func() { return func() { yield = f } }(yield))
	yield = func() {
		st.note("yield", nil)
		if then != nil {
			then()
		}
	}
}

// enqueueOnStart makes st enqueue ps in w while its first group is in flight (once it is sent).
func enqueueOnStart(st *startStore, w *Writer, ps ...*Pending) {
	var once sync.Once
	st.onStart = func([]*store.LobbyMessage) {
		once.Do(func() {
			for _, p := range ps {
				w.Enqueue(p)
			}
		})
	}
}

// With a Starter, the first waiter yields, then sends its group and reads its result; the
// messages queued meanwhile are sent as the next group as soon as that result is read, before the
// first group's waiters are told, and the next waiter reads it without sending anything.
func TestWriterStartsGroupsBeforeAnswers(t *testing.T) {
	st := &startStore{}
	w := New(st, quietLog(), nil, nil)
	defer w.Close()
	first, second, third := msg(1), msg(2), msg(3)
	recordYields(t, st, nil)
	enqueueOnStart(st, w, second, third)
	var firstTold []bool // first.committed as each group is sent
	enqueue := st.onStart
	st.onStart = func(ms []*store.LobbyMessage) {
		firstTold = append(firstTold, first.committed)
		enqueue(ms)
	}
	require.True(t, w.Enqueue(first))
	require.NoError(t, w.Await(first))
	require.NoError(t, w.Await(second))
	require.NoError(t, w.Await(third))
	require.Equal(t, []string{"yield", "start 1", "wait 1", "start 2 3", "yield", "wait 2 3"}, st.events)
	require.Equal(t, []bool{false, false}, firstTold, "the next group is sent before the first's waiters are told")
}

// A group whose result is an error gives it to each of its messages, wrapped with the lobby and
// the messages, and is reported to fail once; the group behind it is not affected.
func TestWriterStartedGroupFails(t *testing.T) {
	boom := errors.New("connection lost")
	st := &startStore{fail: map[uint64]error{1: boom}}
	failed := 0
	w := New(st, quietLog(), nil, func() { failed++ })
	defer w.Close()
	a, b, c := msg(1), msg(2), msg(3)
	recordYields(t, st, nil)
	enqueueOnStart(st, w, c)
	w.Enqueue(a)
	w.Enqueue(b)
	err := w.Await(a)
	require.ErrorIs(t, err, boom)
	require.ErrorContains(t, err, "lobby 1, messages 1 to 2")
	require.ErrorIs(t, w.Await(b), boom)
	require.NoError(t, w.Await(c))
	require.Equal(t, 1, failed)
	require.Equal(t, []string{"yield", "start 1 2", "wait 1 2", "start 3", "yield", "wait 3"}, st.events)
}

// A group the store does not send is committed at once, with the messages queued while it was
// offered behind it, in one group.
func TestWriterStartRefused(t *testing.T) {
	st := &startStore{refuse: true}
	w := New(st, quietLog(), nil, nil)
	defer w.Close()
	a, b, c := msg(1), msg(2), msg(3)
	var once sync.Once
	st.onStart = func([]*store.LobbyMessage) { once.Do(func() { w.Enqueue(c) }) }
	recordYields(t, st, nil)
	w.Enqueue(a)
	w.Enqueue(b)
	for _, p := range []*Pending{a, b, c} {
		require.NoError(t, w.Await(p))
	}
	require.Equal(t, []string{"yield", "commit 1 2 3"}, st.events)
}

// A group of several lobbies, or with a webhook row, is not sent ahead: it is committed as on a
// store without a Starter.
func TestWriterStartsOnlyOneLobbysMessages(t *testing.T) {
	st := &startStore{}
	w := New(st, quietLog(), nil, nil)
	defer w.Close()
	recordYields(t, st, nil)
	hooked := msg(3)
	hooked.Hook = &store.WebhookDelivery{}
	for _, group := range [][]*Pending{{inLobby(1, 1), inLobby(2, 2)}, {hooked}} {
		st.events = nil
		for _, p := range group {
			w.Enqueue(p)
		}
		require.NoError(t, w.Await(group[0]))
		require.NotContains(t, fmt.Sprint(st.events), "start")
	}
}

// Flush and Close read a group left in flight, and Close sends and reads what is queued.
func TestWriterFlushAndCloseFinishFlights(t *testing.T) {
	st := &startStore{}
	w := New(st, quietLog(), nil, nil)
	a, b, c := msg(1), msg(2), msg(3)
	recordYields(t, st, nil)
	enqueueOnStart(st, w, b)
	w.Enqueue(a)
	require.NoError(t, w.Await(a))
	require.False(t, b.committed, "b's group is in flight")
	w.Flush()
	require.True(t, b.committed, "after Flush")
	w.Enqueue(c)
	w.Close()
	require.True(t, c.committed, "after Close")
	require.Equal(t, []string{"yield", "start 1", "wait 1", "start 2", "wait 2", "start 3", "wait 3"}, st.events)
}

// Senders on several goroutines: every message is committed once, and the groups, sent one at a
// time, hold the messages in the order they were queued.
func TestWriterStartedGroupsInQueueOrder(t *testing.T) {
	st := &startStore{}
	w := New(st, quietLog(), nil, nil)
	var order sync.Mutex
	next := uint64(0)
	var wg sync.WaitGroup
	for range 4 {
		wg.Go(func() {
			for range 200 {
				order.Lock()
				p := msg(next)
				next++
				w.Enqueue(p)
				order.Unlock()
				if err := w.Await(p); err != nil {
					t.Error(err)
				}
			}
		})
	}
	wg.Wait()
	w.Close()
	var ids []uint64
	for _, g := range st.groups {
		for _, m := range g {
			ids = append(ids, m.ID)
		}
	}
	require.Len(t, ids, 800)
	for i, id := range ids {
		require.Equal(t, uint64(i), id, "message %d of the groups", i)
	}
}

// StartGroup sends a queued group of two or more at once, before anyone waits for it, and its
// waiters read its result without sending it again; a lone message, a store without a Starter, a
// commit running or a group in flight leave the send to Await, and a group the store does not
// send stays queued, for its waiters to commit.
func TestWriterStartGroup(t *testing.T) {
	for _, c := range []struct {
		name          string
		queued, after int      // messages queued before StartGroup, and then before another
		refuse        bool     // the store sends nothing (startStore.refuse)
		started, done []string // st's events after the StartGroups, and after every Await
	}{
		{"a group", 2, 0, false, []string{"start 1 2"}, []string{"start 1 2", "yield", "wait 1 2"}},
		{"a lone message", 1, 0, false, nil, []string{"yield", "start 1", "wait 1"}},
		{"a group in flight", 2, 1, false, []string{"start 1 2"},
			[]string{"start 1 2", "yield", "wait 1 2", "start 3", "yield", "wait 3"}},
		{"a group the store does not send", 2, 0, true, nil, []string{"yield", "commit 1 2"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			st := &startStore{refuse: c.refuse}
			w := New(st, quietLog(), nil, nil)
			defer w.Close()
			recordYields(t, st, nil)
			var ps []*Pending
			enqueue := func(n int) {
				for range n {
					ps = append(ps, msg(uint64(len(ps)+1)))
					require.True(t, w.Enqueue(ps[len(ps)-1]))
				}
			}
			enqueue(c.queued)
			w.StartGroup()
			enqueue(c.after)
			w.StartGroup()
			require.Equal(t, c.started, st.events)
			for _, p := range ps {
				require.NoError(t, w.Await(p))
			}
			require.Equal(t, c.done, st.events)
		})
	}
	t.Run("no Starter", func(t *testing.T) {
		st := &txStore{}
		w := New(st, quietLog(), nil, nil)
		defer w.Close()
		first, second := msg(1), msg(2)
		require.True(t, w.Enqueue(first))
		require.True(t, w.Enqueue(second))
		w.StartGroup()
		require.Zero(t, st.txs, "committed by a waiter, not by StartGroup")
		require.NoError(t, w.Await(first))
		require.Equal(t, [][]uint64{{1, 2}}, st.groups)
	})
}

// A waiter that waits while StartGroup sends its group is woken once the group is in flight, and
// reads its result: nothing waits for a send that has ended.
func TestWriterStartGroupWakesWaiters(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		st := &startStore{}
		w := New(st, quietLog(), nil, nil)
		defer w.Close()
		recordYields(t, st, nil)
		first, second := msg(1), msg(2)
		require.True(t, w.Enqueue(first))
		require.True(t, w.Enqueue(second))
		waited := make(chan error)
		st.onStart = func([]*store.LobbyMessage) {
			go func() { waited <- w.Await(first) }()
			synctest.Wait() // the waiter finds the send in progress and waits on the writer
		}
		w.StartGroup()
		require.NoError(t, <-waited)
		require.NoError(t, w.Await(second))
		require.Equal(t, []string{"start 1 2", "yield", "wait 1 2"}, st.events)
	})
}
