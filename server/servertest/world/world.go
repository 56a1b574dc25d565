// Package world builds the store-backed test world that handler tests of the service share: an
// in-memory SQLite store, a frozen clock, an id generator, applications, and players holding
// Bearer tokens, without starting a server.
package world

import (
	"context"
	"io"
	"log/slog"
	"os"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"sdkpp/internal/clock"
	"sdkpp/server/accounts"
	"sdkpp/server/devseed"
	"sdkpp/server/scopes"
	"sdkpp/server/servertest"
	"sdkpp/server/snowflake"
	"sdkpp/server/store"
	"sdkpp/server/token"
	"sdkpp/wire"
)

// Start is the frozen clock's time in a new World.
var Start = time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)

// World is the shared state of a handler test.
type World struct {
	T        testing.TB
	Store    *store.DB
	Clock    *clock.Fake
	IDs      *snowflake.Generator
	Seed     *devseed.Seeder
	Accounts *accounts.Service
	Log      *slog.Logger // discards everything

	webhookReads int // QueuedWebhooks' calls
}

// New opens a World: its store is a fresh database of the tests' PostgreSQL when
// SDKPP_TEST_STORE is "postgres" (servertest.EnvStore), as the service's tests run there, and
// an in-memory SQLite store otherwise. The test's cleanup closes it.
func New(t testing.TB) *World {
	t.Helper()
	var st *store.DB
	var err error
	if os.Getenv(servertest.EnvStore) == "postgres" {
		st, err = store.OpenPostgres(context.Background(), servertest.PostgresDatabase(t), store.PostgresOptions{})
	} else {
		st, err = store.OpenSQLite(context.Background(), "")
	}
	require.NoError(t, err)
	t.Cleanup(func() { st.Close() })
	w := &World{T: t, Store: st, Clock: clock.NewFake(Start), Log: slog.New(slog.NewTextHandler(io.Discard, nil))}
	w.IDs = snowflake.New(w.Clock, 0)
	w.Seed = &devseed.Seeder{Store: st, IDs: w.IDs, Now: w.Clock.Now}
	w.Accounts = &accounts.Service{Store: st, Clock: w.Clock, IDs: w.IDs, Logger: w.Log}
	return w
}

// App creates an application.
func (w *World) App(spec devseed.AppSpec) wire.DevApplication {
	w.T.Helper()
	app, err := w.Seed.CreateApplication(context.Background(), spec)
	require.NoError(w.T, err)
	return app
}

// SocialScopes are the scopes a game's player grants with sdk.social_layer.
func SocialScopes() []string { return scopes.Expand([]string{scopes.OpenID, scopes.SocialLayer}) }

// User creates a user (without a password, so it is quick) and returns its id.
func (w *World) User(name string) uint64 {
	w.T.Helper()
	u := &store.User{ID: w.IDs.Next(), Username: name, GlobalName: name, CreatedAt: w.Clock.Now()}
	require.NoError(w.T, w.Store.CreateUser(context.Background(), u))
	return u.ID
}

// Token authorizes app for the user with the granted scopes and returns "Bearer <token>", valid
// for a year of the World's clock.
func (w *World) Token(userID uint64, app wire.DevApplication, granted []string) string {
	w.T.Helper()
	ctx := context.Background()
	a, err := w.Accounts.Authorize(ctx, w.Store, uint64(app.ID), userID, granted, 1)
	require.NoError(w.T, err)
	tok, err := token.Issue(ctx, w.Store, w.IDs, w.Clock.Now(), a, token.Options{ExpiresAt: w.Clock.Now().Add(365 * 24 * time.Hour)})
	require.NoError(w.T, err)
	return "Bearer " + tok.Access
}

// QueuedWebhooks returns the pending webhook deliveries of event, oldest first. It reads them
// with DueWebhooks, which on PostgreSQL claims what it returns until store.DefaultClaimLease
// later: each call reads as of a year after the one before, past every earlier call's claims, so
// that every call sees every pending delivery on either store.
func (w *World) QueuedWebhooks(event string) []store.WebhookDelivery {
	w.T.Helper()
	w.webhookReads++
	at := w.Clock.Now().Add(time.Duration(w.webhookReads) * 366 * 24 * time.Hour)
	due, err := w.Store.DueWebhooks(context.Background(), at, 100000)
	require.NoError(w.T, err)
	var out []store.WebhookDelivery
	for _, d := range due {
		if d.EventType == event {
			out = append(out, d)
		}
	}
	return out
}
