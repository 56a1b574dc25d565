package webhook_test

import (
	"context"
	"crypto/ed25519"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"sdkpp/internal/clock"
	"sdkpp/server/snowflake"
	"sdkpp/server/store"
	"sdkpp/server/webhook"
	"sdkpp/wire"
)

func TestSignAndVerify(t *testing.T) {
	seed := make([]byte, ed25519.SeedSize)
	seed[0] = 7
	key := ed25519.NewKeyFromSeed(seed)
	body := []byte(`{"type":1}`)
	h := http.Header{}
	h.Set(webhook.HeaderTimestamp, "1700000000")
	h.Set(webhook.HeaderSignature, webhook.Sign(key, "1700000000", body))
	pub := webhook.PublicKeyHex(seed)
	require.True(t, webhook.Verify(pub, h, body), "signature does not verify")
	require.False(t, webhook.Verify(pub, h, []byte(`{"type":2}`)), "tampered body verifies")
	h.Set(webhook.HeaderTimestamp, "1700000001")
	require.False(t, webhook.Verify(pub, h, body), "tampered timestamp verifies")
}

func TestBackoffGrowsExponentially(t *testing.T) {
	b := webhook.Backoff{Base: time.Second, Max: 10 * time.Second}
	want := []time.Duration{time.Second, 2 * time.Second, 4 * time.Second, 8 * time.Second, 10 * time.Second, 10 * time.Second}
	for i, w := range want {
		got := b.Delay(i + 1)
		assert.Equal(t, w, got, "Delay(%d) = %v, want %v", i+1, got, w)
	}
}

// roundTripper answers requests with an in-process handler, so that the dispatcher's attempts
// need no socket and a synctest bubble sees the dispatcher idle once it has handled them.
type roundTripper struct{ h http.Handler }

func (rt roundTripper) RoundTrip(req *http.Request) (*http.Response, error) {
	w := httptest.NewRecorder()
	rt.h.ServeHTTP(w, req)
	return w.Result(), nil
}

// TestRetriesFollowTheClock checks that a failed delivery is retried only when the injected clock
// reaches the backoff, and given up after MaxAttempts (rule WH-1's delivery guarantee). It runs in
// a synctest bubble: synctest.Wait returns once the dispatcher has done all it can and waits for
// the clock, so "nothing was sent" is checked at that point instead of after a sleep.
func TestRetriesFollowTheClock(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx := context.Background()
		st, err := store.OpenSQLite(ctx, "")
		require.NoError(t, err)
		defer st.Close()
		var hits atomic.Int32
		var ok atomic.Bool
		recv := roundTripper{http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			hits.Add(1)
			if ok.Load() {
				w.WriteHeader(http.StatusNoContent)
				return
			}
			w.WriteHeader(http.StatusInternalServerError)
		})}
		clk := clock.NewFake(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
		ids := snowflake.New(clk, 0)
		seed := make([]byte, ed25519.SeedSize)
		app := &store.Application{ID: 1, Name: "a", ClientSecretHash: []byte{1}, BotTokenHash: []byte{2}, BotUserID: 2,
			WebhookKey: seed, WebhookURL: "http://receiver.test/webhook"}
		require.NoError(t, st.CreateApplication(ctx, app))
		d := &webhook.Dispatcher{Store: st, Clock: clk, Logger: slog.New(slog.NewTextHandler(io.Discard, nil)),
			Client:  &http.Client{Transport: recv},
			Backoff: webhook.Backoff{Base: time.Minute, Max: time.Hour, MaxAttempts: 3}}
		d.Start()
		defer d.Close()
		pending := func() bool {
			_, pending, err := st.NextWebhookDue(ctx)
			require.NoError(t, err)
			return pending
		}
		require.NoError(t, webhook.Enqueue(ctx, st, ids, clk.Now(), app, wire.EventApplicationDeauthorized, wire.DeauthorizedData{}))
		d.Kick()
		synctest.Wait()
		require.Equal(t, int32(1), hits.Load(), "the first attempt, and no retry before the clock moved")
		clk.Advance(time.Minute) // first retry after Base
		synctest.Wait()
		require.Equal(t, int32(2), hits.Load(), "the first retry, after Base")
		clk.Advance(time.Minute) // the second retry waits 2 minutes
		synctest.Wait()
		require.Equal(t, int32(2), hits.Load(), "second retry came before 2·Base")
		clk.Advance(time.Minute)
		synctest.Wait()
		require.Equal(t, int32(3), hits.Load(), "the second retry, after 2·Base")
		// Three attempts were the maximum: the delivery is given up.
		assert.False(t, pending(), "a delivery is still pending after MaxAttempts")
		ok.Store(true)
		clk.Advance(24 * time.Hour)
		synctest.Wait()
		require.Equal(t, int32(3), hits.Load(), "a given-up delivery was sent again")
		// A new event is delivered at once and marked delivered.
		require.NoError(t, webhook.Enqueue(ctx, st, ids, clk.Now(), app, wire.EventApplicationDeauthorized, wire.DeauthorizedData{}))
		d.Kick()
		synctest.Wait()
		require.Equal(t, int32(4), hits.Load(), "the new event was not sent")
		assert.False(t, pending(), "the delivered event is still pending")
	})
}
