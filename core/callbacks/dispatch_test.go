package callbacks

import (
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestPostRunsOnlyInRun(t *testing.T) {
	q := New()
	s := q.NewScope(nil)
	ran := 0
	s.Post(func() { ran++ })
	s.Post(func() { ran++ })
	require.Zero(t, ran, "ran=%d len=%d before Run", ran, q.Len())
	require.EqualValues(t, 2, q.Len(), "ran=%d len=%d before Run", ran, q.Len())
	n := q.Run()
	require.EqualValues(t, 2, n, "Run = %d, ran %d", n, ran)
	require.EqualValues(t, 2, ran, "Run = %d, ran %d", n, ran)
	n = q.Run()
	assert.Zero(t, n, "second Run = %d", n)
}

func TestItemsQueuedDuringRunWaitForNextRun(t *testing.T) {
	q := New()
	s := q.NewScope(nil)
	order := []int{}
	s.Post(func() {
		order = append(order, 1)
		s.Post(func() { order = append(order, 2) })
	})
	q.Run()
	require.Len(t, order, 1, "order = %v after first Run", order)
	q.Run()
	assert.Len(t, order, 2, "order = %v after second Run", order)
}

func TestOnceFiresExactlyOnceThenReleases(t *testing.T) {
	q := New()
	s := q.NewScope(nil)
	fired, cancelled, released := 0, 0, 0
	o := s.Once(func() { cancelled++ }, func() { released++ })
	require.True(t, o.Fire(func() { fired++ }), "first Fire refused")
	require.False(t, o.Fire(func() { fired++ }), "second Fire accepted")
	s.Close() // after Fire, before Run: cancel replaces fire
	q.Run()
	q.Run()
	assert.Zero(t, fired, "fired=%d cancelled=%d released=%d", fired, cancelled, released)
	assert.EqualValues(t, 1, cancelled, "fired=%d cancelled=%d released=%d", fired, cancelled, released)
	assert.EqualValues(t, 1, released, "fired=%d cancelled=%d released=%d", fired, cancelled, released)
}

func TestCloseCancelsPendingOnce(t *testing.T) {
	q := New()
	s := q.NewScope(nil)
	var got []string
	o := s.Once(func() { got = append(got, "cancel") }, func() { got = append(got, "release") })
	s.Close()
	require.False(t, o.Fire(func() { got = append(got, "fire") }), "Fire after Close accepted")
	q.Run()
	require.Len(t, got, 2, "got %v", got)
	require.Equal(t, "cancel", got[0], "got %v", got)
	require.Equal(t, "release", got[1], "got %v", got)
	// A Once made on a closed scope is cancelled too.
	got = nil
	s.Once(func() { got = append(got, "cancel") }, nil)
	q.Run()
	assert.Len(t, got, 1, "once on closed scope: %v", got)
}

func TestClosedScopeSkipsPostsAndReleasesOnce(t *testing.T) {
	q := New()
	released := 0
	parent := q.NewScope(nil)
	child := parent.NewScope(func() { released++ })
	ran := 0
	child.Post(func() { ran++ })
	parent.Close()
	parent.Close()
	child.Close()
	require.EqualValues(t, 1, released, "released %d times", released)
	require.False(t, child.Post(func() { ran++ }), "Post on closed scope accepted")
	q.Run()
	require.Zero(t, ran, "closed scope ran %d items", ran)
	late := parent.NewScope(func() { released++ })
	assert.True(t, late.Closed(), "child of closed scope: closed=%v released=%d", late.Closed(), released)
	assert.EqualValues(t, 2, released, "child of closed scope: closed=%v released=%d", late.Closed(), released)
}

// Closing a scope from inside one of its callbacks defers the release to the end of Run, so the
// running callback never sees its resources freed.
func TestReleaseWaitsForRunningCallback(t *testing.T) {
	q := New()
	freed := false
	var s *Scope
	s = q.NewScope(func() { freed = true })
	s.Post(func() {
		s.Close()
		assert.False(t, freed, "released while its callback was running")
	})
	q.Run()
	assert.True(t, freed, "not released after Run")
}

func TestReentrantRunReturnsZero(t *testing.T) {
	q := New()
	s := q.NewScope(nil)
	inner := -1
	s.Post(func() {
		s.Post(func() {})
		inner = q.Run()
	})
	q.Run()
	assert.Zero(t, inner, "nested Run = %d", inner)
}

func TestResetReleasesWithoutCalling(t *testing.T) {
	q := New()
	s := q.NewScope(nil)
	called, released := 0, 0
	s.Once(func() { called++ }, func() { released++ }).Fire(func() { called++ })
	s.Post(func() { called++ })
	q.Reset()
	q.Run()
	assert.Zero(t, called, "called=%d released=%d len=%d", called, released, q.Len())
	assert.EqualValues(t, 1, released, "called=%d released=%d len=%d", called, released, q.Len())
	assert.Zero(t, q.Len(), "called=%d released=%d len=%d", called, released, q.Len())
}

func TestPanicIsReportedAndRunGoesOn(t *testing.T) {
	q := New()
	var reported any
	q.OnPanic = func(v any) { reported = v }
	s := q.NewScope(nil)
	after := false
	s.Post(func() { panic("boom") })
	s.Post(func() { after = true })
	q.Run()
	assert.Equal(t, "boom", reported, "reported=%v after=%v", reported, after)
	assert.True(t, after, "reported=%v after=%v", reported, after)
}

// Many goroutines fire one-shots and close scopes while one thread runs: every one-shot runs
// exactly once and is released exactly once.
func TestConcurrentExactlyOnce(t *testing.T) {
	q := New()
	const n = 2000
	var calls, releases atomic.Int64
	scopes := make([]*Scope, 8)
	for i := range scopes {
		scopes[i] = q.NewScope(nil)
	}
	var wg sync.WaitGroup
	for g := 0; g < 8; g++ {
		wg.Add(1)
		go func(g int) {
			defer wg.Done()
			s := scopes[g]
			for i := 0; i < n; i++ {
				o := s.Once(func() { calls.Add(1) }, func() { releases.Add(1) })
				o.Fire(func() { calls.Add(1) })
				if i == n/2 && g%2 == 0 {
					s.Close()
				}
			}
		}(g)
	}
	done := make(chan struct{})
	go func() { wg.Wait(); close(done) }()
	for {
		q.Run()
		select {
		case <-done:
			q.Run()
			require.EqualValues(t, 8*n, calls.Load(), "calls=%d releases=%d, want %d each", calls.Load(), releases.Load(), 8*n)
			require.EqualValues(t, 8*n, releases.Load(), "calls=%d releases=%d, want %d each", calls.Load(), releases.Load(), 8*n)
			return
		default:
		}
	}
}

func BenchmarkRunEmpty(b *testing.B) {
	q := New()
	for b.Loop() {
		q.Run()
	}
}

// Yield yields once after each push that woke a thread waiting in Wait, and never otherwise.
func TestYieldOnlyAfterAPushThatWokeAWaiter(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		q := New()
		s := q.NewScope(nil)
		require.False(t, q.Yield(), "nothing was pushed")
		s.Post(func() {})
		require.False(t, q.Yield(), "the push woke nobody")
		q.Run()
		woke := make(chan bool)
		go func() { woke <- q.Wait(time.Hour) }()
		synctest.Wait() // the goroutine waits in Wait
		s.Post(func() {})
		require.True(t, q.Yield(), "the push woke the waiting goroutine")
		require.True(t, <-woke)
		require.False(t, q.Yield(), "once per waking push")
		s.Post(func() {})
		require.False(t, q.Yield(), "nobody waits any more")
	})
}

