// Package testwait is the one poll helper of core's tests: for a condition that another
// goroutine makes true, on a real clock (a socket, a process), where no event says when.
package testwait

import (
	"time"

	"github.com/stretchr/testify/require"
)

// Timeout is how long Until waits before failing the test.
const Timeout = 15 * time.Second

// Until checks cond every few milliseconds until it holds, and fails t, naming what it waited
// for, once Timeout has passed.
func Until(t require.TestingT, what string, cond func() bool) {
	if h, ok := t.(interface{ Helper() }); ok {
		h.Helper()
	}
	deadline := time.Now().Add(Timeout)
	for !cond() {
		require.False(t, time.Now().After(deadline), "timed out waiting for %s", what)
		time.Sleep(2 * time.Millisecond)
	}
}
