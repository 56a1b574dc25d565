package messages_test

import (
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"sdkpp/server/guildaccess"
	"sdkpp/server/messages"
	"sdkpp/server/servertest"
	"sdkpp/server/servertest/guildtest"
	"sdkpp/wire"
)

// VER-1: Modify Channel sets a guild text channel's name, topic and slowmode
// (rate_limit_per_user, 0 to 21600 seconds); it needs MANAGE_CHANNELS, and bad values are 400.
func TestModifyChannelSlowmode(t *testing.T) {
	f := guildtest.NewBots(t)
	general := f.Channel("general").ID
	path := f.API("/channels/" + general.String())
	var ch wire.Channel
	guildtest.OK(t, guildtest.SendJSON(t, http.MethodPatch, path, map[string]any{"rate_limit_per_user": 30, "topic": "news", "name": "lobby"}, guildtest.Bearer(f.Alice)), &ch)
	assert.Equal(t, 30, ch.RateLimitPerUser)
	require.NotNil(t, ch.Topic)
	assert.Equal(t, "news", *ch.Topic)
	assert.Equal(t, "lobby", ch.Name)
	guildtest.OK(t, guildtest.Do(t, http.MethodGet, path, nil, f.BotHeader()), &ch)
	assert.Equal(t, 30, ch.RateLimitPerUser, "GET /channels/{id} shows the slowmode")
	guildtest.OK(t, guildtest.SendJSON(t, http.MethodPatch, path, map[string]any{"topic": nil}, guildtest.Bearer(f.Alice)), &ch)
	assert.Nil(t, ch.Topic)
	assert.Equal(t, 30, ch.RateLimitPerUser, "an absent field is kept")

	r := guildtest.SendJSON(t, http.MethodPatch, path, map[string]any{"rate_limit_per_user": 0}, guildtest.Bearer(f.Bob))
	require.Equal(t, http.StatusForbidden, r.Status, "%s", r.Body)
	assert.Equal(t, 50013, r.APIError(t).Code, "MANAGE_CHANNELS is needed")
	for _, body := range []map[string]any{
		{"rate_limit_per_user": wire.MaxRateLimitPerUser + 1}, {"rate_limit_per_user": -1}, {"rate_limit_per_user": "x"},
		{"rate_limit_per_user": 1.5}, {"name": ""}, {"name": 5}, {"topic": string(make([]byte, wire.MaxTopicChars+1))},
	} {
		r := guildtest.SendJSON(t, http.MethodPatch, path, body, guildtest.Bearer(f.Alice))
		require.Equal(t, http.StatusBadRequest, r.Status, "%v: %s", body, r.Body)
		assert.Equal(t, wire.CodeInvalidFormBody, r.APIError(t).Code)
	}
	r = guildtest.SendJSON(t, http.MethodPatch, f.API("/channels/"+f.Channel("voice").ID.String()), map[string]any{"rate_limit_per_user": 5}, guildtest.Bearer(f.Alice))
	assert.Equal(t, http.StatusBadRequest, r.Status, "a voice channel has no slowmode: %s", r.Body)
}

// VER-1, VER-3: in a slowmode channel a second message within the interval is 429 20016 with
// retry_after, unless the sender may bypass slowmode: from Feb 23, 2026 with BYPASS_SLOWMODE
// (1 << 52) only, just before it with MANAGE_MESSAGES, MANAGE_CHANNELS or MANAGE_THREADS. Once
// the interval has passed the member sends again; bots are unaffected, as on the platform.
func TestSlowmodeBypassFromDate(t *testing.T) {
	for _, at := range []time.Time{wire.BypassSlowmodeFrom.Add(-time.Millisecond), wire.BypassSlowmodeFrom} {
		before := at.Before(wire.BypassSlowmodeFrom)
		f := guildtest.NewBots(t, servertest.WithFrozenClock(at))
		for _, tc := range []struct {
			name     string
			perms    uint64
			bypasses bool
		}{
			{"MANAGE_MESSAGES", guildaccess.PermManageMessages, before},
			{"MANAGE_CHANNELS", guildaccess.PermManageChannels, before},
			{"MANAGE_THREADS", messages.PermManageThreads, before},
			{"BYPASS_SLOWMODE", wire.PermBypassSlowmode, !before},
			{"no permission", 0, false},
		} {
			g, err := f.E.Server.CreateGuild(wire.GuildSpec{Name: "Slow", OwnerID: f.E.User("alice").ID,
				Roles:   []wire.RoleSpec{{Name: "r", Permissions: wire.Permissions(tc.perms)}},
				Members: []wire.GuildMemberSpec{{ID: f.E.User("bob").ID, Roles: []int{0}}, {ID: f.BotID}},
				Channel: []wire.GuildChannelSpec{{Name: "general", Type: wire.ChannelGuildText}}})
			require.NoError(t, err)
			ch := g.Channels[0].ID
			guildtest.OK(t, guildtest.SendJSON(t, http.MethodPatch, f.API("/channels/"+ch.String()), map[string]any{"rate_limit_per_user": 10}, guildtest.Bearer(f.Alice)), nil)
			send := func(h http.Header) guildtest.Resp {
				return guildtest.SendJSON(t, http.MethodPost, f.API("/channels/"+ch.String()+"/messages"), map[string]any{"content": "hi"}, h)
			}
			f.E.Clock.Set(at.Add(-4 * time.Second))
			guildtest.OK(t, send(guildtest.Bearer(f.Bob)), nil)
			f.E.Clock.Set(at) // the send that the rule decides is exactly at the moment tested
			r := send(guildtest.Bearer(f.Bob))
			if tc.bypasses {
				require.Equal(t, http.StatusOK, r.Status, "VER-1 at %s: %s bypasses slowmode: %s", at, tc.name, r.Body)
			} else {
				require.Equal(t, http.StatusTooManyRequests, r.Status, "VER-1 at %s: %s waits: %s", at, tc.name, r.Body)
				var body wire.SlowmodeRateLimited
				r.JSON(t, &body)
				assert.Equal(t, wire.CodeSlowmodeRateLimited, body.Code)
				assert.InDelta(t, 6.0, body.RetryAfter, 1e-9, "seconds left of the 10 s interval")
				assert.Equal(t, "6", r.Header.Get("Retry-After"), "the header beside the body, as the platform sends it")
				f.E.Clock.Advance(6 * time.Second)
				guildtest.OK(t, send(guildtest.Bearer(f.Bob)), nil) // the interval has passed
			}
			guildtest.OK(t, send(f.BotHeader()), nil)
			guildtest.OK(t, send(f.BotHeader()), nil) // bots are unaffected
			guildtest.OK(t, send(guildtest.Bearer(f.Alice)), nil)
			guildtest.OK(t, send(guildtest.Bearer(f.Alice)), nil) // the owner has every permission
		}
	}
}
