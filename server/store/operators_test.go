package store

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// Operators: usernames unique case-insensitively, sessions by hash, the audit log newest first.
func TestOperators(t *testing.T) { forEachStore(t, testOperators) }

func testOperators(t *testing.T, s *DB) {
	ctx := context.Background()
	t0 := time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC)
	op := Operator{ID: 10, Username: "Root", PasswordHash: []byte("hash"), Role: RoleAdmin, CreatedAt: t0}
	require.NoError(t, s.CreateOperator(ctx, &op))
	require.ErrorIs(t, s.CreateOperator(ctx, &Operator{ID: 11, Username: "root", PasswordHash: []byte("x"), Role: RoleViewer}),
		ErrConflict, "usernames are unique whatever their case")
	require.NoError(t, s.CreateOperator(ctx, &Operator{ID: 12, Username: "ann", PasswordHash: []byte("y"), Role: RoleViewer}))
	got, err := s.GetOperatorByUsername(ctx, "ROOT")
	require.NoError(t, err)
	require.Equal(t, op, *got)
	got, err = s.GetOperator(ctx, 12)
	require.NoError(t, err)
	require.Equal(t, "ann", got.Username)
	_, err = s.GetOperatorByUsername(ctx, "nobody")
	require.ErrorIs(t, err, ErrNotFound)
	all, err := s.ListOperators(ctx)
	require.NoError(t, err)
	require.Len(t, all, 2)
	require.Equal(t, "ann", all[0].Username)

	sess := OperatorSession{Hash: []byte("session"), OperatorID: 10, CreatedAt: t0, ExpiresAt: t0.Add(time.Hour)}
	require.NoError(t, s.InsertOperatorSession(ctx, &sess))
	gs, err := s.GetOperatorSession(ctx, []byte("session"))
	require.NoError(t, err)
	require.Equal(t, sess, *gs)
	require.NoError(t, s.DeleteOperatorSession(ctx, []byte("session")))
	require.ErrorIs(t, s.DeleteOperatorSession(ctx, []byte("session")), ErrNotFound)
	_, err = s.GetOperatorSession(ctx, []byte("session"))
	require.ErrorIs(t, err, ErrNotFound)

	for i, action := range []string{"ban", "unban", "revoke"} {
		require.NoError(t, s.AppendOperatorAction(ctx, &OperatorAction{ID: uint64(100 + i), OperatorID: 10, Operator: "Root",
			Action: action, Target: "user 5", CreatedAt: t0.Add(time.Duration(i) * time.Minute)}))
	}
	acts, err := s.ListOperatorActions(ctx, 2)
	require.NoError(t, err)
	require.Len(t, acts, 2)
	require.Equal(t, OperatorAction{ID: 102, OperatorID: 10, Operator: "Root", Action: "revoke", Target: "user 5",
		CreatedAt: t0.Add(2 * time.Minute)}, acts[0])
	require.Equal(t, "unban", acts[1].Action)

	// An action written in a transaction that fails is not kept.
	err = s.WithTx(ctx, func(tx Store) error {
		require.NoError(t, tx.AppendOperatorAction(ctx, &OperatorAction{ID: 200, Operator: "Root", Action: "ban", CreatedAt: t0.Add(time.Hour)}))
		return ErrConflict
	})
	require.ErrorIs(t, err, ErrConflict)
	acts, err = s.ListOperatorActions(ctx, 10)
	require.NoError(t, err)
	require.Len(t, acts, 3)
}

// The console's reads: relationship counts, applications, an application's deliveries, lobbies.
func TestConsoleReads(t *testing.T) { forEachStore(t, testConsoleReads) }

