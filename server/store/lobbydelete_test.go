package store

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"sdkpp/server/snowflake"
)

// A lobby's deletion leaves none of its messages behind, even those of a commit that took the
// lobby's row (FOR KEY SHARE) before the deletion and ended while the deletion ran: here the
// deletion waits for that commit, then deletes what it stored.
func TestDeleteLobbyAfterAConcurrentCommit(t *testing.T) {
	s := openPostgres(t)
	ctx, now := context.Background(), lobby100(t, s)
	m := &LobbyMessage{ID: snowflake.At(now) + 1, LobbyID: 100, AppID: 1, AuthorID: 7, Content: "late", CreatedAt: now}
	deleted := make(chan error, 1)
	require.NoError(t, s.WithTx(ctx, func(tx Store) error {
		if err := tx.StoreLobbyMessages(ctx, 100, []*LobbyMessage{m}, nil, nil); err != nil {
			return err
		}
		go func() { deleted <- s.DeleteLobby(ctx, 100) }()
		// The deletion runs until it waits for this transaction's lock on the lobby's row (seen
		// outside the transaction, whose view of pg_stat_activity is taken once).
		deadline := time.Now().Add(30 * time.Second)
		for {
			var waiting int
			require.NoError(t, s.q.QueryRowContext(ctx, `SELECT COUNT(*) FROM pg_stat_activity
				WHERE datname = current_database() AND wait_event_type = 'Lock'`).Scan(&waiting))
			if waiting > 0 {
				return nil
			}
			select {
			case err := <-deleted:
				t.Fatalf("the deletion ended (%v) before the commit", err)
			default:
			}
			require.True(t, time.Now().Before(deadline), "the deletion never waited for the commit")
			time.Sleep(time.Millisecond)
		}
	}))
	require.NoError(t, <-deleted)
	var left int
	require.NoError(t, s.q.QueryRowContext(ctx, `SELECT COUNT(*) FROM lobby_messages WHERE lobby_id = 100`).Scan(&left))
	require.Zero(t, left, "messages of the deleted lobby left behind")
}
