// Package servertest starts the platform service in process for tests: a dev server on
// 127.0.0.1:0 with in-memory storage (unless a data directory is given) and a movable clock.
//
//	env := servertest.Start(t)
//	app, alice := env.App, env.User("alice")
//	location := env.Approve(t, authorizeURL, alice.Username, alice.Password)  // "<redirect_uri>?code=...&state=..."
//	env.Clock.Advance(11 * time.Minute)                                     // codes expire
//
// The server is closed when the test ends. The default clock runs in real time and can be jumped
// (Clock.Advance); WithFrozenClock stands still, so that webhook retries and device-flow intervals
// then move only when the test advances it. Webhook retries start 50 ms apart in tests.
//
// With SDKPP_TEST_STORE=postgres every server runs on a fresh PostgreSQL database of the server
// at SDKPP_TEST_POSTGRES (package pgtest) instead of SQLite; Restart keeps its data.
package servertest

import (
	"context"
	"io"
	"log/slog"
	"net/http"
	"os"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"sdkpp/internal/clock"
	"sdkpp/server"
	"sdkpp/server/browser"
	"sdkpp/server/devseed"
	"sdkpp/server/store"
	"sdkpp/server/store/pgtest"
	"sdkpp/server/webhook"
	"sdkpp/wire"
)

// Env is a running test server.
type Env struct {
	Server *server.Server
	URL    string // web base, e.g. http://127.0.0.1:41234
	APIURL string // URL + "/api/v10"
	// Clock is the server's clock: real time plus an offset by default, frozen with WithFrozenClock.
	Clock clock.Controllable
	Creds wire.DevCredentials
	// App is the main dev application (public client, not approved for identify.premium), ChildApp
	// its child (same publisher, rule AU-4), PremiumApp an application approved for
	// identify.premium.
	App, ChildApp, PremiumApp wire.DevApplication

	cfg server.Config
}

type options struct {
	cfg server.Config
}

// Option changes the test server's configuration.
type Option func(*options)

// WithFrozenClock makes the clock stand at t until the test moves it.
func WithFrozenClock(t time.Time) Option {
	return func(o *options) { o.cfg.Clock = clock.NewFake(t) }
}

// WithClock uses c.
func WithClock(c clock.Controllable) Option { return func(o *options) { o.cfg.Clock = c } }

// WithDataDir stores data in dir (so that a restart keeps it).
func WithDataDir(dir string) Option { return func(o *options) { o.cfg.DataDir = dir } }

// WithLogger sends the server's logs to l (default: discarded).
func WithLogger(l *slog.Logger) Option { return func(o *options) { o.cfg.Logger = l } }

// WithWebhookURL sets the main application's webhook URL.
func WithWebhookURL(u string) Option { return func(o *options) { o.cfg.WebhookURL = u } }

// WithWebhookBackoff sets the webhook retry spacing.
func WithWebhookBackoff(b webhook.Backoff) Option {
	return func(o *options) { o.cfg.WebhookBackoff = b }
}

// WithOIDCTestIssuer admits loopback OIDC issuers and fetches them with client (for example
// httptest.NewTLSServer's Client()).
func WithOIDCTestIssuer(client *http.Client) Option {
	return func(o *options) {
		o.cfg.OIDCAllowLoopbackForTests = true
		o.cfg.OIDCHTTPClient = client
	}
}

// WithConfig changes the configuration directly.
func WithConfig(change func(*server.Config)) Option { return func(o *options) { change(&o.cfg) } }

// Start starts a dev server; it is closed when the test ends.
func Start(t testing.TB, opts ...Option) *Env {
	t.Helper()
	o := options{cfg: server.Config{Addr: "127.0.0.1:0", Dev: true,
		// Bots reconnect at once in most tests; those of max_concurrency set it (WithConfig).
		IdentifyWindow: -1,
		Logger:         slog.New(slog.NewTextHandler(io.Discard, nil)),
		WebhookBackoff: webhook.Backoff{Base: 50 * time.Millisecond, Max: time.Second, MaxAttempts: 20}}}
	for _, opt := range opts {
		opt(&o)
	}
	if o.cfg.Clock == nil {
		c := clock.NewOffset(0)
		t.Cleanup(c.Stop)
		o.cfg.Clock = c
	}
	if o.cfg.Store == "" && o.cfg.DataDir == "" && os.Getenv(EnvStore) == "postgres" {
		o.cfg.Store = postgresStore(t)
	}
	return start(t, o.cfg)
}

// EnvStore names the environment variable that chooses the test servers' store: "postgres", or
// SQLite when unset.
const EnvStore = "SDKPP_TEST_STORE"

// postgresStore returns the URL of a fresh migrated database for a test server. The PostgreSQL
// server must be given (SDKPP_TEST_POSTGRES): one that pgtest started would outlive the test
// binary, which has no TestMain here to stop it.
func postgresStore(t testing.TB) string {
	t.Helper()
	if os.Getenv(pgtest.EnvURL) == "" {
		t.Fatalf("servertest: %s=postgres needs %s (an admin URL)", EnvStore, pgtest.EnvURL)
	}
	return PostgresDatabase(t)
}

