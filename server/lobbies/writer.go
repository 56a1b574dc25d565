package lobbies

import (
	"context"
	"fmt"
	"log/slog"
	"sync"

	"sdkpp/server/store"
)

// pending is a lobby message that was accepted (and, with a running writer, already delivered to
// the members) and waits to be committed.
type pending struct {
	msg   *store.LobbyMessage
	lobby store.Lobby            // the lobby with the activity times the message gave it
	hook  *store.WebhookDelivery // LOBBY_MESSAGE_CREATE for the application's webhook, or nil
	done  chan error             // gets the commit's result; buffered
}

// writer commits accepted lobby messages in the background, many to a transaction.
//
// A message costs the service three SQLite statements (the message, the lobby's activity, the
// webhook row) and a commit, about 60 µs, which is most of what a sender would wait for before
// the members see the message. With the writer the members get it as soon as it is accepted,
// while the sender's answer still waits for the commit, so that an answered send is stored.
// Everything else the service does first waits, with flush, until the writer has committed what
// was accepted before: the store then never shows another change before a message accepted
// earlier, and history always holds every message a member was sent. If the commit fails, or the
// process dies before it, members may have seen messages that are not in the history; the senders
// of those got an error or no answer.
type writer struct {
	st   store.Store
	log  *slog.Logger
	kick func() // wakes the webhook dispatcher; may be nil
	fail func() // told that a commit failed; may be nil

	mu        sync.Mutex
	committed *sync.Cond // signalled when done moves
	queue     []*pending
	queued    uint64 // messages given to enqueue
	done      uint64 // messages whose commit has been tried (the first done of queued)
	closed    bool

	wake chan struct{} // buffered 1
	stop chan struct{}
	exit chan struct{}
}

// newWriter starts a writer's goroutine; Close stops it.
func newWriter(st store.Store, log *slog.Logger, kick, fail func()) *writer {
	w := &writer{st: st, log: log, kick: kick, fail: fail, wake: make(chan struct{}, 1), stop: make(chan struct{}), exit: make(chan struct{})}
	w.committed = sync.NewCond(&w.mu)
	go w.loop()
	return w
}

// running reports whether the writer takes messages (it has not been closed); enqueue may still
// refuse one if Close comes between the two.
func (w *writer) running() bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	return !w.closed
}

// enqueue queues p and reports whether the writer took it; after Close it does not, and the
// caller commits p itself.
func (w *writer) enqueue(p *pending) bool {
	w.mu.Lock()
	if w.closed {
		w.mu.Unlock()
		return false
	}
	w.queue = append(w.queue, p)
	w.queued++
	w.mu.Unlock()
	select {
	case w.wake <- struct{}{}:
	default:
	}
	return true
}

// flush waits until every message queued before the call has been committed (or has failed).
func (w *writer) flush() {
	w.mu.Lock()
	for target := w.queued; w.done < target; {
		w.committed.Wait()
	}
	w.mu.Unlock()
}

// Close commits what is queued, stops the goroutine and waits for it. Later messages are
// committed by their senders.
func (w *writer) Close() {
	w.mu.Lock()
	if w.closed {
		w.mu.Unlock()
		return
	}
	w.closed = true
	w.mu.Unlock()
	close(w.stop)
	<-w.exit
}

func (w *writer) loop() {
	defer close(w.exit)
	for {
		select {
		case <-w.wake:
		case <-w.stop:
			w.drain() // closed: nothing more can be queued
			return
		}
		w.drain()
	}
}

// drain commits everything queued, one transaction per batch taken.
func (w *writer) drain() {
	for {
		w.mu.Lock()
		batch := w.queue
		w.queue = nil
		w.mu.Unlock()
		if len(batch) == 0 {
			return
		}
		err := commitMessages(w.st, batch)
		if err != nil {
			w.log.Error("lobby messages were delivered but not stored", "messages", len(batch), "err", err)
			if w.fail != nil {
				w.fail()
			}
		}
		for _, p := range batch {
			p.done <- err
		}
		if err == nil && w.kick != nil && hasHook(batch) {
			w.kick()
		}
		w.mu.Lock()
		w.done += uint64(len(batch))
		w.committed.Broadcast()
		w.mu.Unlock()
	}
}

// commitMessages stores a batch in one transaction: each message and its webhook row, and each
// lobby's latest activity times once.
func commitMessages(st store.Store, batch []*pending) error {
	ctx := context.Background()
	return st.WithTx(ctx, func(st store.Store) error {
		last := make(map[uint64]*store.Lobby, 1)
		for _, p := range batch {
			if err := st.InsertLobbyMessage(ctx, p.msg); err != nil {
				return fmt.Errorf("lobby message %d: %w", p.msg.ID, err)
			}
			if p.hook != nil {
				if err := st.EnqueueWebhook(ctx, p.hook); err != nil {
					return fmt.Errorf("lobby message %d webhook: %w", p.msg.ID, err)
				}
			}
			last[p.lobby.ID] = &p.lobby
		}
		for _, l := range last {
			if err := st.TouchLobby(ctx, l.ID, l.LastActivityAt, l.ExpiresAt); err != nil {
				return fmt.Errorf("lobby %d activity: %w", l.ID, err)
			}
		}
		return nil
	})
}

func hasHook(batch []*pending) bool {
	for _, p := range batch {
		if p.hook != nil {
			return true
		}
	}
	return false
}
