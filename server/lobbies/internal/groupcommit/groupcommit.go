// Package groupcommit commits accepted lobby messages to the store in groups, many to a
// transaction, after their delivery to the lobby's members.
package groupcommit

import (
	"context"
	"fmt"
	"log/slog"
	"sync"

	"sdkpp/internal/osyield"
	"sdkpp/server/store"
)

// Pending is a lobby message that was accepted (and, with a running Writer, already delivered to
// the members) and waits to be committed.
type Pending struct {
	Msg  *store.LobbyMessage    // of lobby Msg.LobbyID, whose row its commit reads, not writes
	Hook *store.WebhookDelivery // LOBBY_MESSAGE_CREATE for the application's webhook, or nil

	// Guarded by Writer.mu when queued.
	committed bool
	err       error // the commit's result, once committed
}

// Writer commits accepted lobby messages in groups, many to a transaction, after their delivery.
//
// A message costs the service two SQLite statements (the message, the webhook row) beside its
// lobby's lookup, and a commit, about 60 µs, which is most of what a sender would wait for before
// the members see the message. With the writer the members get it as soon as it is accepted,
// while the sender's answer still waits for the commit, so that an answered send is stored.
//
// It has no goroutine of its own: whoever waits for a commit (a sender in Await, or an operation
// in Flush) commits what is queued, unless another waiter is committing, and then waits for it;
// so a group forms from the messages accepted while a commit runs. The commit runs on a goroutine
// that had to wait anyway, where waking a goroutine of its own cost a hand-off, and on two cores
// took a core from the clients receiving the message.
//
// Everything else the service does first waits, with Flush, until every message accepted before
// is committed: the store then never shows another change before a message accepted earlier, and
// history always holds every message a member was sent. If the commit fails, or the process dies
// before it, members may have seen messages that are not in the history; the senders of those got
// an error or no answer.
type Writer struct {
	st   store.Store
	log  *slog.Logger
	kick func() // wakes the webhook dispatcher; may be nil
	fail func() // told that a commit failed; may be nil

	mu         sync.Mutex
	changed    *sync.Cond // signalled when a commit ends
	queue      []*Pending
	spare      []*Pending // a committed group's array, emptied, for the next group's queue
	queued     uint64     // messages given to Enqueue
	done       uint64     // messages whose commit has been tried (the first done of queued)
	committing bool       // a waiter is committing a group
	closed     bool
}

// New returns a Writer committing to st, logging failed commits to log; after a commit with a
// webhook row it calls kick, after a failed one fail (either may be nil). Close ends it.
func New(st store.Store, log *slog.Logger, kick, fail func()) *Writer {
	w := &Writer{st: st, log: log, kick: kick, fail: fail}
	w.changed = sync.NewCond(&w.mu)
	return w
}

// Enqueue queues p and reports whether the writer took it; after Close it does not, and the
// caller commits p itself. The caller then waits for it with Await.
func (w *Writer) Enqueue(p *Pending) bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.closed {
		return false
	}
	w.queue = append(w.queue, p)
	w.queued++
	return true
}

// Await returns p's commit result once its commit has been tried, committing groups itself while
// no one else does.
//
// It is called right after p's delivery, which has woken the recipients' readers, most likely on
// this thread's CPU; unless p is committed already, it first yields that CPU to them, so that
// the commit does not delay them. make bench measured the delivery latency 8-15% lower with the
// yield, and fan-out no lower. The answers of a group are taken one after another, and only the
// first waits: the others do not yield again (a system call each).
func (w *Writer) Await(p *Pending) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	if !p.committed {
		w.mu.Unlock()
		yield()
		w.mu.Lock()
	}
	w.waitLocked(func() bool { return p.committed })
	return p.err
}

// Flush waits until every message queued before the call has been committed (or has failed).
func (w *Writer) Flush() {
	w.mu.Lock()
	defer w.mu.Unlock()
	target := w.queued
	w.waitLocked(func() bool { return w.done >= target })
}