func TestWaitReportsQueuedItemsWithoutRunningThem(t *testing.T) {
	q := New()
	s := q.NewScope(nil)
	require.False(t, q.Wait(0), "Wait(0) on an empty queue reported items")
	require.False(t, q.Wait(time.Millisecond), "Wait on an empty queue reported items after its timeout")
	ran := false
	s.Post(func() { ran = true })
	require.True(t, q.Wait(0), "Wait did not report the queued item")
	require.True(t, q.Wait(time.Hour), "Wait did not report the queued item")
	require.False(t, ran, "Wait ran the item")
	q.Run()
	assert.True(t, ran, "after Run: ran=%v, Wait(0)=%v", ran, q.Wait(0))
	assert.False(t, q.Wait(0), "after Run: ran=%v, Wait(0)=%v", ran, q.Wait(0))
}

// Every waiting thread wakes on one push, long before its timeout; the test would hang for an
// hour (and the test binary's timeout would fail it) if a push did not wake them.
func TestWaitWakesEveryWaiterOnPush(t *testing.T) {
	q := New()
	s := q.NewScope(nil)
	const waiters = 4
	var entered sync.WaitGroup
	entered.Add(waiters)
	results := make(chan bool, waiters)
	for range waiters {
		go func() {
			entered.Done()
			results <- q.Wait(time.Hour)
		}()
	}
	entered.Wait()
	s.Post(func() {})
	for range waiters {
		require.True(t, <-results, "a waiter woke without the queued item")
	}
	// The next wait needs a new push: the closed signal of the last one is gone.
	q.Run()
	assert.False(t, q.Wait(time.Millisecond), "Wait reported items after Run took them")
}

