// Package webhook delivers the service's outgoing webhook events to an application's webhook URL.
//
// Events are queued in the store (table webhook_deliveries) in the same transaction as the change
// that causes them, so none is lost across a restart; a dispatcher goroutine sends the due ones and
// retries failures with exponential backoff timed by the service's clock.
//
// Signing scheme (the platform's): every request carries
//
//	X-Signature-Timestamp: <unix seconds of the attempt, decimal>
//	X-Signature-Ed25519:   <hex Ed25519 signature of timestamp || body>
//
// made with the application's webhook key; the application's public key (hex, in the dev
// credentials as "public_key") verifies it: ed25519.Verify(pub, []byte(ts+body), sig). The body is
// {"version": 1, "application_id": "<id>", "type": 1, "event": {"type": "<EVENT>",
// "timestamp": "<RFC 3339>", "data": {...}}}. A 2xx answer acknowledges the event; anything else,
// or no answer within the timeout, is retried after Base, 2·Base, 4·Base ... (at most Max apart) up
// to MaxAttempts attempts, after which the delivery is marked failed and logged.
package webhook

import (
	"bytes"
	"context"
	"crypto/ed25519"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"sdkpp/internal/clock"
	"sdkpp/server/snowflake"
	"sdkpp/server/store"
	"sdkpp/wire"
)

// Signature headers.
const (
	HeaderSignature = "X-Signature-Ed25519"
	HeaderTimestamp = "X-Signature-Timestamp"
)

// Enqueue queues event (with data as its "data") for app in st, due at once. It does nothing when
// the application has no webhook URL. Call it inside the transaction of the change it reports, then
// Kick the dispatcher after the commit.
func Enqueue(ctx context.Context, st store.Store, ids *snowflake.Generator, now time.Time, app *store.Application, event string, data any) error {
	d, err := Delivery(ids, now, app, event, data)
	if d == nil || err != nil {
		return err
	}
	return st.EnqueueWebhook(ctx, d)
}

// Delivery is the queue row of event (its data marshalled as the wire's event payload) for app's
// webhook, or nil when app has no webhook URL. Enqueue stores it at once; a caller that commits
// later stores it with its own writes.
func Delivery(ids *snowflake.Generator, now time.Time, app *store.Application, event string, data any) (*store.WebhookDelivery, error) {
	if app.WebhookURL == "" {
		return nil, nil
	}
	raw, err := json.Marshal(data)
	if err != nil {
		return nil, fmt.Errorf("webhook: %s data: %w", event, err)
	}
	body, err := json.Marshal(wire.WebhookEvent{
		Version: 1, ApplicationID: wire.Snowflake(app.ID), Type: wire.WebhookTypeEvent,
		Event: &wire.WebhookPayload{Type: event, Timestamp: now.UTC().Format(time.RFC3339Nano), Data: raw},
	})
	if err != nil {
		return nil, fmt.Errorf("webhook: %s body: %w", event, err)
	}
	return &store.WebhookDelivery{
		ID: ids.Next(), AppID: app.ID, EventType: event, Body: body, State: store.WebhookPending,
		NextAttemptAt: now, CreatedAt: now,
	}, nil
}

// Sign returns the hex signature of timestamp||body.
func Sign(key ed25519.PrivateKey, timestamp string, body []byte) string {
	msg := append([]byte(timestamp), body...)
	return hex.EncodeToString(ed25519.Sign(key, msg))
}

// Verify checks the signature headers of a received webhook request against the app's public key
// (hex). Receivers, such as tests, use it.
func Verify(publicKeyHex string, h http.Header, body []byte) bool {
	pub, err := hex.DecodeString(publicKeyHex)
	if err != nil || len(pub) != ed25519.PublicKeySize {
		return false
	}
	sig, err := hex.DecodeString(h.Get(HeaderSignature))
	if err != nil {
		return false
	}
	return ed25519.Verify(pub, append([]byte(h.Get(HeaderTimestamp)), body...), sig)
}

// PublicKeyHex returns the hex public key of a webhook key seed.
func PublicKeyHex(seed []byte) string {
	return hex.EncodeToString(ed25519.NewKeyFromSeed(seed).Public().(ed25519.PublicKey))
}

// Backoff says how retries are spaced.
type Backoff struct {
	Base        time.Duration // delay after the first failure; default 2 s
	Max         time.Duration // longest delay; default 10 min
	MaxAttempts int           // attempts before giving up; default 12
}

func (b Backoff) withDefaults() Backoff {
	if b.Base <= 0 {
		b.Base = 2 * time.Second
	}
	if b.Max <= 0 {
		b.Max = 10 * time.Minute
	}
	if b.MaxAttempts <= 0 {
		b.MaxAttempts = 12
	}
	return b
}

// Delay returns the wait after the attempts-th failed attempt.
func (b Backoff) Delay(attempts int) time.Duration {
	b = b.withDefaults()
	d := b.Base
	for i := 1; i < attempts && d < b.Max; i++ {
		d *= 2
	}
	return min(d, b.Max)
}

// Dispatcher sends queued deliveries. Start it once; Close stops its goroutine and waits for it.
type Dispatcher struct {
	Store   store.Store
	Clock   clock.Clock
	Logger  *slog.Logger
	Client  *http.Client // default: 10 s timeout, no redirects followed
	Backoff Backoff
	// ObserveJob, when set, is told of each cycle of the dispatcher (the deliveries due sent, the
	// next due time read) as job "webhook_dispatch", with its duration and the queue's error.
	ObserveJob func(job string, took time.Duration, err error)

	wake     chan struct{}
	cancel   context.CancelFunc
	done     chan struct{}
	startOne sync.Once

	delivered, retried, failed atomic.Uint64
}

