package hookrelay

import (
	"runtime"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// waitLive waits until n companions are alive; it waits for expected exits, it does not prove
// that something did not happen.
func waitLive(t *testing.T, n int) {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); live() != n && time.Now().Before(deadline); {
		time.Sleep(time.Millisecond)
	}
	require.Equal(t, n, live(), "live companions")
}

// A hook runs on a companion thread, not on the calling thread; every hook of one thread runs on
// the same companion; the companion ends with its thread.
func TestRelayRunsOnACompanionThatEndsWithItsThread(t *testing.T) {
	base := live()
	caller, companion, same, err := probeThread(5)
	require.NoError(t, err)
	assert.NotZero(t, companion, "the hook ran")
	assert.NotEqual(t, caller, companion, "the hook ran on the calling thread")
	assert.True(t, same, "the hooks of one thread share its companion")
	waitLive(t, base)

	// A Go thread too (hooks are called from Go); it keeps its companion while it lives.
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	first, second := probe(), probe()
	assert.NotEqual(t, uint64(syscall.Gettid()), first, "the hook ran on the calling thread")
	assert.NotZero(t, first, "the hook ran")
	assert.Equal(t, first, second, "the hooks of one thread share its companion")
}

// Threads at once, each calling many hooks: each call returns after its hook ran, each thread on
// a companion of its own, and none is left once the threads have ended.
func TestRelayRunsEveryHookOnItsThreadsCompanion(t *testing.T) {
	base := live()
	const threads = 8
	type result struct {
		caller, companion uint64
		same              bool
		err               error
	}
	results := make(chan result, threads)
	for range threads {
		go func() {
			c, p, s, err := probeThread(200)
			results <- result{c, p, s, err}
		}()
	}
	for range threads {
		r := <-results
		require.NoError(t, r.err)
		assert.True(t, r.same, "thread %d: one companion", r.caller)
		assert.NotEqual(t, r.caller, r.companion, "thread %d: on its companion", r.caller)
	}
	waitLive(t, base)
}
