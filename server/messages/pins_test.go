package messages_test

import (
	"net/http"
	"net/url"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"sdkpp/server/guildaccess"
	"sdkpp/server/servertest"
	"sdkpp/server/servertest/guildtest"
	"sdkpp/server/store"
	"sdkpp/wire"
	gwire "sdkpp/wire/gateway"
)

// pinsPath is a channel's Get Channel Pins path, or with a message id its pin path.
func pinsPath(ch wire.Snowflake, msg ...wire.Snowflake) string {
	p := "/channels/" + ch.String() + "/messages/pins"
	for _, m := range msg {
		p += "/" + m.String()
	}
	return p
}

// PIN-1: Pin and Unpin under /messages/pins answer 204 and send CHANNEL_PINS_UPDATE with the time
// of the newest remaining pin; Get Channel Pins pages by pin time with has_more; messages carry
// pinned; the deprecated routes still work; a deleted message's pin goes with it.
func TestPinMessages(t *testing.T) {
	t0 := wire.PinPermissionFrom.Add(24 * time.Hour)
	f := guildtest.NewBots(t, servertest.WithFrozenClock(t0))
	g := guildtest.Dial(t, f.E, "")
	g.Identify(f.E.App.BotToken, gwire.IntentGuilds)
	g.Expect(0, gwire.EventGuildCreate)
	general := f.Channel("general").ID
	owner := guildtest.Bearer(f.Alice)
	var msgs []wire.GuildMessage
	for _, c := range []string{"first", "second", "third"} {
		var m wire.GuildMessage
		guildtest.OK(t, guildtest.SendJSON(t, http.MethodPost, f.API("/channels/"+general.String()+"/messages"), map[string]any{"content": c}, owner), &m)
		msgs = append(msgs, m)
	}
	// pinned expects the CHANNEL_PINS_UPDATE of a pin change with the given newest pin time.
	pinned := func(last *time.Time) {
		t.Helper()
		var d wire.ChannelPinsUpdate
		g.Expect(0, gwire.EventChannelPinsUpdate, &d)
		assert.Equal(t, wire.ChannelPinsUpdate{GuildID: f.Guild.ID, ChannelID: general}, wire.ChannelPinsUpdate{GuildID: d.GuildID, ChannelID: d.ChannelID})
		if last == nil {
			assert.Nil(t, d.LastPinTimestamp, "PIN-1: no pin left")
			return
		}
		require.NotNil(t, d.LastPinTimestamp)
		assert.Equal(t, guildaccess.Timestamp(*last), *d.LastPinTimestamp, "PIN-1")
	}
	noContent := func(method, path string) {
		t.Helper()
		r := guildtest.Do(t, method, f.API(path), nil, owner)
		require.Equal(t, http.StatusNoContent, r.Status, "%s %s: %s", method, path, r.Body)
	}
	times := make([]time.Time, 3)
	for i, m := range msgs {
		f.E.Clock.Advance(time.Second)
		times[i] = f.E.Clock.Now()
		if i == 1 {
			noContent(http.MethodPut, "/channels/"+general.String()+"/pins/"+m.ID.String()) // the deprecated route
		} else {
			noContent(http.MethodPut, pinsPath(general, m.ID))
		}
		pinned(&times[i])
	}
	f.E.Clock.Advance(time.Second)
	noContent(http.MethodPut, pinsPath(general, msgs[0].ID))
	g.Sync() // pinned already: no event before the heartbeat's ACK

	var page wire.ChannelPins
	guildtest.OK(t, guildtest.Do(t, http.MethodGet, f.API(pinsPath(general)+"?limit=1"), nil, f.BotHeader()), &page)
	require.Len(t, page.Items, 1)
	assert.Empty(t, page.Items[0].Message.Content, "the bot's app may not read content: pins follow the REST content rule")
	guildtest.OK(t, guildtest.Do(t, http.MethodGet, f.API(pinsPath(general)+"?limit=2"), nil, owner), &page)
	require.Len(t, page.Items, 2)
	assert.True(t, page.HasMore, "PIN-1: one more pin is older")
	assert.Equal(t, []string{"third", "second"}, []string{page.Items[0].Message.Content, page.Items[1].Message.Content})
	assert.Equal(t, guildaccess.Timestamp(times[2]), page.Items[0].PinnedAt)
	assert.True(t, page.Items[0].Message.Pinned)
	guildtest.OK(t, guildtest.Do(t, http.MethodGet, f.API(pinsPath(general)+"?before="+url.QueryEscape(page.Items[1].PinnedAt)), nil, owner), &page)
	require.Len(t, page.Items, 1)
	assert.Equal(t, "first", page.Items[0].Message.Content)
	assert.Equal(t, guildaccess.Timestamp(times[0]), page.Items[0].PinnedAt, "pinning again kept the first pin's time")
	assert.False(t, page.HasMore)

	var old []wire.GuildMessage
	guildtest.OK(t, guildtest.Do(t, http.MethodGet, f.API("/channels/"+general.String()+"/pins"), nil, owner), &old)
	require.Len(t, old, 3, "the deprecated Get Pinned Messages")
	assert.Equal(t, msgs[2].ID, old[0].ID)

	noContent(http.MethodDelete, pinsPath(general, msgs[2].ID))
	pinned(&times[1])
	noContent(http.MethodDelete, pinsPath(general, msgs[2].ID))
	g.Sync() // not pinned: nothing changed
	var m wire.GuildMessage
	guildtest.OK(t, guildtest.Do(t, http.MethodGet, f.API("/channels/"+general.String()+"/messages/"+msgs[2].ID.String()), nil, f.BotHeader()), &m)
	assert.False(t, m.Pinned)
	guildtest.OK(t, guildtest.Do(t, http.MethodGet, f.API("/channels/"+general.String()+"/messages/"+msgs[1].ID.String()), nil, f.BotHeader()), &m)
	assert.True(t, m.Pinned)

	noContent(http.MethodDelete, "/channels/"+general.String()+"/messages/"+msgs[1].ID.String())
	guildtest.OK(t, guildtest.Do(t, http.MethodGet, f.API(pinsPath(general)), nil, f.BotHeader()), &page)
	require.Len(t, page.Items, 1, "the deleted message's pin is gone")
	noContent(http.MethodDelete, "/channels/"+general.String()+"/pins/"+msgs[0].ID.String()) // the deprecated route
	pinned(nil)
}