// Stats counts the dispatcher's attempts since it was made.
type Stats struct {
	Delivered uint64 // deliveries the receiver accepted
	Retried   uint64 // attempts that failed and will be retried
	Failed    uint64 // deliveries given up
}

// Stats returns the dispatcher's counters.
func (d *Dispatcher) Stats() Stats {
	return Stats{Delivered: d.delivered.Load(), Retried: d.retried.Load(), Failed: d.failed.Load()}
}

// Start runs the dispatch loop in a goroutine owned by d.
func (d *Dispatcher) Start() {
	d.startOne.Do(func() {
		d.Backoff = d.Backoff.withDefaults()
		if d.Client == nil {
			d.Client = &http.Client{Timeout: 10 * time.Second,
				CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
		}
		d.wake = make(chan struct{}, 1)
		d.done = make(chan struct{})
		ctx, cancel := context.WithCancel(context.Background())
		d.cancel = cancel
		go d.loop(ctx)
	})
}

// Kick tells the dispatcher that new deliveries may be due.
func (d *Dispatcher) Kick() {
	if d.wake == nil {
		return
	}
	select {
	case d.wake <- struct{}{}:
	default:
	}
}

// Close stops the dispatcher; an attempt in flight is abandoned and retried after a restart.
func (d *Dispatcher) Close() {
	if d.cancel == nil {
		return
	}
	d.cancel()
	<-d.done
}

func (d *Dispatcher) loop(ctx context.Context) {
	defer close(d.done)
	for {
		start := time.Now() // the cycle's real duration, for ObserveJob
		err := d.sendDue(ctx)
		var due <-chan time.Time
		stop := func() {}
		next, ok, nerr := d.Store.NextWebhookDue(ctx)
		if nerr != nil && ctx.Err() == nil {
			d.Logger.Error("webhook queue unreadable", "err", nerr)
			next, ok = d.Clock.Now().Add(d.Backoff.Base), true
		}
		if ctx.Err() == nil && d.ObserveJob != nil {
			d.ObserveJob("webhook_dispatch", time.Since(start), errors.Join(err, nerr))
		}
		if ok {
			due, stop = clock.At(d.Clock, next)
		}
		select {
		case <-ctx.Done():
			stop()
			return
		case <-d.wake:
		case <-due:
		}
		stop()
	}
}

// sendDue sends every delivery due now; it returns the queue's error, if it could not be read.
func (d *Dispatcher) sendDue(ctx context.Context) error {
	for ctx.Err() == nil {
		due, err := d.Store.DueWebhooks(ctx, d.Clock.Now(), 16)
		if err != nil || len(due) == 0 {
			if err != nil && ctx.Err() == nil {
				d.Logger.Error("webhook queue unreadable", "err", err)
				return err
			}
			return nil
		}
		for i := range due {
			if ctx.Err() != nil {
				return nil
			}
			d.attempt(ctx, &due[i])
		}
	}
	return nil
}

func (d *Dispatcher) attempt(ctx context.Context, del *store.WebhookDelivery) {
	err := d.send(ctx, del)
	if ctx.Err() != nil {
		return // shutting down: the delivery stays due and is retried after a restart
	}
	now := d.Clock.Now()
	del.Attempts++
	log := d.Logger.With("delivery_id", del.ID, "application_id", del.AppID, "event", del.EventType, "attempt", del.Attempts)
	switch {
	case err == nil:
		del.State, del.DeliveredAt, del.LastError = store.WebhookDelivered, now, ""
		d.delivered.Add(1)
		log.Info("webhook delivered")
	case errors.Is(err, errNoURL) || del.Attempts >= d.Backoff.MaxAttempts:
		del.State, del.LastError = store.WebhookFailed, err.Error()
		d.failed.Add(1)
		log.Warn("webhook given up", "err", err)
	default:
		d.retried.Add(1)
		del.NextAttemptAt, del.LastError = now.Add(d.Backoff.Delay(del.Attempts)), err.Error()
		log.Info("webhook attempt failed; will retry", "err", err, "retry_at", del.NextAttemptAt)
	}
	if err := d.Store.UpdateWebhook(ctx, del); err != nil && ctx.Err() == nil {
		log.Error("webhook state not saved", "err", err)
	}
}

var errNoURL = errors.New("the application has no webhook URL")

func (d *Dispatcher) send(ctx context.Context, del *store.WebhookDelivery) error {
	app, err := d.Store.GetApplication(ctx, del.AppID)
	if err != nil {
		return fmt.Errorf("application: %w", err)
	}
	if app.WebhookURL == "" {
		return errNoURL
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, app.WebhookURL, bytes.NewReader(del.Body))
	if err != nil {
		return errNoURL
	}
	ts := strconv.FormatInt(d.Clock.Now().Unix(), 10)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("User-Agent", "sdkpp-webhooks/1")
	req.Header.Set(HeaderTimestamp, ts)
	req.Header.Set(HeaderSignature, Sign(ed25519.NewKeyFromSeed(app.WebhookKey), ts, del.Body))
	resp, err := d.Client.Do(req)
	if err != nil {
		return fmt.Errorf("post: %w", unwrapURLError(err))
	}
	defer resp.Body.Close()
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		return fmt.Errorf("receiver answered HTTP %d", resp.StatusCode)
	}
	return nil
}

// unwrapURLError drops the URL from a client error (it could carry a secret in its query).
func unwrapURLError(err error) error {
	var ue *url.Error
	if errors.As(err, &ue) {
		return ue.Err
	}
	return err
}
