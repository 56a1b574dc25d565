package store

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"
)

func TestLobbyStore(t *testing.T) {
	ctx := context.Background()
	s := openMemory(t)
	now := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	l := &Lobby{ID: 100, AppID: 1, SecretHash: []byte("h"), SecretExpiresAt: now.Add(time.Hour), FromSecret: true,
		Metadata: map[string]string{"mode": "ctf"}, IdleTimeout: 5 * time.Minute, LastActivityAt: now,
		ExpiresAt: now.Add(5 * time.Minute), CreatedAt: now}
	if err := s.CreateLobby(ctx, l); err != nil {
		t.Fatal(err)
	}
	// One secret, one lobby per application; lobbies without a secret never collide.
	if err := s.CreateLobby(ctx, &Lobby{ID: 101, AppID: 1, SecretHash: []byte("h"), ExpiresAt: now}); !errors.Is(err, ErrConflict) {
		t.Fatalf("same secret, same app: %v", err)
	}
	for _, x := range []*Lobby{{ID: 102, AppID: 2, SecretHash: []byte("h")}, {ID: 103, AppID: 1}, {ID: 104, AppID: 1}} {
		x.ExpiresAt = now.Add(time.Minute)
		if err := s.CreateLobby(ctx, x); err != nil {
			t.Fatalf("lobby %d: %v", x.ID, err)
		}
	}
	got, err := s.GetLobbyBySecret(ctx, 1, []byte("h"))
	if err != nil || got.ID != 100 || got.Metadata["mode"] != "ctf" || got.IdleTimeout != 5*time.Minute ||
		!got.FromSecret || !got.ExpiresAt.Equal(l.ExpiresAt) {
		t.Fatalf("by secret: %+v %v", got, err)
	}
	if got, err := s.GetLobby(ctx, 103); err != nil || got.SecretHash != nil || got.Metadata != nil {
		t.Fatalf("no secret, no metadata: %+v %v", got, err)
	}

	// Members: upsert, join order, count of the user's live lobbies of one app.
	for i, uid := range []uint64{7, 8} {
		if err := s.PutLobbyMember(ctx, &LobbyMember{LobbyID: 100, UserID: uid, JoinedAt: now.Add(time.Duration(i) * time.Second)}); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.PutLobbyMember(ctx, &LobbyMember{LobbyID: 100, UserID: 7, Flags: 1, AdditionalName: "Sir", Metadata: map[string]string{"k": "v"}, JoinedAt: now}); err != nil {
		t.Fatal(err)
	}
	if err := s.PutLobbyMember(ctx, &LobbyMember{LobbyID: 103, UserID: 7, JoinedAt: now}); err != nil {
		t.Fatal(err)
	}
	members, err := s.ListLobbyMembers(ctx, 100)
	if err != nil || len(members) != 2 || members[0].UserID != 7 || members[0].AdditionalName != "Sir" ||
		members[0].Flags != 1 || members[0].Metadata["k"] != "v" || members[1].Metadata != nil {
		t.Fatalf("members: %+v %v", members, err)
	}
	if ids, err := s.ListLobbyMemberIDs(ctx, 100); err != nil || len(ids) != 2 || ids[0] != members[0].UserID || ids[1] != members[1].UserID {
		t.Fatalf("member ids %v %v, want those of %+v in the same order", ids, err, members)
	}
	if n, err := s.CountUserLobbies(ctx, 1, 7, now); err != nil || n != 2 {
		t.Fatalf("count now: %d %v", n, err)
	}
	if n, _ := s.CountUserLobbies(ctx, 1, 7, now.Add(2*time.Minute)); n != 1 {
		t.Fatalf("an expired lobby still counts: %d", n)
	}
	if list, err := s.ListUserLobbies(ctx, 1, 7); err != nil || len(list) != 2 || list[0].ID != 100 || list[1].ID != 103 {
		t.Fatalf("user lobbies: %+v %v", list, err)
	}
	if err := s.DeleteLobbyMember(ctx, 100, 8); err != nil {
		t.Fatal(err)
	}
	if err := s.DeleteLobbyMember(ctx, 100, 8); !errors.Is(err, ErrNotFound) {
		t.Fatalf("second delete: %v", err)
	}

	// Messages: newest first, since, limit, other lobby's message not found.
	for i := range 5 {
		m := &LobbyMessage{ID: uint64(200 + i), LobbyID: 100, AppID: 1, AuthorID: 7, Content: "m",
			CreatedAt: now.Add(time.Duration(i) * time.Hour)}
		if err := s.InsertLobbyMessage(ctx, m); err != nil {
			t.Fatal(err)
		}
	}
	msgs, err := s.ListLobbyMessages(ctx, 100, now.Add(2*time.Hour), 2)
	if err != nil || len(msgs) != 2 || msgs[0].ID != 204 || msgs[1].ID != 203 {
		t.Fatalf("list: %+v %v", msgs, err)
	}
	// After an id: the oldest messages above it, newest first; since still applies.
	for _, c := range []struct {
		after uint64
		since time.Time
		limit int
		want  []uint64
	}{
		{201, now, 2, []uint64{203, 202}},
		{201, now, 10, []uint64{204, 203, 202}},
		{0, now.Add(3 * time.Hour), 10, []uint64{204, 203}},
		{204, now, 10, nil},
	} {
		msgs, err := s.ListLobbyMessagesAfter(ctx, 100, c.after, c.since, c.limit)
		var got []uint64
		for _, m := range msgs {
			got = append(got, m.ID)
		}
		if err != nil || !slices.Equal(got, c.want) {
			t.Fatalf("after %d since %v limit %d: %v %v, want %v", c.after, c.since, c.limit, got, err, c.want)
		}
	}
	m, err := s.GetLobbyMessage(ctx, 100, 202)
	if err != nil {
		t.Fatal(err)
	}
	m.ModerationMetadata = map[string]string{"action": "hide"}
	if err := s.UpdateLobbyMessage(ctx, m); err != nil {
		t.Fatal(err)
	}
	if m, err := s.GetLobbyMessage(ctx, 100, 202); err != nil || m.ModerationMetadata["action"] != "hide" {
		t.Fatalf("moderation metadata: %+v %v", m, err)
	}
	if _, err := s.GetLobbyMessage(ctx, 103, 202); !errors.Is(err, ErrNotFound) {
		t.Fatalf("message of another lobby: %v", err)
	}
	if max, _ := s.MaxID(ctx); max != 204 {
		t.Fatalf("MaxID must cover lobby messages: %d", max)
	}

	// Expiry order, and deleting a lobby deletes its members and messages.
	if next, ok, err := s.NextLobbyExpiry(ctx); err != nil || !ok || !next.Equal(now.Add(time.Minute)) {
		t.Fatalf("next expiry: %v %v %v", next, ok, err)
	}
	due, err := s.ExpiredLobbies(ctx, now.Add(2*time.Minute), 10)
	if err != nil || len(due) != 3 {
		t.Fatalf("expired: %d %v", len(due), err)
	}
	l.SecretHash, l.Metadata = nil, nil
	if err := s.UpdateLobby(ctx, l); err != nil {
		t.Fatal(err)
	}
	if _, err := s.GetLobbyBySecret(ctx, 1, []byte("h")); !errors.Is(err, ErrNotFound) {
		t.Fatalf("cleared secret still found: %v", err)
	}
	if err := s.DeleteLobby(ctx, 100); err != nil {
		t.Fatal(err)
	}
	if err := s.DeleteLobby(ctx, 100); !errors.Is(err, ErrNotFound) {
		t.Fatalf("second delete: %v", err)
	}
	if members, _ := s.ListLobbyMembers(ctx, 100); len(members) != 0 {
		t.Fatalf("members survived their lobby: %+v", members)
	}
	if msgs, _ := s.ListLobbyMessages(ctx, 100, time.Time{}, 10); len(msgs) != 0 {
		t.Fatalf("messages survived their lobby: %+v", msgs)
	}
}

// A message's enforced nonce is found by lobby, author and nonce within a time; the time of the
// newest such message comes from an index, not a scan of the messages.
func TestLobbyMessageNonces(t *testing.T) {
	ctx := context.Background()
	s := openMemory(t)
	if at, err := s.LatestNonceMessageAt(ctx); err != nil || !at.IsZero() {
		t.Fatalf("no messages: %v %v", at, err)
	}
	now := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	for _, m := range []LobbyMessage{
		{ID: 1, LobbyID: 10, AuthorID: 7, Content: "a", Nonce: "n", CreatedAt: now.Add(-time.Hour)},
		{ID: 2, LobbyID: 10, AuthorID: 7, Content: "b", Nonce: "n", CreatedAt: now},
		{ID: 3, LobbyID: 10, AuthorID: 8, Content: "c", Nonce: "m", CreatedAt: now},
		{ID: 4, LobbyID: 11, AuthorID: 7, Content: "d", CreatedAt: now.Add(time.Minute)}, // no nonce
	} {
		if err := s.InsertLobbyMessage(ctx, &m); err != nil {
			t.Fatal(err)
		}
	}
	for _, tc := range []struct {
		lobby, author uint64
		nonce         string
		since         time.Time
		want          uint64 // 0: none
	}{
		{10, 7, "n", now.Add(-2 * time.Hour), 1}, {10, 7, "n", now.Add(-time.Minute), 2},
		{10, 8, "n", now.Add(-2 * time.Hour), 0}, {11, 7, "n", now.Add(-2 * time.Hour), 0}, {10, 8, "m", now, 3},
	} {
		m, err := s.FindLobbyMessageByNonce(ctx, tc.lobby, tc.author, tc.nonce, tc.since)
		switch {
		case tc.want == 0 && !errors.Is(err, ErrNotFound):
			t.Errorf("%+v: found %+v (%v)", tc, m, err)
		case tc.want != 0 && (err != nil || m.ID != tc.want || m.Nonce != ""):
			t.Errorf("%+v: %+v %v", tc, m, err)
		}
	}
	if at, err := s.LatestNonceMessageAt(ctx); err != nil || !at.Equal(now) {
		t.Fatalf("newest with a nonce: %v %v (the later one has none)", at, err)
	}
	var plan string
	rows, err := s.db.QueryContext(ctx, `EXPLAIN QUERY PLAN SELECT MAX(created_at) FROM lobby_messages WHERE nonce IS NOT NULL`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	for rows.Next() {
		var id, parent, unused int
		var detail string
		if err := rows.Scan(&id, &parent, &unused, &detail); err != nil {
			t.Fatal(err)
		}
		plan += detail + "; "
	}
	if !strings.Contains(plan, "lobby_messages_nonce_time") {
		t.Fatalf("the newest nonce is not read from its index: %s", plan)
	}
}
