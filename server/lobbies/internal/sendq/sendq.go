// Package sendq gathers the work that arrives while earlier work is being sent, so that it goes
// as the next group: the first caller of Send starts the send of a group (everything queued)
// while no one else sends, and every caller waits for its own work only; a waiter then starts
// the next. The sender may take
// more of the queue, by key, while it sends (Take), and give back what it could not send
// (PutBack). Package lobbies sends a cluster's lobby messages so. Work that is
// sendtrace.Traced is stamped in sendtrace.Default when it is taken into a group, Finished and
// answered.
package sendq

import (
	"sync"
	"time"

	"sdkpp/server/lobbies/internal/sendtrace"
)

// Keyed is work of one key (a lobby): the sender takes the work of a key together.
type Keyed interface {
	comparable
	Key() uint64
}

// Queue gathers work of type T. Its zero value is ready to use.
type Queue[T Keyed] struct {
	mu      sync.Mutex
	changed *sync.Cond // signalled when a group has been sent
	queue   []T
	waiting map[T]bool // queued or being sent, not yet Finished
	sending bool       // a send is under way

	// TakeAtLeast's wait: the queue has work of key wantKey; wantN is how much it waits for
	// (0: none waits), and enough is told once the queue holds that much.
	wantKey uint64
	wantN   int
	enough  chan struct{}
}

// Send queues v and returns once it is Finished: by a group the caller starts sending with send
// (every piece of work queued while no other group is sent), or one another caller started.
// send runs on a goroutine of its own, which may go on after v is Finished (it sends more of the
// queue, Take); Wait waits for it. send must Finish every piece of work it is given, or PutBack
// what it did not.
func (q *Queue[T]) Send(v T, send func(group []T)) {
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.changed == nil {
		q.changed, q.waiting = sync.NewCond(&q.mu), map[T]bool{}
	}
	q.queue = append(q.queue, v)
	q.waiting[v] = true
	if q.wantN > 0 && (v.Key() != q.wantKey || q.countLocked(q.wantKey) >= q.wantN) {
		q.wantN = 0
		q.enough <- struct{}{} // room for one: the taker reads it, or drops it (TakeAtLeast)
	}
	defer sendtrace.Default.Stamp(v, sendtrace.Answered)
	for q.waiting[v] {
		if q.sending {
			q.changed.Wait()
			continue
		}
		group := q.queue
		q.queue, q.sending = nil, true
		sendtrace.Mark(sendtrace.Default, group, sendtrace.Grouped)
		go func() { // owned by the queue: it ends with the send; Wait waits for it
			send(group)
			q.mu.Lock()
			defer q.mu.Unlock()
			q.sending = false
			q.changed.Broadcast()
		}()
	}
}

// Wait waits until no send is under way. Work queued later starts another.
func (q *Queue[T]) Wait() {
	q.mu.Lock()
	defer q.mu.Unlock()
	for q.sending {
		q.changed.Wait()
	}
}

// Finish tells the waiters of group that it has been sent (or has failed).
func (q *Queue[T]) Finish(group []T) {
	q.mu.Lock()
	defer q.mu.Unlock()
	for _, v := range group {
		delete(q.waiting, v)
	}
	sendtrace.Mark(sendtrace.Default, group, sendtrace.Committed)
	q.changed.Broadcast()
}

// Take removes from the queue, and returns, the work of key that arrived meanwhile, in its
// order.
func (q *Queue[T]) Take(key uint64) []T {
	q.mu.Lock()
	defer q.mu.Unlock()
	var took []T
	rest := q.queue[:0]
	for _, v := range q.queue {
		if v.Key() == key {
			took = append(took, v)
		} else {
			rest = append(rest, v)
		}
	}
	clear(q.queue[len(rest):])
	q.queue = rest
	sendtrace.Mark(sendtrace.Default, took, sendtrace.Grouped)
	return took
}

// TakeAtLeast is Take once the queue holds at least n pieces of work of key, or once wait has
// passed, or work of another key has come, which must not wait for key's (whatever it holds
// then; no wait when n or wait is not positive). The sender of a group calls it to gather the
// next group of the key: one commit and one publish for more of the work that is bound to
// come (its senders were just answered), rather than a group of what came first. Only the
// sender of a group calls it (one at a time).
func (q *Queue[T]) TakeAtLeast(key uint64, n int, wait time.Duration) []T {
	q.mu.Lock()
	if n <= 0 || wait <= 0 || q.countLocked(key) >= n || q.countLocked(key) < len(q.queue) {
		q.mu.Unlock()
		return q.Take(key)
	}
	if q.enough == nil {
		q.enough = make(chan struct{}, 1)
	}
	q.wantKey, q.wantN = key, n
	q.mu.Unlock()
	t := time.NewTimer(wait)
	select {
	case <-q.enough:
	case <-t.C:
		q.mu.Lock()
		if q.wantN == 0 { // told enough meanwhile: the channel holds the word, drop it
			<-q.enough
		}
		q.wantN = 0
		q.mu.Unlock()
	}
	t.Stop()
	return q.Take(key)
}

// countLocked counts the queued work of key. Call with q.mu held.
func (q *Queue[T]) countLocked(key uint64) int {
	n := 0
	for _, v := range q.queue {
		if v.Key() == key {
			n++
		}
	}
	return n
}

// PutBack returns to the front of the queue work taken and not sent, for the next sender.
func (q *Queue[T]) PutBack(group []T) {
	if len(group) == 0 {
		return
	}
	q.mu.Lock()
	defer q.mu.Unlock()
	q.queue = append(group[:len(group):len(group)], q.queue...)
}