// TestOnPushFollowsEveryQueuedItem: posts, fires and the cancels a close queues each run OnPush
// once, after the item is visible to Len, and outside the queue's lock (OnPush may use the queue).
func TestOnPushFollowsEveryQueuedItem(t *testing.T) {
	q := New()
	pushes, seen, unlocked := 0, 0, 0
	q.OnPush = func() {
		pushes++
		seen = q.Len()
		if q.mu.TryLock() {
			unlocked++
			q.mu.Unlock()
		}
	}
	s := q.NewScope(nil)
	s.Post(func() {})
	assert.Equal(t, 1, pushes, "after Post")
	assert.Equal(t, 1, seen, "Len inside OnPush after Post")
	s.Once(func() {}, nil).Fire(func() {})
	assert.Equal(t, 2, pushes, "after Fire")
	s.Once(func() {}, nil)
	s.Close() // queues the pending one-shot's cancel
	assert.Equal(t, 3, pushes, "after Close")
	assert.Equal(t, 3, seen, "Len inside OnPush after Close")
	assert.Equal(t, 3, unlocked, "OnPush runs outside the queue's lock")
	q.Run()
	assert.Equal(t, 3, pushes, "Run queues nothing")
}

// TestHeldWakesWakeOnceAtRelease: items queued while wakes are held are visible at once (Len, a
// Wait that starts, Run) but leave a thread already asleep in Wait asleep, and OnPush uncalled,
// until ReleaseWakes, which wakes it and calls OnPush once for all of them.
func TestHeldWakesWakeOnceAtRelease(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		q := New()
		pushes := 0
		q.OnPush = func() { pushes++ }
		s := q.NewScope(nil)
		woke := make(chan bool, 1)
		go func() { woke <- q.Wait(time.Hour) }()
		synctest.Wait() // the waiter is asleep in Wait

		q.HoldWakes()
		s.Post(func() {})
		s.Post(func() {})
		synctest.Wait()
		select {
		case <-woke:
			require.Fail(t, "a held push woke the waiter")
		default:
		}
		assert.Zero(t, pushes, "OnPush while held")
		assert.Equal(t, 2, q.Len(), "held items are queued")
		assert.True(t, q.Wait(time.Hour), "a Wait that starts finds held items at once")

		q.ReleaseWakes()
		require.True(t, <-woke, "the release woke the waiter with the items queued")
		assert.Equal(t, 1, pushes, "one OnPush for the held items")
		assert.True(t, q.Yield(), "the release's wake is Yield's to hand over")
		assert.Equal(t, 2, q.Run(), "Run takes the held items")

		// A release with nothing queued meanwhile wakes nobody; pushes after it wake at once.
		q.HoldWakes()
		q.ReleaseWakes()
		assert.Equal(t, 1, pushes, "a release without items calls no OnPush")
		s.Post(func() {})
		assert.Equal(t, 2, pushes, "a push after the release wakes at once")
	})
}

// TestHeldWakesOverlap: while two goroutines hold, a push is woken for by the first release;
// one that follows it, by the second.
func TestHeldWakesOverlap(t *testing.T) {
	q := New()
	pushes := 0
	q.OnPush = func() { pushes++ }
	s := q.NewScope(nil)
	q.HoldWakes()
	q.HoldWakes()
	s.Post(func() {})
	q.ReleaseWakes()
	assert.Equal(t, 1, pushes, "the first release wakes for the item queued before it")
	s.Post(func() {})
	assert.Equal(t, 1, pushes, "still held by the second hold")
	q.ReleaseWakes()
	assert.Equal(t, 2, pushes, "the second release wakes for the item queued after the first")
	s.Post(func() {})
	assert.Equal(t, 3, pushes, "no hold left: a push wakes at once")
	assert.Equal(t, 3, q.Run())
}

// TestBatchHoldsFromBeginToEnd: a Batch holds the wakes from its first Begin to End, once however
// many items it queued, and End without Begin does nothing; callbacks still run only in Run.
func TestBatchHoldsFromBeginToEnd(t *testing.T) {
	q := New()
	pushes, ran := 0, 0
	q.OnPush = func() { pushes++ }
	s := q.NewScope(nil)
	b := q.Batch()
	b.End()
	assert.Zero(t, pushes, "End without Begin")
	for range 3 {
		b.Begin()
		s.Post(func() { ran++ })
	}
	assert.Zero(t, pushes, "no wake before End")
	assert.Zero(t, ran, "nothing runs outside Run")
	b.End()
	assert.Equal(t, 1, pushes, "one wake for the batch")
	b.End()
	assert.Equal(t, 1, pushes, "a second End wakes nobody")
	assert.Equal(t, 3, q.Run())
	assert.Equal(t, 3, ran)
}
