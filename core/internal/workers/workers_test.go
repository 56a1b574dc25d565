package workers

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A panic goes to panicked and its worker stays for the next operation; the context's cancel
// ends the idle workers and Wait returns.
func TestPoolPanicReuseAndWait(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	panics := make(chan any, 1)
	p := New(ctx, func(v any) { panics <- v })
	p.Go(func(context.Context) { panic("boom") })
	assert.Equal(t, "boom", <-panics)
	require.Eventually(t, func() bool { return p.Idle() == 1 }, 10*time.Second, time.Millisecond)
	ran := make(chan context.Context, 1)
	p.Go(func(ctx context.Context) { ran <- ctx })
	assert.Equal(t, ctx, <-ran, "an operation runs with the pool's context")
	require.Eventually(t, func() bool { return p.Idle() == 1 }, 10*time.Second, time.Millisecond,
		"the operation went to the idle worker, which waits again")
	cancel()
	p.Wait()
	assert.Zero(t, p.Idle())
}
