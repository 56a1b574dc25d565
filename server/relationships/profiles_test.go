package relationships_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"

	"sdkpp/server/internal/outbox/outboxtest"
	"sdkpp/server/store"
	"sdkpp/server/users"
)

// A profile change's updates are staged in its transaction, each under its subject's order lock
// key, and published after the commit; a change that turns out to touch a user whose key was
// not taken is rolled back and run again holding it, and only the last run is committed.
func TestProfileUpdatesAreStagedWithTheirChange(t *testing.T) {
	w, app, svc, st := staging(t)
	ann, bob := w.User("ann"), w.User("bob")
	ctx := context.Background()
	runs := 0
	rename := func(s store.Store) (users.Changed, error) {
		runs++
		u, err := s.GetUser(ctx, ann)
		if err != nil {
			return nil, err
		}
		u.GlobalName = fmt.Sprint("Ann ", runs)
		changed := users.Changed{}
		changed.Note(uint64(app.ID), ann)
		changed.Note(uint64(app.ID), bob) // not among the users it was expected to change
		return changed, s.UpdateUser(ctx, u)
	}

	require.NoError(t, svc.ProfileTx(ctx, []uint64{ann}, rename))
	require.Equal(t, 2, runs, "run again holding bob's key too")
	u, err := w.Store.GetUser(ctx, ann)
	require.NoError(t, err)
	require.Equal(t, "Ann 2", u.GlobalName, "the last run committed, the first rolled back")
	staged := func(user uint64) []string { return outboxtest.Staged(t, w.Store, fmt.Sprint("rel:", user)) }
	update := []string{"APPLICATION_PROFILES_UPDATE"}
	require.Equal(t, update, staged(ann), "each update under its subject's key")
	require.Equal(t, update, staged(bob))
	require.Equal(t, []string{fmt.Sprint("APPLICATION_PROFILES_UPDATE ", []uint64{ann}, " app ", app.ID),
		fmt.Sprint("APPLICATION_PROFILES_UPDATE ", []uint64{bob}, " app ", app.ID)}, st.Take())
}
