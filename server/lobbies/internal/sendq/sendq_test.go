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
