package bus_test

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"sdkpp/server/bus"
	"sdkpp/server/bus/natstest"
)

// Two nodes publishing at once: every subscriber reads the same messages in the same order, each
// once, the order in which the server acknowledged them; and a node can read a range again.
func TestEveryNodeReadsOneOrder(t *testing.T) {
	ctx := context.Background()
	ns := natstest.Start(t)
	nodes := make([]*bus.Bus, 3)
	for i := range nodes {
		b, err := bus.Connect(ctx, ns.URL(), bus.Options{Node: i + 1, Memory: true})
		require.NoError(t, err)
		t.Cleanup(b.Close)
		nodes[i] = b
	}
	type got struct {
		mu   sync.Mutex
		seqs []uint64
		data []string
		done chan struct{}
	}
	const n = 200
	reads := make([]*got, len(nodes))
	for i, b := range nodes {
		g := &got{done: make(chan struct{})}
		reads[i] = g
		require.NoError(t, b.Subscribe(ctx, 0, func(seq uint64, data []byte) {
			g.mu.Lock()
			defer g.mu.Unlock()
			g.seqs = append(g.seqs, seq)
			g.data = append(g.data, string(data))
			if len(g.seqs) == 2*n {
				close(g.done)
			}
		}))
	}
	acked := make([]map[uint64]string, 2)
	var wg sync.WaitGroup
	for p := range 2 {
		acked[p] = map[uint64]string{}
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range n {
				msg := fmt.Sprintf("p%d-%d", p, i)
				seq, err := nodes[p].Publish(ctx, []byte(msg))
				if !assert.NoError(t, err) {
					return
				}
				acked[p][seq] = msg
			}
		}()
	}
	wg.Wait()
	for i, g := range reads {
		select {
		case <-g.done:
		case <-time.After(20 * time.Second):
			t.Fatalf("node %d read %d of %d messages", i+1, len(g.seqs), 2*n)
		}
		g.mu.Lock()
		for k, seq := range g.seqs {
			want, ok := acked[0][seq]
			if !ok {
				want = acked[1][seq]
			}
			require.Equal(t, want, g.data[k], "node %d message %d", i+1, seq)
			if k > 0 {
				require.Greater(t, seq, g.seqs[k-1], "node %d: stream order", i+1)
			}
		}
		g.mu.Unlock()
	}
	first := reads[0].seqs[10]
	var again []string
	require.NoError(t, nodes[2].Read(ctx, first, first+4, func(_ uint64, data []byte) { again = append(again, string(data)) }))
	assert.Equal(t, reads[0].data[10:15], again)
	last, err := nodes[1].Last(ctx)
	require.NoError(t, err)
	assert.Equal(t, reads[0].seqs[2*n-1], last)
	require.NoError(t, nodes[0].Check(ctx))
}

// A URL's password never reaches what a log line shows.
func TestRedact(t *testing.T) {
	assert.Equal(t, "nats://REDACTED@127.0.0.1:4222", bus.Redact("nats://alice:s3cret@127.0.0.1:4222"))
	assert.Equal(t, "nats://127.0.0.1:4222", bus.Redact("nats://127.0.0.1:4222"))
	_, err := bus.Connect(context.Background(), "nats://alice:s3cret@127.0.0.1:1", bus.Options{})
	require.Error(t, err)
	assert.NotContains(t, err.Error(), "s3cret")
}

// A message published again with its id, from another node, is stored once: the second
// publish gets the first one's sequence number, and the stream holds one message.
func TestPublishIDStoresOnce(t *testing.T) {
	ctx := context.Background()
	a, b := twoNodes(t)
	first, err := a.PublishID(ctx, []byte("staged"), "outbox-1")
	require.NoError(t, err)
	again, err := b.PublishID(ctx, []byte("staged"), "outbox-1")
	require.NoError(t, err)
	assert.Equal(t, first, again)
	other, err := b.PublishID(ctx, []byte("staged"), "outbox-2")
	require.NoError(t, err)
	assert.Equal(t, first+1, other)
	last, err := a.Last(ctx)
	require.NoError(t, err)
	assert.Equal(t, other, last, "two messages stored")
}

// A claim is held by one node at a time: the second node is told who holds it; changes need
// the revision last seen; a released claim can be taken; an unrenewed claim lapses.
func TestClaimsHaveOneHolder(t *testing.T) {
	ctx := context.Background()
	ns := natstest.Start(t)
	claims := make([]*bus.Claims, 2)
	for i := range claims {
		b, err := bus.Connect(ctx, ns.URL(), bus.Options{Node: i + 1, Memory: true})
		require.NoError(t, err)
		t.Cleanup(b.Close)
		// Held 3 s: the claims and changes below, one round trip each, come before a's claim
		// lapses even on a loaded machine (with 1 s, a stall of a second lost it).
		claims[i], err = b.Claims(ctx, "test", 3*time.Second)
		require.NoError(t, err)
	}
	a, b := claims[0], claims[1]
	holder, rev, err := a.Claim(ctx, "42", "a")
	require.NoError(t, err)
	assert.Equal(t, "a", holder)
	holder, seen, err := b.Claim(ctx, "42", "b")
	require.NoError(t, err)
	assert.Equal(t, "a", holder, "held already")
	assert.Equal(t, rev, seen)

	renewed, err := a.Replace(ctx, "42", "a", rev)
	require.NoError(t, err)
	_, err = b.Replace(ctx, "42", "b", rev)
	require.Error(t, err, "a stale revision changes nothing")
	require.Error(t, b.Release(ctx, "42", rev), "nor releases")
	require.NoError(t, a.Release(ctx, "42", renewed))
	holder, _, err = b.Claim(ctx, "42", "b")
	require.NoError(t, err)
	assert.Equal(t, "b", holder, "released, then claimed by b")

	require.Eventually(t, func() bool {
		holder, _, err := a.Claim(ctx, "42", "a")
		return err == nil && holder == "a"
	}, 20*time.Second, 50*time.Millisecond, "b's claim lapses unrenewed")
}

// A stream whose messages have all expired has nothing to read up to: a node that starts then
// (make cluster again, past the retention) does not wait for messages no one can read.
func TestLastOfAnExpiredStream(t *testing.T) {
	ctx := context.Background()
	ns := natstest.Start(t)
	// Kept 1 s: Last, a round trip after Publish, must find the message before it expires, even
	// on a loaded machine (with 200 ms, a stall of that much lost it).
	b, err := bus.Connect(ctx, ns.URL(), bus.Options{Node: 1, Memory: true, Retention: time.Second})
	require.NoError(t, err)
	t.Cleanup(b.Close)
	seq, err := b.Publish(ctx, []byte("old"))
	require.NoError(t, err)
	last, err := b.Last(ctx)
	require.NoError(t, err)
	assert.Equal(t, seq, last)
	require.Eventually(t, func() bool {
		last, err := b.Last(ctx)
		return err == nil && last == 0
	}, 10*time.Second, 20*time.Millisecond, "the message expires")
}

// twoNodes connects two nodes to one NATS server's stream.
func twoNodes(t *testing.T) (a, b *bus.Bus) {
	ctx := context.Background()
	ns := natstest.Start(t)
	a, err := bus.Connect(ctx, ns.URL(), bus.Options{Node: 1, Memory: true})
	require.NoError(t, err)
	t.Cleanup(a.Close)
	b, err = bus.Connect(ctx, ns.URL(), bus.Options{Node: 2, Memory: true})
	require.NoError(t, err)
	t.Cleanup(b.Close)
	return a, b
}
