package expressions_test

import (
	"encoding/base64"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"sdkpp/server/servertest"
	"sdkpp/server/servertest/guildtest"
	"sdkpp/wire"
)

// pngURI is a small image data URI.
const pngURI = "data:image/png;base64,iVBORw0KGgo="

// eventBody is a valid external scheduled event starting an hour after now.
func eventBody(now time.Time) map[string]any {
	return map[string]any{"name": "Game night", "privacy_level": 2, "entity_type": 3,
		"scheduled_start_time": now.Add(time.Hour).Format(time.RFC3339), "scheduled_end_time": now.Add(2 * time.Hour).Format(time.RFC3339),
		"entity_metadata": map[string]any{"location": "The park"}}
}

// VER-1: guild emoji are created (name 2-32 of [A-Za-z0-9_], a data URI image of at most 256
// KiB), listed and deleted; scheduled events likewise (privacy_level 2, a start in the future,
// a voice channel for entity_type 2, a location and an end for 3). Bad input is 400.
func TestGuildEmojiAndScheduledEvents(t *testing.T) {
	t0 := wire.ExpressionPermissionsFrom.Add(24 * time.Hour)
	f := guildtest.NewBots(t, servertest.WithFrozenClock(t0))
	owner := guildtest.Bearer(f.Alice)
	emojis := f.API(f.GuildPath("/emojis"))
	r := guildtest.SendJSON(t, http.MethodPost, emojis, map[string]any{"name": "party_1", "image": pngURI}, owner)
	require.Equal(t, http.StatusCreated, r.Status, "%s", r.Body)
	var e wire.Emoji
	r.JSON(t, &e)
	assert.Equal(t, "party_1", e.Name)
	assert.False(t, e.Animated)
	var list []wire.Emoji
	guildtest.OK(t, guildtest.Do(t, http.MethodGet, emojis, nil, f.BotHeader()), &list)
	require.Len(t, list, 1)
	assert.Equal(t, e.ID, list[0].ID)
	big := "data:image/png;base64," + base64.StdEncoding.EncodeToString(make([]byte, wire.MaxEmojiImageBytes+1))
	for _, body := range []map[string]any{
		{"name": "x", "image": pngURI}, {"name": strings.Repeat("x", 33), "image": pngURI}, {"name": "no-dash", "image": pngURI},
		{"name": 5, "image": pngURI}, {"name": "ok_name"}, {"name": "ok_name", "image": "data:image/bmp;base64,AAAA"},
		{"name": "ok_name", "image": big}, {"name": "ok_name", "image": "data:image/png;base64,%%"},
	} {
		r := guildtest.SendJSON(t, http.MethodPost, emojis, body, owner)
		require.Equal(t, http.StatusBadRequest, r.Status, "%v: %s", body["name"], r.Body)
	}
	r = guildtest.Do(t, http.MethodDelete, emojis+"/"+e.ID.String(), nil, f.BotHeader())
	assert.Equal(t, http.StatusForbidden, r.Status, "the bot may not manage expressions: %s", r.Body)
	r = guildtest.Do(t, http.MethodDelete, emojis+"/"+e.ID.String(), nil, owner)
	require.Equal(t, http.StatusNoContent, r.Status, "%s", r.Body)
	r = guildtest.Do(t, http.MethodDelete, emojis+"/"+e.ID.String(), nil, owner)
	assert.Equal(t, http.StatusNotFound, r.Status)

	events := f.API(f.GuildPath("/scheduled-events"))
	var ev wire.ScheduledEvent
	guildtest.OK(t, guildtest.SendJSON(t, http.MethodPost, events, eventBody(t0), owner), &ev)
	assert.Equal(t, 3, ev.EntityType)
	require.NotNil(t, ev.EntityMetadata)
	assert.Equal(t, "The park", ev.EntityMetadata.Location)
	voice := f.Channel("voice").ID
	var vev wire.ScheduledEvent
	guildtest.OK(t, guildtest.SendJSON(t, http.MethodPost, events, map[string]any{"name": "Voice", "privacy_level": 2, "entity_type": 2,
		"channel_id": voice, "scheduled_start_time": t0.Add(time.Minute).Format(time.RFC3339)}, owner), &vev)
	require.NotNil(t, vev.ChannelID)
	assert.Equal(t, voice, *vev.ChannelID)
	var evs []wire.ScheduledEvent
	guildtest.OK(t, guildtest.Do(t, http.MethodGet, events, nil, f.BotHeader()), &evs)
	assert.Len(t, evs, 2)
	bad := func(change map[string]any) map[string]any {
		b := eventBody(t0)
		for k, v := range change {
			if v == nil {
				delete(b, k)
			} else {
				b[k] = v
			}
		}
		return b
	}
	for _, body := range []map[string]any{
		bad(map[string]any{"name": ""}), bad(map[string]any{"privacy_level": 1}), bad(map[string]any{"entity_type": 4}),
		bad(map[string]any{"scheduled_start_time": t0.Add(-time.Second).Format(time.RFC3339)}),
		bad(map[string]any{"scheduled_start_time": "tomorrow"}), bad(map[string]any{"scheduled_end_time": nil}),
		bad(map[string]any{"scheduled_end_time": t0.Format(time.RFC3339)}), bad(map[string]any{"entity_metadata": nil}),
		bad(map[string]any{"entity_metadata": "x"}), bad(map[string]any{"channel_id": voice}),
		bad(map[string]any{"entity_type": 2}), bad(map[string]any{"entity_type": 2, "channel_id": f.Channel("general").ID}),
		bad(map[string]any{"entity_type": 1, "channel_id": voice}), bad(map[string]any{"entity_type": 2, "channel_id": "x"}),
	} {
		r := guildtest.SendJSON(t, http.MethodPost, events, body, owner)
		require.Equal(t, http.StatusBadRequest, r.Status, "%v: %s", body, r.Body)
	}
	r = guildtest.Do(t, http.MethodDelete, events+"/"+ev.ID.String(), nil, owner)
	require.Equal(t, http.StatusNoContent, r.Status, "%s", r.Body)
	r = guildtest.Do(t, http.MethodDelete, events+"/"+ev.ID.String(), nil, owner)
	assert.Equal(t, http.StatusNotFound, r.Status)
}

