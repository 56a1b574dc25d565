package dispatch

import (
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

func TestPostRunsOnlyInRun(t *testing.T) {
	q := New()
	s := q.NewScope(nil)
	ran := 0
	s.Post(func() { ran++ })
	s.Post(func() { ran++ })
	if ran != 0 || q.Len() != 2 {
		t.Fatalf("ran=%d len=%d before Run", ran, q.Len())
	}
	if n := q.Run(); n != 2 || ran != 2 {
		t.Fatalf("Run = %d, ran %d", n, ran)
	}
	if n := q.Run(); n != 0 {
		t.Fatalf("second Run = %d", n)
	}
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
	if len(order) != 1 {
		t.Fatalf("order = %v after first Run", order)
	}
	q.Run()
	if len(order) != 2 {
		t.Fatalf("order = %v after second Run", order)
	}
}

func TestOnceFiresExactlyOnceThenReleases(t *testing.T) {
	q := New()
	s := q.NewScope(nil)
	fired, cancelled, released := 0, 0, 0
	o := s.Once(func() { cancelled++ }, func() { released++ })
	if !o.Fire(func() { fired++ }) {
		t.Fatal("first Fire refused")
	}
	if o.Fire(func() { fired++ }) {
		t.Fatal("second Fire accepted")
	}
	s.Close() // after Fire, before Run: cancel replaces fire
	q.Run()
	q.Run()
	if fired != 0 || cancelled != 1 || released != 1 {
		t.Fatalf("fired=%d cancelled=%d released=%d", fired, cancelled, released)
	}
}

func TestCloseCancelsPendingOnce(t *testing.T) {
	q := New()
	s := q.NewScope(nil)
	var got []string
	o := s.Once(func() { got = append(got, "cancel") }, func() { got = append(got, "release") })
	s.Close()
	if o.Fire(func() { got = append(got, "fire") }) {
		t.Fatal("Fire after Close accepted")
	}
	q.Run()
	if len(got) != 2 || got[0] != "cancel" || got[1] != "release" {
		t.Fatalf("got %v", got)
	}
	// A Once made on a closed scope is cancelled too.
	got = nil
	s.Once(func() { got = append(got, "cancel") }, nil)
	q.Run()
	if len(got) != 1 {
		t.Fatalf("once on closed scope: %v", got)
	}
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
	if released != 1 {
		t.Fatalf("released %d times", released)
	}
	if child.Post(func() { ran++ }) {
		t.Fatal("Post on closed scope accepted")
	}
	q.Run()
	if ran != 0 {
		t.Fatalf("closed scope ran %d items", ran)
	}
	late := parent.NewScope(func() { released++ })
	if !late.Closed() || released != 2 {
		t.Fatalf("child of closed scope: closed=%v released=%d", late.Closed(), released)
	}
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
		if freed {
			t.Error("released while its callback was running")
		}
	})
	q.Run()
	if !freed {
		t.Fatal("not released after Run")
	}
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
	if inner != 0 {
		t.Fatalf("nested Run = %d", inner)
	}
}

func TestResetReleasesWithoutCalling(t *testing.T) {
	q := New()
	s := q.NewScope(nil)
	called, released := 0, 0
	s.Once(func() { called++ }, func() { released++ }).Fire(func() { called++ })
	s.Post(func() { called++ })
	q.Reset()
	q.Run()
	if called != 0 || released != 1 || q.Len() != 0 {
		t.Fatalf("called=%d released=%d len=%d", called, released, q.Len())
	}
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
	if reported != "boom" || !after {
		t.Fatalf("reported=%v after=%v", reported, after)
	}
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
			if calls.Load() != 8*n || releases.Load() != 8*n {
				t.Fatalf("calls=%d releases=%d, want %d each", calls.Load(), releases.Load(), 8*n)
			}
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

func TestWaitReportsQueuedItemsWithoutRunningThem(t *testing.T) {
	q := New()
	s := q.NewScope(nil)
	if q.Wait(0) {
		t.Fatal("Wait(0) on an empty queue reported items")
	}
	if q.Wait(time.Millisecond) {
		t.Fatal("Wait on an empty queue reported items after its timeout")
	}
	ran := false
	s.Post(func() { ran = true })
	if !q.Wait(0) || !q.Wait(time.Hour) {
		t.Fatal("Wait did not report the queued item")
	}
	if ran {
		t.Fatal("Wait ran the item")
	}
	q.Run()
	if !ran || q.Wait(0) {
		t.Fatalf("after Run: ran=%v, Wait(0)=%v", ran, q.Wait(0))
	}
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
		if !<-results {
			t.Fatal("a waiter woke without the queued item")
		}
	}
	// The next wait needs a new push: the closed signal of the last one is gone.
	q.Run()
	if q.Wait(time.Millisecond) {
		t.Fatal("Wait reported items after Run took them")
	}
}
