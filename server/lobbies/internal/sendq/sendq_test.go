package sendq

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"sdkpp/server/lobbies/internal/sendtrace"
)

type work struct{ key, n uint64 }

func (w *work) Key() uint64 { return w.key }

// Work sent while a group is being sent waits for it and goes as the next group, all of it at
// once; Take takes a key's work in order, and what a sender gives back goes first in the next.
func TestQueueGroups(t *testing.T) {
	var q Queue[*work]
	var groups [][]uint64
	record := func(g []*work) {
		ns := make([]uint64, len(g))
		for i, w := range g {
			ns[i] = w.n
		}
		groups = append(groups, ns)
	}
	inside := make(chan struct{})
	proceed := make(chan struct{})
	a, b, c, d := &work{1, 1}, &work{2, 2}, &work{1, 3}, &work{1, 4}
	var wg sync.WaitGroup
	wg.Go(func() {
		q.Send(a, func(g []*work) {
			record(g)
			close(inside)
			<-proceed
			q.Finish(g)
		})
	})
	<-inside // a's group is being sent: b, c and d wait
	queued := func(n int) bool {
		q.mu.Lock()
		defer q.mu.Unlock()
		return len(q.queue) == n
	}
	for i, w := range []*work{b, c, d} {
		wg.Go(func() {
			q.Send(w, func(g []*work) { // sends the first, gives back the rest
				record(g)
				q.Finish(g[:1])
				q.PutBack(g[1:])
			})
		})
		require.Eventually(t, func() bool { return queued(i + 1) }, 10*time.Second, time.Millisecond)
	}
	took := q.Take(1)
	assert.Equal(t, []*work{c, d}, took, "a key's work, in order")
	q.PutBack(took)
	close(proceed)
	wg.Wait()
	assert.Equal(t, [][]uint64{{1}, {3, 4, 2}, {4, 2}, {2}}, groups)
	assert.Empty(t, q.queue)
	assert.Empty(t, q.waiting)
}

// The caller whose Send starts a group's send returns once its own work is Finished, while the
// send goes on (it takes more of the queue); Wait waits for the send's end.
func TestQueueAnswersTheStarterWithItsWork(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var q Queue[*work]
		a, b := &work{1, 1}, &work{1, 2}
		more := make(chan struct{})
		var sends, returned atomic.Int32
		var wg sync.WaitGroup
		wg.Go(func() {
			q.Send(a, func(g []*work) {
				sends.Add(1)
				q.Finish(g)
				<-more // b arrives meanwhile: sent as the next group of this send
				next := q.Take(1)
				assert.Equal(t, []*work{b}, next)
				q.Finish(next)
			})
			returned.Add(1)
		})
		synctest.Wait()
		require.EqualValues(t, 1, returned.Load(), "a's caller is answered once a is Finished")
		wg.Go(func() {
			q.Send(b, func([]*work) { t.Error("b is taken by the send under way") })
			returned.Add(1)
		})
		synctest.Wait()
		require.EqualValues(t, 1, returned.Load(), "b waits for the send under way")
		waited := make(chan struct{})
		go func() { q.Wait(); close(waited) }()
		synctest.Wait()
		select {
		case <-waited:
			t.Fatal("Wait returned while the send goes on")
		default:
		}
		close(more)
		wg.Wait()
		<-waited
		assert.EqualValues(t, 1, sends.Load())
		assert.Empty(t, q.waiting)
	})
}

// tracedWork is work with a send record (sendtrace.Traced).
type tracedWork struct {
	work
	*sendtrace.Send
}

