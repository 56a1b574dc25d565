package server_test

import (
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"sdkpp/server/guildaccess"
	"sdkpp/server/messages"
	"sdkpp/server/servertest"
	"sdkpp/wire"
)

// VER-1: Modify Channel sets a guild text channel's name, topic and slowmode
// (rate_limit_per_user, 0 to 21600 seconds); it needs MANAGE_CHANNELS, and bad values are 400.
func TestModifyChannelSlowmode(t *testing.T) {
	f := newBotFixture(t)
	general := f.channel("general").ID
	path := f.api("/channels/" + general.String())
	var ch wire.Channel
	ok(t, sendJSON(t, http.MethodPatch, path, map[string]any{"rate_limit_per_user": 30, "topic": "news", "name": "lobby"}, bearer(f.alice)), &ch)
	assert.Equal(t, 30, ch.RateLimitPerUser)
	require.NotNil(t, ch.Topic)
	assert.Equal(t, "news", *ch.Topic)
	assert.Equal(t, "lobby", ch.Name)
	ok(t, do(t, http.MethodGet, path, nil, f.botHeader()), &ch)
	assert.Equal(t, 30, ch.RateLimitPerUser, "GET /channels/{id} shows the slowmode")
	ok(t, sendJSON(t, http.MethodPatch, path, map[string]any{"topic": nil}, bearer(f.alice)), &ch)
	assert.Nil(t, ch.Topic)
	assert.Equal(t, 30, ch.RateLimitPerUser, "an absent field is kept")

	r := sendJSON(t, http.MethodPatch, path, map[string]any{"rate_limit_per_user": 0}, bearer(f.bob))
	require.Equal(t, http.StatusForbidden, r.Status, "%s", r.Body)
	assert.Equal(t, 50013, r.apiError(t).Code, "MANAGE_CHANNELS is needed")
	for _, body := range []map[string]any{
		{"rate_limit_per_user": wire.MaxRateLimitPerUser + 1}, {"rate_limit_per_user": -1}, {"rate_limit_per_user": "x"},
		{"rate_limit_per_user": 1.5}, {"name": ""}, {"name": 5}, {"topic": string(make([]byte, wire.MaxTopicChars+1))},
	} {
		r := sendJSON(t, http.MethodPatch, path, body, bearer(f.alice))
		require.Equal(t, http.StatusBadRequest, r.Status, "%v: %s", body, r.Body)
		assert.Equal(t, wire.CodeInvalidFormBody, r.apiError(t).Code)
	}
	r = sendJSON(t, http.MethodPatch, f.api("/channels/"+f.channel("voice").ID.String()), map[string]any{"rate_limit_per_user": 5}, bearer(f.alice))
	assert.Equal(t, http.StatusBadRequest, r.Status, "a voice channel has no slowmode: %s", r.Body)
}

// VER-1, VER-3: in a slowmode channel a second message within the interval is 429 20016 with
// retry_after, unless the sender may bypass slowmode: from Feb 23, 2026 with BYPASS_SLOWMODE
// (1 << 52) only, just before it with MANAGE_MESSAGES, MANAGE_CHANNELS or MANAGE_THREADS. Once
// the interval has passed the member sends again; bots are unaffected, as on the platform.
func TestSlowmodeBypassFromDate(t *testing.T) {
	for _, at := range []time.Time{wire.BypassSlowmodeFrom.Add(-time.Millisecond), wire.BypassSlowmodeFrom} {
		before := at.Before(wire.BypassSlowmodeFrom)
		f := newBotFixture(t, servertest.WithFrozenClock(at))
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
			g, err := f.e.Server.CreateGuild(wire.GuildSpec{Name: "Slow", OwnerID: f.e.User("alice").ID,
				Roles:   []wire.RoleSpec{{Name: "r", Permissions: wire.Permissions(tc.perms)}},
				Members: []wire.GuildMemberSpec{{ID: f.e.User("bob").ID, Roles: []int{0}}, {ID: f.botID}},
				Channel: []wire.GuildChannelSpec{{Name: "general", Type: wire.ChannelGuildText}}})
			require.NoError(t, err)
			ch := g.Channels[0].ID
			ok(t, sendJSON(t, http.MethodPatch, f.api("/channels/"+ch.String()), map[string]any{"rate_limit_per_user": 10}, bearer(f.alice)), nil)
			send := func(h http.Header) resp {
				return sendJSON(t, http.MethodPost, f.api("/channels/"+ch.String()+"/messages"), map[string]any{"content": "hi"}, h)
			}
			f.e.Clock.Set(at.Add(-4 * time.Second))
			ok(t, send(bearer(f.bob)), nil)
			f.e.Clock.Set(at) // the send that the rule decides is exactly at the moment tested
			r := send(bearer(f.bob))
			if tc.bypasses {
				require.Equal(t, http.StatusOK, r.Status, "VER-1 at %s: %s bypasses slowmode: %s", at, tc.name, r.Body)
			} else {
				require.Equal(t, http.StatusTooManyRequests, r.Status, "VER-1 at %s: %s waits: %s", at, tc.name, r.Body)
				var body wire.SlowmodeRateLimited
				r.json(t, &body)
				assert.Equal(t, wire.CodeSlowmodeRateLimited, body.Code)
				assert.InDelta(t, 6.0, body.RetryAfter, 1e-9, "seconds left of the 10 s interval")
				f.e.Clock.Advance(6 * time.Second)
				ok(t, send(bearer(f.bob)), nil) // the interval has passed
			}
			ok(t, send(f.botHeader()), nil)
			ok(t, send(f.botHeader()), nil) // bots are unaffected
			ok(t, send(bearer(f.alice)), nil)
			ok(t, send(bearer(f.alice)), nil) // the owner has every permission
		}
	}
}
