package store

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// INVT-1, INVT-3: an invite's target users are a list of their own; adding, removing and
// replacing keep the invite targeted (an emptied list lets nobody in); unlimited and
// never-expiring invites stay usable; a channel lists its usable invites.
func TestGuildInviteTargets(t *testing.T) { forEachStore(t, testGuildInviteTargets) }

func testGuildInviteTargets(t *testing.T, s *DB) {
	ctx := context.Background()
	t0 := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	for id := uint64(1); id <= 3; id++ {
		require.NoError(t, s.CreateUser(ctx, &User{ID: id, Username: "u" + string(rune('0'+id)), CreatedAt: t0}))
	}
	open := &GuildInvite{Code: "open", GuildID: 5, ChannelID: 10, InviterID: 1, RoleIDs: []uint64{7, 8}, Temporary: true,
		CreatedAt: t0}
	require.NoError(t, s.InsertGuildInvite(ctx, open))
	targeted := &GuildInvite{Code: "few", GuildID: 5, ChannelID: 10, InviterID: 1, TargetUserIDs: []uint64{2, 3}, MaxUses: 1,
		ExpiresAt: t0.Add(time.Hour), CreatedAt: t0.Add(time.Second)}
	require.NoError(t, s.InsertGuildInvite(ctx, targeted))

	got, err := s.GetGuildInvite(ctx, "open")
	require.NoError(t, err)
	assert.Equal(t, []uint64{7, 8}, got.RoleIDs)
	assert.True(t, got.Temporary)
	assert.False(t, got.Targeted)
	assert.True(t, got.ExpiresAt.IsZero(), "never expires")
	got, err = s.GetGuildInvite(ctx, "few")
	require.NoError(t, err)
	assert.True(t, got.Targeted)
	assert.Nil(t, got.TargetUserIDs, "read with ListInviteTargets")

	list, err := s.ListInviteTargets(ctx, "few")
	require.NoError(t, err)
	assert.Equal(t, []uint64{2, 3}, list)
	in, err := s.IsInviteTarget(ctx, "few", 2)
	require.NoError(t, err)
	assert.True(t, in)
	in, err = s.IsInviteTarget(ctx, "few", 1)
	require.NoError(t, err)
	assert.False(t, in)

	added, err := s.AddInviteTargets(ctx, "few", []uint64{3, 1})
	require.NoError(t, err)
	assert.Equal(t, 1, added, "3 was there")
	removed, err := s.RemoveInviteTargets(ctx, "few", []uint64{1, 2, 3, 99})
	require.NoError(t, err)
	assert.Equal(t, 3, removed)
	n, err := s.CountInviteTargets(ctx, "few")
	require.NoError(t, err)
	assert.Zero(t, n)
	got, err = s.GetGuildInvite(ctx, "few")
	require.NoError(t, err)
	assert.True(t, got.Targeted, "an emptied list lets nobody in")

	require.NoError(t, s.ReplaceInviteTargets(ctx, "open", []uint64{3, 2}))
	list, err = s.ListInviteTargets(ctx, "open")
	require.NoError(t, err)
	assert.Equal(t, []uint64{2, 3}, list)
	got, err = s.GetGuildInvite(ctx, "open")
	require.NoError(t, err)
	assert.True(t, got.Targeted)
	assert.ErrorIs(t, s.ReplaceInviteTargets(ctx, "nope", []uint64{1}), ErrNotFound)
	_, err = s.AddInviteTargets(ctx, "nope", []uint64{1})
	assert.ErrorIs(t, err, ErrNotFound)

	missing, err := s.MissingUsers(ctx, []uint64{9, 1, 1 << 62, 2})
	require.NoError(t, err)
	assert.Equal(t, []uint64{9, 1 << 62}, missing, "in the order given")

	// Usable invites of the channel: the used-up single-use one drops out, the unlimited one
	// stays however often it is used.
	for range 3 {
		require.NoError(t, s.UseGuildInvite(ctx, "open", t0.Add(time.Minute)))
	}
	require.NoError(t, s.UseGuildInvite(ctx, "few", t0.Add(time.Minute)))
	assert.ErrorIs(t, s.UseGuildInvite(ctx, "few", t0.Add(time.Minute)), ErrNotFound, "used up")
	usable, err := s.ListChannelInvites(ctx, 10, t0.Add(time.Minute))
	require.NoError(t, err)
	require.Len(t, usable, 1)
	assert.Equal(t, "open", usable[0].Code)
	assert.Equal(t, 3, usable[0].Uses)
}