// waitLocked commits groups, or waits for the waiter committing one, until ready. Call with mu.
func (w *Writer) waitLocked(ready func() bool) {
	for !ready() {
		if w.committing || len(w.queue) == 0 {
			w.changed.Wait()
			continue
		}
		w.commitLocked()
	}
}

// commitLocked takes the queue and commits it as one group, with mu released meanwhile.
func (w *Writer) commitLocked() {
	batch := w.queue
	w.queue, w.spare = w.spare, nil
	w.committing = true
	w.mu.Unlock()
	err := Commit(w.st, batch, nil)
	if err != nil {
		w.log.Error("lobby messages were delivered but not stored", "messages", len(batch), "err", err)
		if w.fail != nil {
			w.fail()
		}
	} else if w.kick != nil && HasHook(batch) {
		w.kick()
	}
	w.mu.Lock()
	for _, p := range batch {
		p.committed, p.err = true, err
	}
	w.done += uint64(len(batch))
	w.committing = false
	clear(batch)
	w.spare = batch[:0]
	w.changed.Broadcast()
}

// yield gives the thread's CPU to another runnable thread (a test counts its calls).
var yield = osyield.Yield

// Close commits what is queued and refuses later messages, which their senders commit
// themselves.
func (w *Writer) Close() {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.closed {
		return
	}
	w.closed = true
	target := w.queued
	w.waitLocked(func() bool { return w.done >= target })
}

// Commit stores a batch in one transaction: each lobby's messages and their webhook rows, with
// one StoreLobbyMessages each (one statement on PostgreSQL); out,
// when not nil, is stored in the outbox with them, the batch being one lobby's.
func Commit(st store.Store, batch []*Pending, out *store.OutboxRows) error {
	ctx := context.Background()
	if oneLobby(batch) { // the usual group: no grouping to do
		return storeLobby(ctx, st, batch, out)
	}
	var lobbies [][]*Pending // the batch by lobby, in order
	at := make(map[uint64]int, 1)
	for _, p := range batch {
		i, ok := at[p.Msg.LobbyID]
		if !ok {
			i = len(lobbies)
			at[p.Msg.LobbyID] = i
			lobbies = append(lobbies, nil)
		}
		lobbies[i] = append(lobbies[i], p)
	}
	if out != nil {
		return fmt.Errorf("lobby messages: outbox events for %d lobbies", len(lobbies))
	}
	return st.WithTx(ctx, func(st store.Store) error {
		for _, ps := range lobbies {
			if err := storeLobby(ctx, st, ps, nil); err != nil {
				return err
			}
		}
		return nil
	})
}

// oneLobby reports whether the messages of batch, at least one, are all of one lobby.
func oneLobby(batch []*Pending) bool {
	for _, p := range batch {
		if p.Msg.LobbyID != batch[0].Msg.LobbyID {
			return false
		}
	}
	return len(batch) > 0
}

// storeLobby stores ps, messages of one lobby, and their webhook rows with out (nil: none).
func storeLobby(ctx context.Context, st store.Store, ps []*Pending, out *store.OutboxRows) error {
	msgs := make([]*store.LobbyMessage, len(ps))
	var hooks []*store.WebhookDelivery
	for i, p := range ps {
		msgs[i] = p.Msg
		if p.Hook != nil {
			hooks = append(hooks, p.Hook)
		}
	}
	id := ps[0].Msg.LobbyID
	if err := st.StoreLobbyMessages(ctx, id, msgs, hooks, out); err != nil {
		return fmt.Errorf("lobby %d, messages %d to %d: %w", id, msgs[0].ID, msgs[len(msgs)-1].ID, err)
	}
	return nil
}

// HasHook reports whether a message of batch has a webhook row.
func HasHook(batch []*Pending) bool {
	for _, p := range batch {
		if p.Hook != nil {
			return true
		}
	}
	return false
}
