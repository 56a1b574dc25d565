package relationships_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/stretchr/testify/require"

	"sdkpp/server/devseed"
	"sdkpp/server/internal/outbox/outboxtest"
	"sdkpp/server/relationships"
	"sdkpp/server/servertest/world"
	"sdkpp/server/store"
	"sdkpp/wire"
)

// staging is a world with an application and a Service whose Notifier stages as a cluster's
// gateway does (outboxtest.Stager).
func staging(t *testing.T) (*world.World, wire.DevApplication, *relationships.Service, *outboxtest.Stager) {
	w := world.New(t)
	app := w.App(devseed.AppSpec{Name: "Game"})
	st := &outboxtest.Stager{}
	svc := &relationships.Service{Store: w.Store, Clock: w.Clock, Logger: w.Log, Notifier: struct {
		relationships.Notifier // nil: not called, the events are published from the stage
		*outboxtest.Stager
	}{nil, st}}
	return w, app, svc, st
}

// A relationship change's events are staged in its transaction, each user's under that user's
// order lock key, and published after its commit, in their order; a change whose events cannot
// be staged fails whole: no relationship, no dispatch.
func TestRelationshipEventsAreStagedWithTheirChange(t *testing.T) {
	w, app, svc, st := staging(t)
	mux := http.NewServeMux()
	svc.Register(mux)
	ann, bob, cat := w.User("ann"), w.User("bob"), w.User("cat")
	request := func(from, to uint64) int {
		req := httptest.NewRequest(http.MethodPut, fmt.Sprintf("/users/@me/game-relationships/%d", to), nil)
		req.Header.Set("Authorization", w.Token(from, app, world.SocialScopes()))
		rec := httptest.NewRecorder()
		mux.ServeHTTP(rec, req)
		return rec.Code
	}

	require.Equal(t, http.StatusNoContent, request(ann, bob))
	pending := []string{"GAME_RELATIONSHIP_ADD"}
	staged := func(user uint64) []string { return outboxtest.Staged(t, w.Store, fmt.Sprint("rel:", user)) }
	require.Equal(t, pending, staged(ann), "each user's events under that user's key")
	require.Equal(t, pending, staged(bob))
	require.Equal(t, []string{fmt.Sprint("GAME_RELATIONSHIP_ADD ", []uint64{ann}, " app ", app.ID),
		fmt.Sprint("GAME_RELATIONSHIP_ADD ", []uint64{bob}, " app ", app.ID)}, st.Take(), "the requester's side, then the other's")

	st.Fail = errors.New("the outbox is unreachable")
	require.Equal(t, http.StatusInternalServerError, request(cat, bob))
	require.Equal(t, pending, staged(bob), "the failed change's rows rolled back")
	require.Empty(t, staged(cat))
	require.Empty(t, st.Take())
	_, err := w.Store.GetRelationship(context.Background(), cat, bob, uint64(app.ID))
	require.ErrorIs(t, err, store.ErrNotFound, "no request from cat")
}
