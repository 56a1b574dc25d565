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
	"time"

	"sdkpp/server/clock"
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
	if !webhook.Verify(pub, h, body) {
		t.Fatal("signature does not verify")
	}
	if webhook.Verify(pub, h, []byte(`{"type":2}`)) {
		t.Fatal("tampered body verifies")
	}
	h.Set(webhook.HeaderTimestamp, "1700000001")
	if webhook.Verify(pub, h, body) {
		t.Fatal("tampered timestamp verifies")
	}
}

func TestBackoffGrowsExponentially(t *testing.T) {
	b := webhook.Backoff{Base: time.Second, Max: 10 * time.Second}
	want := []time.Duration{time.Second, 2 * time.Second, 4 * time.Second, 8 * time.Second, 10 * time.Second, 10 * time.Second}
	for i, w := range want {
		if got := b.Delay(i + 1); got != w {
			t.Errorf("Delay(%d) = %v, want %v", i+1, got, w)
		}
	}
}

// TestRetriesFollowTheClock checks that a failed delivery is retried only when the injected clock
// reaches the backoff, and given up after MaxAttempts (rule WH-1's delivery guarantee).
func TestRetriesFollowTheClock(t *testing.T) {
	ctx := context.Background()
	st, err := store.OpenSQLite(ctx, "")
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	var hits atomic.Int32
	var ok atomic.Bool
	recv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		if ok.Load() {
			w.WriteHeader(http.StatusNoContent)
			return
		}
		w.WriteHeader(http.StatusInternalServerError)
	}))
	defer recv.Close()
	clk := clock.NewFake(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	ids := snowflake.New(clk, 0)
	seed := make([]byte, ed25519.SeedSize)
	app := &store.Application{ID: 1, Name: "a", ClientSecretHash: []byte{1}, BotTokenHash: []byte{2}, BotUserID: 2,
		WebhookKey: seed, WebhookURL: recv.URL}
	if err := st.CreateApplication(ctx, app); err != nil {
		t.Fatal(err)
	}
	d := &webhook.Dispatcher{Store: st, Clock: clk, Logger: slog.New(slog.NewTextHandler(io.Discard, nil)),
		Backoff: webhook.Backoff{Base: time.Minute, Max: time.Hour, MaxAttempts: 3}}
	d.Start()
	defer d.Close()
	if err := webhook.Enqueue(ctx, st, ids, clk.Now(), app, wire.EventApplicationDeauthorized, wire.DeauthorizedData{}); err != nil {
		t.Fatal(err)
	}
	d.Kick()
	waitFor(t, func() bool { return hits.Load() == 1 })
	time.Sleep(50 * time.Millisecond)
	if hits.Load() != 1 {
		t.Fatal("retried before the clock moved")
	}
	clk.Advance(time.Minute) // first retry after Base
	waitFor(t, func() bool { return hits.Load() == 2 })
	clk.Advance(time.Minute) // the second retry waits 2 minutes
	time.Sleep(50 * time.Millisecond)
	if hits.Load() != 2 {
		t.Fatal("second retry came before 2·Base")
	}
	clk.Advance(time.Minute)
	waitFor(t, func() bool { return hits.Load() == 3 })
	// Three attempts were the maximum: the delivery is given up.
	waitFor(t, func() bool {
		_, pending, _ := st.NextWebhookDue(ctx)
		return !pending
	})
	ok.Store(true)
	clk.Advance(24 * time.Hour)
	time.Sleep(50 * time.Millisecond)
	if hits.Load() != 3 {
		t.Fatal("a given-up delivery was sent again")
	}
	// A new event is delivered at once and marked delivered.
	if err := webhook.Enqueue(ctx, st, ids, clk.Now(), app, wire.EventApplicationDeauthorized, wire.DeauthorizedData{}); err != nil {
		t.Fatal(err)
	}
	d.Kick()
	waitFor(t, func() bool { return hits.Load() == 4 })
	waitFor(t, func() bool {
		_, pending, _ := st.NextWebhookDue(ctx)
		return !pending
	})
}

func waitFor(t *testing.T, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatal("condition not met within 5 s")
		}
		time.Sleep(5 * time.Millisecond)
	}
}