// VER-1, ERR-1 (VER-3): pinning needs MANAGE_MESSAGES until Feb 23, 2026 and PIN_MESSAGES
// (1 << 51) from then on; a member without it gets 403 50013, for pins and unpins alike.
func TestPinPermissionFromDate(t *testing.T) {
	for _, tc := range []struct {
		at                     time.Time
		manager, pinner, plain int // the status each member gets
	}{
		{wire.PinPermissionFrom.Add(-time.Millisecond), http.StatusNoContent, http.StatusForbidden, http.StatusForbidden},
		{wire.PinPermissionFrom, http.StatusForbidden, http.StatusNoContent, http.StatusForbidden},
	} {
		f := guildtest.NewBots(t, servertest.WithFrozenClock(tc.at))
		e := f.E
		g, err := e.Server.CreateGuild(wire.GuildSpec{Name: "Pins", OwnerID: e.User("alice").ID,
			Roles: []wire.RoleSpec{
				{Name: "manager", Permissions: wire.Permissions(guildaccess.PermManageMessages)},
				{Name: "pinner", Permissions: wire.Permissions(wire.PermPinMessages)},
			},
			Members: []wire.GuildMemberSpec{{ID: e.User("carol").ID, Roles: []int{0}}, {ID: e.User("bob").ID, Roles: []int{1}},
				{ID: f.BotID}},
			Channel: []wire.GuildChannelSpec{{Name: "general", Type: wire.ChannelGuildText}}})
		require.NoError(t, err)
		ch := g.Channels[0].ID
		var m wire.GuildMessage
		guildtest.OK(t, guildtest.SendJSON(t, http.MethodPost, f.API("/channels/"+ch.String()+"/messages"), map[string]any{"content": "pin me"}, guildtest.Bearer(f.Alice)), &m)
		for _, who := range []struct {
			name   string
			header http.Header
			want   int
		}{{"manager", guildtest.Bearer(f.Carol), tc.manager}, {"pinner", guildtest.Bearer(f.Bob), tc.pinner}, {"plain bot", f.BotHeader(), tc.plain}} {
			for _, method := range []string{http.MethodPut, http.MethodDelete} {
				r := guildtest.Do(t, method, f.API(pinsPath(ch, m.ID)), nil, who.header)
				require.Equal(t, who.want, r.Status, "VER-1 at %s: %s %s: %s", tc.at, who.name, method, r.Body)
				if r.Status == http.StatusForbidden {
					assert.Equal(t, 50013, r.APIError(t).Code, "ERR-1")
				}
			}
		}
	}
}

