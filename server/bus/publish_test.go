package bus

import (
	"context"
	"strconv"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"sdkpp/server/bus/natstest"
)

// oneNode connects a node to a NATS server of its own.
func oneNode(t *testing.T) *Bus {
	t.Helper()
	ns := natstest.Start(t)
	b, err := Connect(context.Background(), ns.URL(), Options{Node: 1, Memory: true})
	require.NoError(t, err)
	t.Cleanup(b.Close)
	return b
}

// Publishes made at once through one connection each get their own message's sequence number.
func TestConcurrentPublishesGetTheirOwnAcks(t *testing.T) {
	ctx := context.Background()
	b := oneNode(t)
	const writers, each = 12, 20 // more than the idle ackers kept
	seqs := make([][]uint64, writers)
	var wg sync.WaitGroup
	for w := range writers {
		wg.Go(func() {
			for i := range each {
				seq, err := b.PublishID(ctx, []byte("x"), strconv.Itoa(w)+"-"+strconv.Itoa(i))
				if !assert.NoError(t, err) {
					return
				}
				seqs[w] = append(seqs[w], seq)
			}
		})
	}
	wg.Wait()
	seen := map[uint64]bool{}
	for _, ss := range seqs {
		for _, s := range ss {
			assert.False(t, seen[s], "sequence number %d given twice", s)
			seen[s] = true
		}
	}
	assert.Len(t, seen, writers*each)
	last, err := b.Last(ctx)
	require.NoError(t, err)
	assert.Equal(t, uint64(writers*each), last)
}

// A publish that gave up before its ack came leaves the ack behind: the next publish through
// the same inbox is answered with its own sequence number, not that one.
func TestALateAckIsNotTheNextPublishs(t *testing.T) {
	b := oneNode(t)
	gone, cancel := context.WithCancel(context.Background())
	cancel()
	_, err := b.PublishID(gone, []byte("first"), "first")
	require.ErrorIs(t, err, context.Canceled)
	seq, err := b.PublishID(context.Background(), []byte("second"), "second")
	require.NoError(t, err)
	assert.Equal(t, uint64(2), seq, "the first was stored all the same")
	again, err := b.PublishID(context.Background(), []byte("first"), "first")
	require.NoError(t, err)
	assert.Equal(t, uint64(1), again, "stored once")
}

// With the stream gone, a publish fails (after its retries) rather than waiting.
func TestPublishWithoutTheStreamFails(t *testing.T) {
	ctx := context.Background()
	b := oneNode(t)
	require.NoError(t, b.js.DeleteStream(ctx, Stream))
	_, err := b.Publish(ctx, []byte("x"))
	require.Error(t, err)
}