// INVT-2: an invite's latest upload job; a later upload replaces it, and the replaced job can
// neither progress nor end.
func TestInviteTargetJobs(t *testing.T) { forEachStore(t, testInviteTargetJobs) }

func testInviteTargetJobs(t *testing.T, s *DB) {
	ctx := context.Background()
	t0 := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	_, err := s.GetInviteTargetJob(ctx, "a")
	assert.ErrorIs(t, err, ErrNotFound)
	_, err = s.NextInviteTargetJob(ctx)
	assert.ErrorIs(t, err, ErrNotFound)

	first, err := s.StartInviteTargetJob(ctx, "a", []uint64{1, 2, 3}, t0)
	require.NoError(t, err)
	assert.Equal(t, InviteTargetJob{Code: "a", Seq: 1, Status: InviteJobProcessing, UserIDs: []uint64{1, 2, 3}, Total: 3,
		CreatedAt: t0}, *first)
	_, err = s.StartInviteTargetJob(ctx, "b", []uint64{4}, t0.Add(time.Second))
	require.NoError(t, err)
	next, err := s.NextInviteTargetJob(ctx)
	require.NoError(t, err)
	assert.Equal(t, "a", next.Code, "the oldest first")

	second, err := s.StartInviteTargetJob(ctx, "a", []uint64{5}, t0.Add(2*time.Second))
	require.NoError(t, err)
	assert.Equal(t, int64(2), second.Seq)
	assert.ErrorIs(t, s.ProgressInviteTargetJob(ctx, "a", 1, 2), ErrNotFound, "replaced")
	assert.ErrorIs(t, s.EndInviteTargetJob(ctx, "a", 1, 3, "", t0), ErrNotFound, "replaced")
	require.NoError(t, s.ProgressInviteTargetJob(ctx, "a", 2, 1))
	require.NoError(t, s.EndInviteTargetJob(ctx, "a", 2, 1, "", t0.Add(3*time.Second)))
	assert.ErrorIs(t, s.EndInviteTargetJob(ctx, "a", 2, 1, "", t0), ErrNotFound, "ended already")
	done, err := s.GetInviteTargetJob(ctx, "a")
	require.NoError(t, err)
	assert.Equal(t, InviteTargetJob{Code: "a", Seq: 2, Status: InviteJobCompleted, Total: 1, Processed: 1,
		CreatedAt: t0.Add(2 * time.Second), CompletedAt: t0.Add(3 * time.Second)}, *done)

	require.NoError(t, s.EndInviteTargetJob(ctx, "b", 1, 0, "Unknown user 4.", t0.Add(4*time.Second)))
	failed, err := s.GetInviteTargetJob(ctx, "b")
	require.NoError(t, err)
	assert.Equal(t, InviteJobFailed, failed.Status)
	assert.Equal(t, "Unknown user 4.", failed.Error)
	_, err = s.NextInviteTargetJob(ctx)
	assert.ErrorIs(t, err, ErrNotFound, "none processing")
}

// INVT-1: the migration that makes target users a list moves a lobby invite's one target user
// (target_user_id) into it.
func TestInviteTargetMigration(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	at := slices.IndexFunc(migrations, func(m string) bool { return strings.Contains(m, "CREATE TABLE guild_invite_targets") })
	require.Greater(t, at, 0)
	all := migrations
	migrations = all[:at]
	s, err := OpenSQLite(ctx, dir)
	migrations = all
	require.NoError(t, err)
	for _, row := range []struct {
		code   string
		target uint64
	}{{"lobby", 42}, {"open", 0}} {
		_, err = s.db.ExecContext(ctx, `INSERT INTO guild_invites (code, guild_id, channel_id, inviter_id, lobby_id, target_user_id,
			max_uses, uses, expires_at, created_at) VALUES (?, 1, 2, 42, 3, ?, 1, 0, 100, 50)`, row.code, row.target)
		require.NoError(t, err)
	}
	require.NoError(t, s.Close())

	s, err = OpenSQLite(ctx, dir)
	require.NoError(t, err)
	defer s.Close()
	inv, err := s.GetGuildInvite(ctx, "lobby")
	require.NoError(t, err)
	assert.True(t, inv.Targeted)
	list, err := s.ListInviteTargets(ctx, "lobby")
	require.NoError(t, err)
	assert.Equal(t, []uint64{42}, list)
	inv, err = s.GetGuildInvite(ctx, "open")
	require.NoError(t, err)
	assert.False(t, inv.Targeted)
	assert.Empty(t, inv.RoleIDs)
}