// Traced work is stamped Grouped when a send takes it (its group's or Take), Committed when it
// is Finished and Answered when its Send returns: with its publish stamped by the sender, each
// is written once, in the order it was answered.
func TestQueueStampsTracedWork(t *testing.T) {
	path := filepath.Join(t.TempDir(), "trace")
	was := sendtrace.Default
	sendtrace.Default = sendtrace.New(path)
	t.Cleanup(func() { sendtrace.Default = was })
	var q Queue[*tracedWork]
	a := &tracedWork{work{1, 1}, sendtrace.Default.Send()}
	b := &tracedWork{work{1, 2}, sendtrace.Default.Send()}
	inside, proceed := make(chan struct{}), make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() {
		q.Send(a, func(g []*tracedWork) {
			close(inside)
			<-proceed // b arrives meanwhile
			q.Finish(g)
			sendtrace.Mark(sendtrace.Default, g, sendtrace.Published)
			next := q.Take(1)
			q.Finish(next)
			sendtrace.Mark(sendtrace.Default, next, sendtrace.Published)
		})
	})
	<-inside
	wg.Go(func() { q.Send(b, func([]*tracedWork) { t.Error("b is taken by the send under way") }) })
	require.Eventually(t, func() bool { q.mu.Lock(); defer q.mu.Unlock(); return len(q.queue) == 1 }, 10*time.Second, time.Millisecond)
	close(proceed)
	wg.Wait()
	q.Wait()

	raw, err := os.ReadFile(path + "." + strconv.Itoa(os.Getpid()))
	require.NoError(t, err)
	lines := strings.Split(strings.TrimSpace(string(raw)), "\n")
	require.Len(t, lines, 3, "the header and a line per piece of work")
	for _, line := range lines[1:] {
		f := strings.Fields(line)
		for _, st := range []sendtrace.Stamp{sendtrace.Accepted, sendtrace.Grouped, sendtrace.Committed, sendtrace.Published, sendtrace.Answered} {
			assert.NotEqual(t, "0", f[st], "step %d of %q", st, line)
		}
	}
}

// TakeAtLeast waits for as much of a key's work as asked, and no longer: it takes the work once
// there is enough, once its wait has passed (what there is then), or at once when work of
// another key waits, which must not wait for the key's.
func TestQueueTakeAtLeast(t *testing.T) {
	const wait = time.Millisecond
	tests := []struct {
		name   string
		n      int
		arrive []*work // one after the other, 100µs apart, while the taker waits
		want   []uint64
		took   time.Duration // how long the take waited
	}{
		{"enough: taken when the last arrives", 2, []*work{{1, 2}, {1, 3}, {1, 4}}, []uint64{2, 3}, 200 * time.Microsecond},
		{"too few: taken after the wait", 3, []*work{{1, 2}, {1, 3}}, []uint64{2, 3}, wait},
		{"another key: taken at once", 3, []*work{{1, 2}, {2, 3}, {1, 4}}, []uint64{2}, 200 * time.Microsecond},
		{"no wait asked", 0, []*work{{1, 2}}, nil, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				var q Queue[*work]
				var wg sync.WaitGroup
				var took []uint64
				var waited time.Duration
				wg.Go(func() {
					q.Send(&work{1, 1}, func(g []*work) {
						q.Finish(g)
						start := time.Now()
						next := q.TakeAtLeast(1, tt.n, wait)
						waited = time.Since(start)
						for _, w := range next {
							took = append(took, w.n)
						}
						q.Finish(next)
						q.PutBack(q.Take(2)) // for the next send
					})
				})
				synctest.Wait()
				for _, w := range tt.arrive {
					time.Sleep(100 * time.Microsecond)
					wg.Go(func() { q.Send(w, func(g []*work) { q.Finish(g) }) })
					synctest.Wait()
				}
				wg.Wait()
				q.Wait()
				assert.Equal(t, tt.want, took)
				assert.Equal(t, tt.took, waited)
				assert.Empty(t, q.queue)
				assert.Empty(t, q.waiting)
			})
		})
	}
}

// A word of enough that comes as the wait ends is dropped, not left for the next wait.
func TestQueueTakeAtLeastDropsALateWord(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var q Queue[*work]
		q.changed, q.waiting = sync.NewCond(&q.mu), map[*work]bool{}
		q.sending = true // the caller is the sender
		done := make(chan []*work)
		go func() { done <- q.TakeAtLeast(1, 1, time.Millisecond) }()
		synctest.Wait()
		// As the timer fires: the word of enough is in the channel when the taker looks.
		q.mu.Lock()
		q.queue = append(q.queue, &work{1, 2})
		q.wantN = 0
		q.enough <- struct{}{}
		q.mu.Unlock()
		got := <-done
		assert.Len(t, got, 1)
		assert.Empty(t, q.enough, "the word is read")
		start := time.Now()
		go func() { done <- q.TakeAtLeast(1, 1, time.Millisecond) }()
		<-done
		assert.Equal(t, time.Millisecond, time.Since(start), "the next wait is not ended by an old word")
	})
}
