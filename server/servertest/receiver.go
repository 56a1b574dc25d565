package servertest

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"sdkpp/server/webhook"
	"sdkpp/wire"
)

// Received is one webhook request a Receiver got.
type Received struct {
	Event       wire.WebhookEvent
	User        *wire.User // the user of APPLICATION_DEAUTHORIZED
	SignatureOK bool       // the Ed25519 signature verified with the app's public key
	Body        []byte
}

// Receiver is a webhook endpoint for tests: it verifies each request's signature with the
// application's public key and queues what it got.
type Receiver struct {
	URL       string
	publicKey string
	srv       *httptest.Server
	events    chan Received
	failing   atomic.Bool
	mu        sync.Mutex
	count     int
}

// NewReceiver starts a receiver for the application whose hex public key is given; it stops when
// the test ends.
func NewReceiver(t testing.TB, publicKeyHex string) *Receiver {
	r := &Receiver{publicKey: publicKeyHex, events: make(chan Received, 100)}
	r.srv = httptest.NewServer(http.HandlerFunc(r.serve))
	r.URL = r.srv.URL + "/webhook"
	t.Cleanup(r.srv.Close)
	return r
}

func (r *Receiver) serve(w http.ResponseWriter, req *http.Request) {
	body, _ := io.ReadAll(req.Body)
	if r.failing.Load() {
		http.Error(w, "failing on purpose", http.StatusServiceUnavailable)
		return
	}
	got := Received{Body: body, SignatureOK: webhook.Verify(r.publicKey, req.Header, body)}
	if !got.SignatureOK {
		http.Error(w, "bad signature", http.StatusUnauthorized)
	}
	if json.Unmarshal(body, &got.Event) == nil && got.Event.Event != nil &&
		got.Event.Event.Type == wire.EventApplicationDeauthorized {
		var d wire.DeauthorizedData
		if json.Unmarshal(got.Event.Event.Data, &d) == nil {
			got.User = &d.User
		}
	}
	r.mu.Lock()
	r.count++
	r.mu.Unlock()
	r.events <- got
	if got.SignatureOK {
		w.WriteHeader(http.StatusNoContent)
	}
}

// SetFailing makes the receiver answer 503 (true) or accept (false).
func (r *Receiver) SetFailing(f bool) { r.failing.Store(f) }

// Count returns how many requests were accepted or refused for their signature so far.
func (r *Receiver) Count() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.count
}

// Next waits up to timeout for the next event.
func (r *Receiver) Next(t testing.TB, timeout time.Duration) Received {
	t.Helper()
	select {
	case got := <-r.events:
		return got
	case <-time.After(timeout):
		require.FailNow(t, "servertest: no webhook", "within %v", timeout)
		return Received{}
	}
}
