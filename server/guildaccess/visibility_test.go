package guildaccess

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"sdkpp/server/store"
	"sdkpp/wire"
	gwire "sdkpp/wire/gateway"
)

// GCL-1, VER-3: from Nov 16, 2026 the channels without VIEW_CHANNEL are left out; a moment
// before, every channel is listed.
func TestVisibleChannels(t *testing.T) {
	list := []store.GuildChannel{{ID: 1}, {ID: 2}, {ID: 3}}
	perms := func(c *store.GuildChannel) (uint64, error) {
		if c.ID == 2 {
			return PermSendMessages, nil // sending, but not viewing
		}
		return PermViewChannel, nil
	}
	for _, tc := range []struct {
		at   time.Time
		want []uint64
	}{
		{wire.ChannelsOmittedFrom.Add(-time.Nanosecond), []uint64{1, 2, 3}},
		{wire.ChannelsOmittedFrom, []uint64{1, 3}},
		{wire.ChannelsOmittedFrom.Add(time.Nanosecond), []uint64{1, 3}},
	} {
		got, err := VisibleChannels(list, tc.at, perms)
		require.NoError(t, err)
		var ids []uint64
		for _, c := range got {
			ids = append(ids, c.ID)
		}
		assert.Equal(t, tc.want, ids, "GCL-1 (VER-3) at %s", tc.at)
	}
	assert.Len(t, list, 3, "the caller's list is left as it was")
}

// GW-1: the Identify's capabilities bit 1<<15 or the application's bot setting.
func TestObfuscationOn(t *testing.T) {
	on, off := &store.Application{ChannelObfuscation: true}, &store.Application{}
	for _, tc := range []struct {
		caps int64
		app  *store.Application
		want bool
	}{
		{0, off, false}, {gwire.CapabilityChannelObfuscation, off, true}, {0, on, true},
		{1<<14 | 1<<16, off, false}, {-1, nil, true}, {0, nil, false},
	} {
		assert.Equal(t, tc.want, ObfuscationOn(tc.caps, tc.app), "GW-1: capabilities %#x, app %+v", tc.caps, tc.app)
	}
}

// CH-1, CH-2, CH-3: an obfuscated channel keeps id, type, guild_id, position and parent_id; its
// name is ___hidden___, its flags have CHANNEL_OBFUSCATED, its one overwrite denies VIEW_CHANNEL
// to @everyone, and every other field is nulled or reduced.
func TestObfuscate(t *testing.T) {
	parent := wire.Snowflake(7)
	ch := wire.GuildChannel{ID: 9, Type: wire.ChannelGuildText, GuildID: 5, Name: "secret-plans", Position: 3,
		ParentID: &parent, IsLinkable: true, IsViewableAndWriteableByAllMembers: true, Flags: 1 << 4,
		LinkedLobby: &wire.LinkedLobby{ApplicationID: 1, LobbyID: 2}}
	raw, err := json.Marshal(ch)
	require.NoError(t, err)
	got, err := Obfuscate(raw, 5)
	require.NoError(t, err)
	assert.JSONEq(t, `{"id":"9","type":0,"guild_id":"5","name":"___hidden___","position":3,"parent_id":"7",
		"is_linkable":false,"is_viewable_and_writeable_by_all_members":false,"linked_lobby":null,
		"flags":131088,"application_id":null,
		"permission_overwrites":[{"id":"5","type":0,"allow":"0","deny":"1024"}]}`, string(got), "CH-1, CH-2, CH-3")
	assert.Equal(t, 1<<17, wire.ChannelFlagObfuscated, "CH-2")

	// Fields of other channel shapes: a topic, a count, a list, an object, a nested overwrite list.
	other := `{"id":"1","type":2,"guild_id":"5","topic":"plans","bitrate":64000,"nsfw":true,"recipients":[{"id":"3"}],
		"permission_overwrites":[{"id":"8","type":1,"allow":"1024","deny":"0"}],"last_message_id":"4","icon":null,"meta":{"a":1}}`
	got, err = Obfuscate(json.RawMessage(other), 5)
	require.NoError(t, err)
	assert.JSONEq(t, `{"id":"1","type":2,"guild_id":"5","topic":null,"bitrate":0,"nsfw":false,"recipients":[],
		"permission_overwrites":[{"id":"5","type":0,"allow":"0","deny":"1024"}],"last_message_id":null,"icon":null,
		"meta":null,"name":"___hidden___","flags":131072,"application_id":null}`, string(got), "CH-3")

	for _, bad := range []string{`[]`, `null`, `"x"`, `{`} {
		_, err := Obfuscate(json.RawMessage(bad), 5)
		assert.Error(t, err, "%s", bad)
	}
}

// GW-1, CH-3: ChannelFor obfuscates a channel the bot cannot view when obfuscation is on, and
// leaves every other channel as it is; the bot's permissions come from the store.
func TestChannelFor(t *testing.T) {
	ctx := context.Background()
	st, err := store.OpenSQLite(ctx, "")
	require.NoError(t, err)
	t.Cleanup(func() { st.Close() })
	now := time.Date(2026, 11, 25, 0, 0, 0, 0, time.UTC)
	for _, u := range []store.User{{ID: 1, Username: "owner"}, {ID: 2, Username: "member-bot", Bot: true}, {ID: 3, Username: "outside-bot", Bot: true}} {
		u.CreatedAt = now
		require.NoError(t, st.CreateUser(ctx, &u))
	}
	g := &store.Guild{ID: 10, Name: "g", OwnerID: 1, CreatedAt: now}
	require.NoError(t, st.CreateGuild(ctx, g))
	require.NoError(t, st.PutGuildMember(ctx, &store.GuildMember{GuildID: 10, UserID: 2, JoinedAt: now}))
	ch := &store.GuildChannel{ID: 11, GuildID: 10, Name: "plans", Type: wire.ChannelGuildText, CreatedAt: now}
	require.NoError(t, st.CreateGuildChannel(ctx, ch))
	obj := ChannelObject(ch)
	plain, err := json.Marshal(obj)
	require.NoError(t, err)
	for _, tc := range []struct {
		bot       uint64
		obfuscate bool
		hidden    bool
	}{{2, true, false}, {3, true, true}, {3, false, false}} {
		got, err := ChannelFor(ctx, st, g, ch, tc.bot, tc.obfuscate, obj)
		require.NoError(t, err)
		if !tc.hidden {
			assert.JSONEq(t, string(plain), string(got), "GW-1: bot %d, obfuscation %v", tc.bot, tc.obfuscate)
			continue
		}
		var c wire.GuildChannel
		require.NoError(t, json.Unmarshal(got, &c))
		assert.Equal(t, wire.ObfuscatedChannelName, c.Name, "CH-3")
		assert.NotZero(t, c.Flags&wire.ChannelFlagObfuscated, "CH-2")
	}
}
