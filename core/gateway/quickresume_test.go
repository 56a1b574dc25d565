package gateway

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/coder/websocket"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"sdkpp/core/internal/testwait"
)

// A session dropped once it was established is resumed at once, not after the backoff's first
// delay: the service replays only the last dispatches it keeps (1000 by default), which a busy
// lobby's fan-out fills in well under that delay, so that the wait turned a drop into a session
// that could not be resumed, and its events lost. A second drop soon after backs off, so that a
// service that drops every session it establishes is not hammered.
func TestDroppedSessionResumesAtOnce(t *testing.T) {
	const backoff = 300 * time.Millisecond // Delay(0) with Rand 0
	var (
		mu    sync.Mutex
		steps []string // the service's connections and the client's backoff waits, in order
	)
	note := func(s string) {
		mu.Lock()
		defer mu.Unlock()
		steps = append(steps, s)
	}
	var conns atomic.Int32
	srv := readyServer(func(ctx context.Context, ws *websocket.Conn) {
		n := conns.Add(1)
		note(fmt.Sprintf("connection %d", n))
		if n <= 2 { // established, then dropped with a resumable code
			ws.Close(4000, "too far behind")
			return
		}
		for { // until the client closes
			if _, _, err := ws.Read(ctx); err != nil {
				return
			}
		}
	})
	defer srv.Close()
	c, err := New(Config{URL: "ws" + strings.TrimPrefix(srv.URL, "http"), Token: func() string { return "t" },
		Backoff: Backoff{Initial: backoff, Max: time.Minute},
		Rand:    func() float64 { return 0 },
		Sleep: func(ctx context.Context, d time.Duration) error {
			if d == backoff {
				note("backoff")
				return ctx.Err()
			}
			<-ctx.Done() // the heartbeat's: it never beats in this test
			return ctx.Err()
		}})
	require.NoError(t, err)
	defer c.Close()
	c.Start()
	testwait.Until(t, "the third connection", func() bool { return conns.Load() == 3 && c.Status() == Ready })
	mu.Lock()
	defer mu.Unlock()
	assert.Equal(t, []string{"connection 1", "connection 2", "backoff", "connection 3"}, steps)
}