func testConsoleReads(t *testing.T, s *DB) {
	ctx := context.Background()
	t0 := time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC)
	for _, r := range []Relationship{{UserID: 1, PeerID: 2, Type: 1}, {UserID: 1, PeerID: 3, Type: 1},
		{UserID: 1, PeerID: 4, Type: 2}, {UserID: 1, PeerID: 2, AppID: 9, Type: 1}, {UserID: 2, PeerID: 1, Type: 1}} {
		r.CreatedAt = t0
		require.NoError(t, s.PutRelationship(ctx, &r))
	}
	counts, err := s.CountRelationships(ctx, 1)
	require.NoError(t, err)
	require.Equal(t, []RelationshipCount{{Type: 1, Count: 3}, {Type: 2, Count: 1}}, counts)

	for _, id := range []uint64{30, 20} {
		require.NoError(t, s.CreateApplication(ctx, &Application{ID: id, Name: "app", ClientSecretHash: []byte{1},
			BotTokenHash: []byte{byte(id)}, WebhookKey: []byte{1}, CreatedAt: t0}))
	}
	apps, err := s.ListApplications(ctx, 10)
	require.NoError(t, err)
	require.Len(t, apps, 2)
	require.Equal(t, uint64(20), apps[0].ID)

	for i := range 3 {
		require.NoError(t, s.EnqueueWebhook(ctx, &WebhookDelivery{ID: uint64(40 + i), AppID: 20, EventType: "E",
			Body: []byte("{}"), State: WebhookFailed, CreatedAt: t0.Add(time.Duration(i) * time.Second)}))
	}
	require.NoError(t, s.EnqueueWebhook(ctx, &WebhookDelivery{ID: 50, AppID: 30, EventType: "E", Body: []byte("{}"),
		State: WebhookPending, CreatedAt: t0}))
	ds, err := s.ListAppWebhooks(ctx, 20, 2)
	require.NoError(t, err)
	require.Len(t, ds, 2)
	require.Equal(t, []uint64{42, 41}, []uint64{ds[0].ID, ds[1].ID}, "newest first")

	for i := range 2 {
		require.NoError(t, s.CreateLobby(ctx, &Lobby{ID: uint64(60 + i), AppID: 20, Metadata: map[string]string{"k": "v"},
			LastActivityAt: t0.Add(time.Duration(i) * time.Minute), ExpiresAt: t0.Add(time.Hour), CreatedAt: t0}))
	}
	ls, err := s.ListLobbies(ctx, 10)
	require.NoError(t, err)
	require.Len(t, ls, 2)
	require.Equal(t, uint64(61), ls[0].ID, "most recently active first")
	require.Equal(t, "v", ls[0].Metadata["k"])

	for _, id := range []uint64{70, 80} {
		require.NoError(t, s.CreateGuild(ctx, &Guild{ID: id, Name: "g", OwnerID: 1, CreatedAt: t0}))
		require.NoError(t, s.CreateGuildChannel(ctx, &GuildChannel{ID: id + 1, GuildID: id, Name: "general", CreatedAt: t0}))
		require.NoError(t, s.CreateGuildChannel(ctx, &GuildChannel{ID: id + 2, GuildID: id, Name: "off-topic", CreatedAt: t0}))
	}
	gs, err := s.ListGuilds(ctx, 10)
	require.NoError(t, err)
	require.Equal(t, []uint64{80, 70}, []uint64{gs[0].ID, gs[1].ID}, "newest first")
	for i, ch := range []uint64{71, 72, 71, 81} {
		require.NoError(t, s.InsertGuildMessage(ctx, &GuildMessage{ID: uint64(100 + i), ChannelID: ch, GuildID: ch / 10 * 10,
			AuthorID: 1, Content: "m", CreatedAt: t0}))
	}
	ms, err := s.ListRecentGuildMessages(ctx, 70, 2)
	require.NoError(t, err)
	require.Len(t, ms, 2)
	require.Equal(t, []uint64{102, 101}, []uint64{ms[0].ID, ms[1].ID}, "every channel's, newest first")
	require.Equal(t, uint64(72), ms[1].ChannelID)
}

// Operator management: a role changes, an operator is removed with its sessions, and expired
// sessions are pruned while live ones stay.
func TestOperatorManagement(t *testing.T) { forEachStore(t, testOperatorManagement) }

func testOperatorManagement(t *testing.T, s *DB) {
	ctx := context.Background()
	t0 := time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC)
	for i, name := range []string{"ann", "bob"} {
		require.NoError(t, s.CreateOperator(ctx, &Operator{ID: uint64(10 + i), Username: name, PasswordHash: []byte("h"),
			Role: RoleViewer, CreatedAt: t0}))
	}
	require.NoError(t, s.SetOperatorRole(ctx, 10, RoleAdmin))
	got, err := s.GetOperator(ctx, 10)
	require.NoError(t, err)
	require.Equal(t, RoleAdmin, got.Role)
	require.ErrorIs(t, s.SetOperatorRole(ctx, 99, RoleAdmin), ErrNotFound)

	for _, sess := range []OperatorSession{
		{Hash: []byte("ann-old"), OperatorID: 10, CreatedAt: t0, ExpiresAt: t0.Add(time.Hour)},
		{Hash: []byte("ann-new"), OperatorID: 10, CreatedAt: t0, ExpiresAt: t0.Add(3 * time.Hour)},
		{Hash: []byte("bob"), OperatorID: 11, CreatedAt: t0, ExpiresAt: t0.Add(3 * time.Hour)},
	} {
		require.NoError(t, s.InsertOperatorSession(ctx, &sess))
	}
	n, err := s.DeleteExpiredOperatorSessions(ctx, t0.Add(time.Hour-time.Nanosecond))
	require.NoError(t, err)
	require.Zero(t, n, "a session is kept until it expires")
	n, err = s.DeleteExpiredOperatorSessions(ctx, t0.Add(time.Hour))
	require.NoError(t, err)
	require.Equal(t, 1, n)
	_, err = s.GetOperatorSession(ctx, []byte("ann-old"))
	require.ErrorIs(t, err, ErrNotFound)
	_, err = s.GetOperatorSession(ctx, []byte("ann-new"))
	require.NoError(t, err)

	require.NoError(t, s.DeleteOperator(ctx, 10))
	_, err = s.GetOperator(ctx, 10)
	require.ErrorIs(t, err, ErrNotFound)
	_, err = s.GetOperatorSession(ctx, []byte("ann-new"))
	require.ErrorIs(t, err, ErrNotFound, "a removed operator's sessions go with it")
	_, err = s.GetOperatorSession(ctx, []byte("bob"))
	require.NoError(t, err, "other operators' sessions stay")
	require.ErrorIs(t, s.DeleteOperator(ctx, 10), ErrNotFound)
}
