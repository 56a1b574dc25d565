package core

import (
	"bytes"
	"context"
	"runtime"
	"strconv"
	"testing"
	"time"

	"sdkpp/core/internal/workers"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// goroutineID is the number the runtime gives the calling goroutine (the first line of its
// stack trace), to tell whether two operations ran on the same one.
func goroutineID(t *testing.T) int {
	var buf [64]byte
	line := buf[:runtime.Stack(buf[:], false)]
	line = bytes.TrimPrefix(line, []byte("goroutine "))
	id, err := strconv.Atoi(string(line[:bytes.IndexByte(line, ' ')]))
	require.NoError(t, err, "stack header %q", buf[:])
	return id
}

// untilIdle waits until c has n idle workers.
func untilIdle(t *testing.T, c *Client, n int32) {
	t.Helper()
	require.Eventually(t, func() bool { return c.workers.Idle() == n }, 10*time.Second, time.Millisecond,
		"idle workers: %d, want %d", c.workers.Idle(), n)
}

// An operation started while a worker is idle runs on that worker's goroutine.
func TestStartReusesAnIdleWorker(t *testing.T) {
	c := NewClient()
	defer c.Close()
	ran := make(chan int, 1)
	require.True(t, c.start(func(context.Context) { ran <- goroutineID(t) }))
	first := <-ran
	untilIdle(t, c, 1)
	require.True(t, c.start(func(context.Context) { ran <- goroutineID(t) }))
	assert.Equal(t, first, <-ran, "the second operation ran on another goroutine")
	untilIdle(t, c, 1)
}

// Operations that run together each get a goroutine; once they are done, workers.MaxIdle of
// them wait, and Close stops those (it returns only once every worker has).
func TestStartRunsConcurrentOperationsAndCloseStopsWorkers(t *testing.T) {
	c := NewClient()
	const ops = 3 * workers.MaxIdle
	release := make(chan struct{})
	started := make(chan int, ops)
	for range ops {
		require.True(t, c.start(func(ctx context.Context) {
			started <- goroutineID(t)
			<-release
		}))
	}
	ids := map[int]bool{}
	for range ops {
		ids[<-started] = true
	}
	assert.Len(t, ids, ops, "operations in progress shared a goroutine")
	close(release)
	untilIdle(t, c, workers.MaxIdle)
	c.Close()
	assert.Zero(t, c.workers.Idle(), "idle workers after Close")
	assert.False(t, c.start(func(context.Context) { t.Error("an operation ran after Close") }), "start after Close")
}

// A panic in an operation is logged, and its worker serves the next operation.
func TestStartSurvivesAPanic(t *testing.T) {
	c := NewClient()
	defer c.Close()
	logs := captureLogs(c, LoggingSeverityError)
	require.True(t, c.start(func(context.Context) { panic("boom") }))
	untilIdle(t, c, 1)
	ran := make(chan struct{})
	require.True(t, c.start(func(context.Context) { close(ran) }))
	<-ran
	assert.Contains(t, logs(), "internal error in an SDK operation: boom")
}