// PIN-1: bad ids, an unknown message, a channel the caller cannot view, a bad before or limit,
// and a 251st pin get the platform's errors; nothing is pinned by them.
func TestPinBadInput(t *testing.T) {
	f := guildtest.NewBots(t, servertest.WithFrozenClock(wire.PinPermissionFrom.Add(time.Hour)))
	general := f.Channel("general").ID
	owner := guildtest.Bearer(f.Alice)
	var m wire.GuildMessage
	guildtest.OK(t, guildtest.SendJSON(t, http.MethodPost, f.API("/channels/"+general.String()+"/messages"), map[string]any{"content": "x"}, owner), &m)
	var hidden wire.GuildMessage
	guildtest.OK(t, guildtest.SendJSON(t, http.MethodPost, f.API("/channels/"+f.Channel("hidden").ID.String()+"/messages"), map[string]any{"content": "y"}, owner), &hidden)
	for _, tc := range []struct {
		name, method, path string
		header             http.Header
		status, code       int
	}{
		{"bad message id", http.MethodPut, pinsPath(general) + "/nope", owner, 400, 50035},
		{"bad channel id", http.MethodPut, "/channels/x/messages/pins/" + m.ID.String(), owner, 400, 50035},
		{"unknown message", http.MethodPut, pinsPath(general, m.ID+1), owner, 404, 10008},
		{"unknown message, unpin", http.MethodDelete, pinsPath(general, m.ID+1), owner, 404, 10008},
		{"unknown channel", http.MethodPut, pinsPath(m.ID, m.ID), owner, 404, 10003},
		{"another channel's message", http.MethodPut, pinsPath(general, hidden.ID), owner, 404, 10008},
		{"a channel bob cannot view", http.MethodPut, pinsPath(f.Channel("hidden").ID, hidden.ID), guildtest.Bearer(f.Bob), 403, 50001},
		{"list a channel bob cannot view", http.MethodGet, pinsPath(f.Channel("hidden").ID), guildtest.Bearer(f.Bob), 403, 50001},
		{"before not a time", http.MethodGet, pinsPath(general) + "?before=yesterday", owner, 400, 50035},
		{"limit 0", http.MethodGet, pinsPath(general) + "?limit=0", owner, 400, 50035},
		{"limit 51", http.MethodGet, pinsPath(general) + "?limit=51", owner, 400, 50035},
		{"no token", http.MethodPut, pinsPath(general, m.ID), nil, 401, 0},
	} {
		r := guildtest.Do(t, tc.method, f.API(tc.path), nil, tc.header)
		require.Equal(t, tc.status, r.Status, "%s: %s", tc.name, r.Body)
		assert.Equal(t, tc.code, r.APIError(t).Code, "%s: %s", tc.name, r.Body)
	}
	var page wire.ChannelPins
	guildtest.OK(t, guildtest.Do(t, http.MethodGet, f.API(pinsPath(general)), nil, owner), &page)
	assert.Empty(t, page.Items, "nothing was pinned")

	// A channel holds 250 pins: the 251st is 30003.
	st := f.E.Server.Store()
	ctx := t.Context()
	for i := range wire.MaxPins {
		id := uint64(m.ID) + 1000 + uint64(i)
		require.NoError(t, st.InsertGuildMessage(ctx, &store.GuildMessage{ID: id, ChannelID: uint64(general), GuildID: uint64(f.Guild.ID),
			AuthorID: uint64(f.BotID), Content: strconv.Itoa(i), CreatedAt: f.E.Clock.Now()}))
		_, err := st.PinGuildMessage(ctx, uint64(general), id, f.E.Clock.Now())
		require.NoError(t, err)
	}
	r := guildtest.Do(t, http.MethodPut, f.API(pinsPath(general, m.ID)), nil, owner)
	require.Equal(t, http.StatusBadRequest, r.Status, "%s", r.Body)
	assert.Equal(t, wire.CodeMaxPins, r.APIError(t).Code, "PIN-1: %s", r.Body)
}
