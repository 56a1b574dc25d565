package sharedtest_test

import (
	"context"
	"io"
	"log/slog"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"sdkpp/internal/clock"
	"sdkpp/server/guildaccess"
	"sdkpp/server/invites"
	"sdkpp/server/store"
	"sdkpp/wire"
)

// A target-users job claimed by a node that then died is taken up by another node once the
// claim ends, though no kick reaches that node: its job goroutine polls on its clock.
func TestInviteJobOfADeadNodeIsPickedUp(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	u := database(t)
	clk := clock.NewFake(time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC))
	a, err := store.OpenPostgres(ctx, u, store.PostgresOptions{NodeID: 1, Now: clk.Now})
	require.NoError(t, err)
	defer a.Close()
	b, err := store.OpenPostgres(ctx, u, store.PostgresOptions{NodeID: 2, Now: clk.Now})
	require.NoError(t, err)
	defer b.Close()

	_, err = a.StartInviteTargetJob(ctx, "code1", []uint64{424242}, clk.Now())
	require.NoError(t, err)
	_, err = a.NextInviteTargetJob(ctx) // node a takes the job, and dies
	require.NoError(t, err)

	ended := make(chan int, 1)
	const poll = 10 * time.Second
	svc := &invites.Service{Base: &guildaccess.Base{Store: b, Clock: clk, Logger: slog.New(slog.NewTextHandler(io.Discard, nil))},
		PollJobs: poll, OnTargetUsersJob: func(_ context.Context, code string, status int) {
			if status != wire.TargetUsersJobProcessing {
				ended <- status
			}
		}}
	svc.StartJobs()
	defer svc.Close()
	// Each poll finds the job claimed until the lease ends, and arms the next.
	wait, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	for i := range uint64(store.DefaultClaimLease / poll) {
		require.NoError(t, clk.WaitArmed(wait, i+1), "node b's job goroutine waits for no poll")
		select {
		case status := <-ended:
			t.Fatalf("job ended (%d) while node a's claim lasted", status)
		default:
		}
		clk.Advance(poll)
	}
	select {
	case status := <-ended:
		require.Equal(t, wire.TargetUsersJobFailed, status, "user 424242 does not exist")
	case <-time.After(10 * time.Second):
		t.Fatal("node b did not take up the job")
	}
}
