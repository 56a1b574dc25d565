package seqwait

import (
	"context"
	"testing"
	"testing/synctest"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestWaitReturnsAtOnceWhenReached(t *testing.T) {
	var s Seq
	require.NoError(t, s.Wait(context.Background(), 0))
	s.Advance(5)
	require.NoError(t, s.Wait(context.Background(), 5))
	require.NoError(t, s.Wait(context.Background(), 3))
	s.Advance(2) // lower: ignored
	assert.Equal(t, uint64(5), s.Load())
}

func TestWaitWakesOnlyOnceReached(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var s Seq
		done := make(chan error, 1)
		go func() { done <- s.Wait(context.Background(), 3) }()
		synctest.Wait()
		s.Advance(2)
		synctest.Wait()
		select {
		case <-done:
			t.Fatal("Wait returned below its number")
		default:
		}
		s.Advance(3)
		synctest.Wait()
		select {
		case err := <-done:
			require.NoError(t, err)
		default:
			t.Fatal("Wait did not return at its number")
		}
	})
}

func TestWaitEndsWithItsContext(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var s Seq
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan error, 1)
		go func() { done <- s.Wait(ctx, 1) }()
		synctest.Wait()
		cancel()
		synctest.Wait()
		require.ErrorIs(t, <-done, context.Canceled)
		s.Advance(1) // nobody waits: no panic on the dropped channel
		require.NoError(t, s.Wait(context.Background(), 1))
	})
}