// VER-1, ERR-1 (VER-3): a bot creating emoji needs MANAGE_GUILD_EXPRESSIONS until Feb 23, 2026
// and CREATE_GUILD_EXPRESSIONS (1 << 43) from then on; creating scheduled events needs
// MANAGE_EVENTS until then and CREATE_EVENTS (1 << 44) from then on. Without it: 403 50013.
func TestExpressionPermissionsFromDate(t *testing.T) {
	manage := wire.PermManageGuildExpressions | wire.PermManageEvents
	create := wire.PermCreateGuildExpressions | wire.PermCreateEvents
	for _, at := range []time.Time{wire.ExpressionPermissionsFrom.Add(-time.Millisecond), wire.ExpressionPermissionsFrom} {
		before := at.Before(wire.ExpressionPermissionsFrom)
		f := guildtest.NewBots(t, servertest.WithFrozenClock(at))
		for _, tc := range []struct {
			name    string
			perms   uint64
			creates bool
		}{
			{"MANAGE_GUILD_EXPRESSIONS, MANAGE_EVENTS", manage, before},
			{"CREATE_GUILD_EXPRESSIONS, CREATE_EVENTS", create, !before},
			{"none", 0, false},
		} {
			g, err := f.E.Server.CreateGuild(wire.GuildSpec{Name: "Expr", OwnerID: f.E.User("alice").ID,
				Roles:   []wire.RoleSpec{{Name: "r", Permissions: wire.Permissions(tc.perms)}},
				Members: []wire.GuildMemberSpec{{ID: f.BotID, Roles: []int{0}}}})
			require.NoError(t, err)
			base := "/guilds/" + g.ID.String()
			emoji := guildtest.SendJSON(t, http.MethodPost, f.API(base+"/emojis"), map[string]any{"name": "em", "image": pngURI}, f.BotHeader())
			event := guildtest.SendJSON(t, http.MethodPost, f.API(base+"/scheduled-events"), eventBody(at), f.BotHeader())
			if tc.creates {
				assert.Equal(t, http.StatusCreated, emoji.Status, "VER-1 at %s: %s creates emoji: %s", at, tc.name, emoji.Body)
				assert.Equal(t, http.StatusOK, event.Status, "VER-1 at %s: %s creates events: %s", at, tc.name, event.Body)
				continue
			}
			for _, r := range []guildtest.Resp{emoji, event} {
				require.Equal(t, http.StatusForbidden, r.Status, "ERR-1 at %s: %s: %s", at, tc.name, r.Body)
				assert.Equal(t, 50013, r.APIError(t).Code, "ERR-1")
			}
		}
	}
}