// PostgresDatabase returns the URL of a fresh migrated database of the tests' PostgreSQL
// (package pgtest), dropped when t ends.
func PostgresDatabase(t testing.TB) string {
	t.Helper()
	return pgtest.Database(t, "sdkpp_schema_"+store.PostgresSchemaID(), func(u string) error {
		s, err := store.OpenPostgres(context.Background(), u, store.PostgresOptions{})
		if err != nil {
			return err
		}
		return s.Close()
	})
}

func start(t testing.TB, cfg server.Config) *Env {
	t.Helper()
	srv, err := server.New(cfg)
	require.NoError(t, err, "servertest")
	if err := srv.Start(); err != nil {
		srv.Close()
		require.NoError(t, err, "servertest: start")
	}
	t.Cleanup(func() {
		assert.NoError(t, srv.Close(), "servertest: close")
	})
	ctrl, _ := cfg.Clock.(clock.Controllable)
	e := &Env{Server: srv, URL: srv.URL(), APIURL: srv.APIURL(), Clock: ctrl, Creds: srv.DevCredentials(), cfg: cfg}
	if cfg.Dev {
		e.App = *e.Creds.App(devseed.AppMain)
		e.ChildApp = *e.Creds.App(devseed.AppChild)
		e.PremiumApp = *e.Creds.App(devseed.AppPremium)
	}
	return e
}

// Restart closes the server and starts a new one with the same configuration (same data directory
// and clock; a new port). Without WithDataDir the data is lost.
func (e *Env) Restart(t testing.TB) *Env {
	t.Helper()
	require.NoError(t, e.Server.Close(), "servertest: close")
	return start(t, e.cfg)
}

// SettleWebhooks waits until no webhook delivery is pending: each queued delivery was delivered
// or given up. The service queues a delivery in the same transaction as the change that causes
// it, so after SettleWebhooks a Receiver's Count is final for everything done before the call,
// and a test proves that a request sent no webhook by comparing counts, without waiting for one.
// On a frozen clock a delivery that waits for its retry stays pending until the clock is moved.
func (e *Env) SettleWebhooks(t testing.TB) {
	t.Helper()
	require.Eventually(t, func() bool {
		_, pending, err := e.Server.Store().NextWebhookDue(context.Background())
		return err == nil && !pending
	}, 10*time.Second, 5*time.Millisecond, "servertest: webhook deliveries still pending")
}

// User returns the seeded user (alice, bob or carol).
func (e *Env) User(username string) wire.DevUser {
	u := e.Creds.User(username)
	if u == nil {
		panic("servertest: no dev user " + username)
	}
	return *u
}

func (e *Env) authorize(t testing.TB, authorizeURL string, c browser.Choice) string {
	t.Helper()
	loc, err := browser.New().Authorize(context.Background(), authorizeURL, c)
	require.NoError(t, err, "servertest")
	return loc
}

// Approve drives the consent page like a browser: it loads authorizeURL, logs in as username and
// presses Approve (granting every scope checked by default), and returns the Location of the
// redirect without following it.
func (e *Env) Approve(t testing.TB, authorizeURL, username, password string) string {
	t.Helper()
	return e.authorize(t, authorizeURL, browser.Choice{Username: username, Password: password})
}

// ApproveScopes is Approve ticking only the given additional scopes (rule SC-4).
func (e *Env) ApproveScopes(t testing.TB, authorizeURL, username, password string, grant []string) string {
	t.Helper()
	if grant == nil {
		grant = []string{}
	}
	return e.authorize(t, authorizeURL, browser.Choice{Username: username, Password: password, GrantScopes: grant})
}

// Deny loads the consent page and presses Deny; it returns the redirect Location
// (redirect_uri?error=access_denied&...).
func (e *Env) Deny(t testing.TB, authorizeURL string) string {
	t.Helper()
	return e.authorize(t, authorizeURL, browser.Choice{Deny: true})
}

// ApproveDevice answers the device verification page for userCode as username.
func (e *Env) ApproveDevice(t testing.TB, userCode, username, password string) {
	t.Helper()
	_, err := browser.New().Activate(context.Background(), e.URL, userCode, browser.Choice{Username: username, Password: password})
	require.NoError(t, err, "servertest")
}

// JoinInvite answers a guild invite page (<web base>/invite/<code>) in a new browser as
// username and returns the final page's message ("You joined <guild>").
func (e *Env) JoinInvite(t testing.TB, inviteURL, username, password string) string {
	t.Helper()
	msg, err := browser.New().JoinInvite(context.Background(), inviteURL, browser.Choice{Username: username, Password: password})
	require.NoError(t, err, "servertest")
	return msg
}

// DenyDevice denies the device request of userCode.
func (e *Env) DenyDevice(t testing.TB, userCode string) {
	t.Helper()
	_, err := browser.New().Activate(context.Background(), e.URL, userCode, browser.Choice{Deny: true})
	require.NoError(t, err, "servertest")
}
