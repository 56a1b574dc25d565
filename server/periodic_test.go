package server_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"sdkpp/internal/clock"
	"sdkpp/server"
	"sdkpp/server/servertest"
	"sdkpp/server/store"
)

// The service prunes expired operator console sessions, on its own clock, and keeps live ones;
// its heartbeat keeps its row of the node registry current on that clock too.
func TestServicePrunesOperatorSessionsAndBeats(t *testing.T) {
	ctx := context.Background()
	t0 := time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC)
	clk := clock.NewFake(t0)
	e := servertest.Start(t, servertest.WithClock(clk))
	st := e.Server.Store()
	require.NoError(t, st.CreateOperator(ctx, &store.Operator{ID: 1, Username: "root", PasswordHash: []byte("h"), Role: store.RoleAdmin}))
	for _, s := range []store.OperatorSession{
		{Hash: []byte("expired"), OperatorID: 1, CreatedAt: t0, ExpiresAt: t0.Add(time.Minute)},
		{Hash: []byte("live"), OperatorID: 1, CreatedAt: t0, ExpiresAt: t0.Add(365 * 24 * time.Hour)},
	} {
		require.NoError(t, st.InsertOperatorSession(ctx, &s))
	}
	// Each step moves the clock a prune interval, firing whichever timer the jobs wait on.
	require.Eventually(t, func() bool {
		clk.Advance(server.OperatorSessionPrune)
		_, err := st.GetOperatorSession(ctx, []byte("expired"))
		return err != nil
	}, 10*time.Second, 10*time.Millisecond, "the expired session is pruned")
	_, err := st.GetOperatorSession(ctx, []byte("expired"))
	require.ErrorIs(t, err, store.ErrNotFound)
	_, err = st.GetOperatorSession(ctx, []byte("live"))
	require.NoError(t, err, "a live session stays")

	require.Eventually(t, func() bool {
		nodes, err := st.ListNodes(ctx)
		require.NoError(t, err)
		return len(nodes) == 1 && nodes[0].UpdatedAt.After(t0) && nodes[0].StartedAt.Equal(t0) &&
			nodes[0].Address == e.URL
	}, 10*time.Second, 10*time.Millisecond, "the heartbeat wrote this node's row on the service's clock")
}
