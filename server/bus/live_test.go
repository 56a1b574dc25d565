package bus

import (
	"context"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"sdkpp/server/bus/natstest"
)

// handled records what a reader handed its handler.
type handled struct {
	mu   sync.Mutex
	seqs []uint64
	data []string
}

func (h *handled) handle(seq uint64, data []byte) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.seqs = append(h.seqs, seq)
	h.data = append(h.data, string(data))
}

func (h *handled) got() ([]uint64, []string) {
	h.mu.Lock()
	defer h.mu.Unlock()
	return append([]uint64(nil), h.seqs...), append([]string(nil), h.data...)
}

// liveMsg is the live subject's copy of message seq, stored after message prev.
func liveMsg(seq, prev uint64, data string) *nats.Msg {
	m := nats.NewMsg(LiveSubject)
	m.Header.Set(hdrSequence, strconv.FormatUint(seq, 10))
	m.Header.Set(hdrLastSequence, strconv.FormatUint(prev, 10))
	m.Data = []byte(data)
	return m
}

// A reader whose live subject skipped messages reads them from the stream before the one that
// told of the gap; one it has already is not handed again; and what the live subject never
// brought at the end is read once the reader finds it read nothing new (catchUp).
func TestReaderReadsWhatTheLiveSubjectMissed(t *testing.T) {
	ctx := context.Background()
	ns := natstest.Start(t)
	b, err := Connect(ctx, ns.URL(), Options{Node: 1, Memory: true})
	require.NoError(t, err)
	t.Cleanup(b.Close)
	for i := 1; i <= 5; i++ {
		seq, err := b.Publish(ctx, []byte("m"+strconv.Itoa(i)))
		require.NoError(t, err)
		require.Equal(t, uint64(i), seq)
	}
	var h handled
	r := newReader(b, 1, h.handle) // has message 1
	defer r.stop()

	r.live(liveMsg(5, 4, "m5"))
	r.live(liveMsg(4, 3, "m4"))
	seqs, data := h.got()
	assert.Equal(t, []uint64{2, 3, 4, 5}, seqs, "2 to 4 read from the stream, then 5, and 4 once")
	assert.Equal(t, []string{"m2", "m3", "m4", "m5"}, data)

	for i := 6; i <= 7; i++ { // never reach the live subject
		_, err := b.Publish(ctx, []byte("m"+strconv.Itoa(i)))
		require.NoError(t, err)
	}
	r.catchUp()
	r.catchUp()
	seqs, data = h.got()
	assert.Equal(t, []uint64{2, 3, 4, 5, 6, 7}, seqs)
	assert.Equal(t, "m7", data[5])
}

// A reader that missed messages the stream no longer holds skips them (Subscribe's contract).
func TestReaderSkipsWhatExpired(t *testing.T) {
	ctx := context.Background()
	ns := natstest.Start(t)
	b, err := Connect(ctx, ns.URL(), Options{Node: 1, Memory: true, Retention: 200 * time.Millisecond})
	require.NoError(t, err)
	t.Cleanup(b.Close)
	for range 3 {
		_, err := b.Publish(ctx, []byte("old"))
		require.NoError(t, err)
	}
	require.Eventually(t, func() bool {
		last, err := b.Last(ctx)
		return err == nil && last == 0
	}, 10*time.Second, 20*time.Millisecond, "the messages expire")
	var h handled
	r := newReader(b, 0, h.handle)
	defer r.stop()
	r.live(liveMsg(3, 2, "old")) // told of a gap the stream cannot fill
	seq, err := b.Publish(ctx, []byte("new"))
	require.NoError(t, err)
	r.catchUp()
	seqs, data := h.got()
	assert.Equal(t, []uint64{3, seq}, seqs, "nothing of what expired but what the live subject brought")
	assert.Equal(t, []string{"old", "new"}, data)
}

// Through a restart of the NATS server, a subscribed node reads every message once, in order:
// what was published while it was away is read from the stream.
func TestSubscriberOutlivesARestartOfNATS(t *testing.T) {
	ctx := context.Background()
	ns := natstest.Start(t)
	pub, err := Connect(ctx, ns.URL(), Options{Node: 1})
	require.NoError(t, err)
	t.Cleanup(pub.Close)
	sub, err := Connect(ctx, ns.URL(), Options{Node: 2})
	require.NoError(t, err)
	t.Cleanup(sub.Close)
	var h handled
	require.NoError(t, sub.Subscribe(ctx, 0, h.handle))
	var want []string
	publish := func(n int) {
		for range n {
			msg := "m" + strconv.Itoa(len(want)+1)
			require.Eventually(t, func() bool {
				_, err := pub.Publish(ctx, []byte(msg))
				return err == nil
			}, 20*time.Second, 50*time.Millisecond)
			want = append(want, msg)
		}
	}
	publish(10)
	ns.Restart(t)
	publish(10)
	require.Eventually(t, func() bool {
		_, data := h.got()
		return len(data) >= len(want)
	}, 20*time.Second, 20*time.Millisecond)
	seqs, data := h.got()
	assert.Equal(t, want, data)
	for i := 1; i < len(seqs); i++ {
		assert.Greater(t, seqs[i], seqs[i-1])
	}
}

// A stream made by a build before the live subject gains it when a node connects: its readers
// read the messages published after live.
func TestAnOlderStreamGainsItsLiveCopy(t *testing.T) {
	ctx := context.Background()
	ns := natstest.Start(t)
	nc, err := nats.Connect(ns.URL())
	require.NoError(t, err)
	defer nc.Close()
	js, err := jetstream.New(nc)
	require.NoError(t, err)
	_, err = js.CreateStream(ctx, jetstream.StreamConfig{Name: Stream, Subjects: []string{Subject},
		Storage: jetstream.MemoryStorage, MaxAge: DefaultRetention, Duplicates: time.Minute})
	require.NoError(t, err)
	_, err = js.Publish(ctx, Subject, []byte("before"))
	require.NoError(t, err)

	b, err := Connect(ctx, ns.URL(), Options{Node: 1, Memory: true})
	require.NoError(t, err)
	t.Cleanup(b.Close)
	var h handled
	require.NoError(t, b.Subscribe(ctx, 0, h.handle))
	live := make(chan uint64, 1)
	_, err = nc.Subscribe(LiveSubject, func(m *nats.Msg) {
		seq, _ := strconv.ParseUint(m.Header.Get(hdrSequence), 10, 64)
		live <- seq
	})
	require.NoError(t, err)
	require.NoError(t, nc.Flush())
	seq, err := b.Publish(ctx, []byte("after"))
	require.NoError(t, err)
	select {
	case got := <-live:
		assert.Equal(t, seq, got, "republished")
	case <-time.After(10 * time.Second):
		t.Fatal("the stream does not republish")
	}
	require.Eventually(t, func() bool {
		_, data := h.got()
		return len(data) == 2
	}, 10*time.Second, 10*time.Millisecond)
	_, data := h.got()
	assert.Equal(t, []string{"before", "after"}, data)
}
