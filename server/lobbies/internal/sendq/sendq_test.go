package sendq

import (
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
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
