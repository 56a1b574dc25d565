package social

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"sdkpp/wire"
)

func rel(id uint64, typ int) wire.Relationship {
	return wire.Relationship{ID: wire.Snowflake(id), Type: typ, User: wire.User{ID: wire.Snowflake(id)}}
}

func TestApply(t *testing.T) {
	var s State
	for _, tc := range []struct {
		name                string
		r                   wire.Relationship
		platform, removed   bool
		wasFriend, isFriend bool
		want                Rel
	}{
		{"incoming request", rel(1, TypePendingIncoming), true, false, false, false, Rel{Platform: TypePendingIncoming}},
		{"accepted", rel(1, TypeFriend), true, false, false, true, Rel{Platform: TypeFriend}},
		{"game friend too", rel(1, TypeFriend), false, false, true, true, Rel{Platform: TypeFriend, Game: TypeFriend}},
		{"platform removed", rel(1, TypeFriend), true, true, true, true, Rel{Game: TypeFriend}},
		{"game removed", rel(1, TypeFriend), false, true, true, false, Rel{}},
	} {
		was, is := s.Apply(tc.r, tc.platform, tc.removed)
		assert.Equal(t, tc.wasFriend, was, tc.name)
		assert.Equal(t, tc.isFriend, is, tc.name)
		assert.Equal(t, tc.want, s.Rel(1), tc.name)
	}
	assert.Empty(t, s.IDs(), "a user with no relationship left is forgotten")

	spam := rel(2, TypePendingIncoming)
	spam.IsSpamRequest = true
	s.Apply(spam, true, false)
	assert.True(t, s.Rel(2).Spam, "REL-1: the spam flag of a platform request")
	s.Apply(spam, true, true)
	assert.False(t, s.Rel(2).Spam)
}

func TestReadyReplacesEverything(t *testing.T) {
	var s State
	s.Apply(rel(9, TypeFriend), true, false)
	s.ApplyPresence(wire.PresenceUpdate{User: wire.PresenceUser{ID: 9}, Status: "online"})
	s.ApplyReady(5, []wire.Relationship{rel(1, TypeFriend), rel(2, TypeBlocked)}, []wire.Relationship{rel(3, TypeFriend)},
		[]wire.PresenceUpdate{{User: wire.PresenceUser{ID: 1}, Status: "idle"}})
	assert.Equal(t, []uint64{1, 2, 3}, s.IDs())
	assert.Equal(t, []uint64{1, 3}, s.Friends())
	assert.Equal(t, "idle", s.Status(1))
	assert.Empty(t, s.Status(9), "the old session's presences are gone")
}

func TestPresence(t *testing.T) {
	var s State
	s.Apply(rel(1, TypeFriend), true, false)
	app := wire.Snowflake(42)
	other := wire.Snowflake(43)
	for _, tc := range []struct {
		status  string
		acts    []wire.Activity
		online  bool
		playing bool
	}{
		{"", nil, false, false},
		{"offline", nil, false, false},
		{"invisible", nil, false, false},
		{"online", nil, true, false},
		{"dnd", []wire.Activity{{Name: "elsewhere", ApplicationID: &other}}, true, false},
		{"idle", []wire.Activity{{Name: "custom", Type: wire.ActivityCustomStatus, ApplicationID: &app}}, true, false},
		{"online", []wire.Activity{{Name: "ours", ApplicationID: &app}}, true, true},
	} {
		friend := s.ApplyPresence(wire.PresenceUpdate{User: wire.PresenceUser{ID: 1}, Status: tc.status, Activities: tc.acts})
		assert.True(t, friend)
		assert.Equal(t, tc.online, s.Online(1), tc.status)
		a := s.GameActivity(1, 42)
		assert.Equal(t, tc.playing, a != nil, "%s %v", tc.status, tc.acts)
	}
	assert.False(t, s.ApplyPresence(wire.PresenceUpdate{User: wire.PresenceUser{ID: 2}, Status: "online"}), "not a friend")
	// The session's application, once READY names it, wins over the fallback.
	s.ApplyReady(7, []wire.Relationship{rel(1, TypeFriend)}, nil, []wire.PresenceUpdate{
		{User: wire.PresenceUser{ID: 1}, Status: "online", Activities: []wire.Activity{{Name: "ours", ApplicationID: &app}}}})
	assert.Nil(t, s.GameActivity(1, 42))
}

func TestOwn(t *testing.T) {
	var s State
	p, set := s.Own()
	assert.False(t, set)
	assert.Equal(t, "online", p.Status)
	assert.NotNil(t, p.Activities, "op 3 sends an empty list, not null")
	s.SetStatus("invisible")
	p, set = s.Own()
	assert.True(t, set)
	assert.Equal(t, "invisible", p.Status)
	s.SetStatus("online")
	s.SetActivity(&wire.Activity{Name: "x"})
	p, set = s.Own()
	assert.True(t, set)
	assert.Len(t, p.Activities, 1)
	s.SetActivity(nil)
	_, set = s.Own()
	assert.False(t, set)
}
