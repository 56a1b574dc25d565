package users_test

import (
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

// USR-2, LIM-5: a guild tag is 1 to 4 characters, checked where it is set; a member who makes
// the guild their primary guild carries primary_guild in their user object, which follows the
// guild's tag and is cleared (identity_enabled and tag null) when the tag goes.
func TestPrimaryGuildTag(t *testing.T) {
	e := servertest.Start(t)
	alice, bob := e.User("alice"), e.User("bob")
	g, err := e.Server.CreateGuild(wire.GuildSpec{Name: "Tagged", OwnerID: alice.ID, Members: []wire.GuildMemberSpec{{ID: bob.ID}}})
	require.NoError(t, err)
	untagged, err := e.Server.CreateGuild(wire.GuildSpec{Name: "Plain", OwnerID: alice.ID, Members: []wire.GuildMemberSpec{{ID: bob.ID}}})
	require.NoError(t, err)
	tagURL := e.APIURL + "/dev/guilds/" + g.ID.String() + "/tag"

	for _, tc := range []struct {
		tag    string
		status int
	}{
		{"", 400}, {"A", 204}, {"AB", 204}, {"ABCD", 204}, {"ABCDE", 400}, {"日本語漢", 204}, {"日本語漢字", 400},
		{"a b", 400}, {"a\x01", 400}, {"é!", 204}, {"\u00e9\u0301", 204},
	} {
		r := guildtest.SendJSON(t, http.MethodPut, tagURL, wire.GuildTagRequest{Tag: &tc.tag}, guildtest.Admin(e))
		assert.Equal(t, tc.status, r.Status, "LIM-5: tag %q: %s", tc.tag, r.Body)
		if tc.status == 400 {
			assert.Equal(t, wire.CodeInvalidFormBody, r.APIError(t).Code, "LIM-5: tag %q", tc.tag)
		}
	}
	r := guildtest.SendJSON(t, http.MethodPut, e.APIURL+"/dev/guilds/999/tag", map[string]string{"tag": "OK"}, guildtest.Admin(e))
	assert.Equal(t, http.StatusNotFound, r.Status)

	tag, badge := "GG", "b4dge"
	require.Equal(t, 204, guildtest.SendJSON(t, http.MethodPut, tagURL, wire.GuildTagRequest{Tag: &tag, Badge: &badge}, guildtest.Admin(e)).Status)
	pgURL := e.APIURL + "/dev/users/" + bob.ID.String() + "/primary-guild"
	for _, bad := range []struct {
		name   string
		body   any
		status int
	}{
		{"guild without a tag", map[string]any{"identity_guild_id": untagged.ID}, 400},
		{"unknown guild", map[string]any{"identity_guild_id": "12345"}, 404},
		{"not a member", map[string]any{"identity_guild_id": g.ID}, 400}, // carol below
	} {
		u := pgURL
		if bad.name == "not a member" {
			u = e.APIURL + "/dev/users/" + e.User("carol").ID.String() + "/primary-guild"
		}
		r := guildtest.SendJSON(t, http.MethodPut, u, bad.body, guildtest.Admin(e))
		assert.Equal(t, bad.status, r.Status, "USR-2: %s: %s", bad.name, r.Body)
	}

	access := e.Token(t, "bob", "identify").AccessToken
	me, _ := guildtest.GetMe(t, e, access)
	assert.Nil(t, me.PrimaryGuild, "USR-2: no primary guild yet")
	r = guildtest.SendJSON(t, http.MethodPut, pgURL, map[string]any{"identity_guild_id": g.ID}, guildtest.Admin(e))
	require.Equal(t, http.StatusOK, r.Status, "%s", r.Body)

	me, raw := guildtest.GetMe(t, e, access)
	require.NotNil(t, me.PrimaryGuild, "USR-2: %s", raw.Body)
	assert.JSONEq(t, `{"identity_guild_id":"`+g.ID.String()+`","identity_enabled":true,"tag":"GG","badge":"b4dge"}`,
		string(guildtest.JSONField(t, raw.Body, "primary_guild")), "USR-2")

	newTag := "PRO"
	require.Equal(t, 204, guildtest.SendJSON(t, http.MethodPut, tagURL, wire.GuildTagRequest{Tag: &newTag}, guildtest.Admin(e)).Status)
	me, _ = guildtest.GetMe(t, e, access)
	require.NotNil(t, me.PrimaryGuild)
	assert.Equal(t, "PRO", *me.PrimaryGuild.Tag, "USR-2: the user's tag follows the guild's")
	assert.Nil(t, me.PrimaryGuild.Badge)

	r = guildtest.Do(t, http.MethodPut, tagURL, strings.NewReader(`{"tag":null}`), http.Header{"Authorization": guildtest.Admin(e)["Authorization"],
		"Content-Type": {"application/json"}})
	require.Equal(t, 204, r.Status)
	me, raw = guildtest.GetMe(t, e, access)
	assert.JSONEq(t, `{"identity_guild_id":"`+g.ID.String()+`","identity_enabled":null,"tag":null,"badge":null}`,
		string(guildtest.JSONField(t, raw.Body, "primary_guild")), "USR-2: a removed tag clears the identity")

	r = guildtest.SendJSON(t, http.MethodPut, pgURL, map[string]any{"identity_guild_id": nil}, guildtest.Admin(e))
	require.Equal(t, http.StatusOK, r.Status)
	me, _ = guildtest.GetMe(t, e, access)
	assert.Nil(t, me.PrimaryGuild, "USR-2: cleared")
}

// CON-1, VER-3: GET /users/@me/connections leaves out the connections of the two game-platform
// providers made from ConnectionsNewHiddenFrom on, and their older ones from each provider's date,
// by the service's clock: each date is tried a moment before and a moment after.
func TestConnectionsDatedRules(t *testing.T) {
	const eps = time.Millisecond
	start := wire.ConnectionsNewHiddenFrom.Add(-time.Hour)
	e := servertest.Start(t, servertest.WithFrozenClock(start))
	alice := e.User("alice")
	add := func(at time.Time, typ, id string) {
		t.Helper()
		e.Clock.Set(at)
		r := guildtest.SendJSON(t, http.MethodPost, e.APIURL+"/dev/users/"+alice.ID.String()+"/connections",
			wire.ConnectionRequest{Type: typ, ID: id, Name: id, Verified: true, Visibility: 1}, guildtest.Admin(e))
		require.Equal(t, http.StatusOK, r.Status, "%s", r.Body)
	}
	newFrom := wire.ConnectionsNewHiddenFrom
	add(newFrom.Add(-eps), wire.ConnectionProviderLegacyFirst, "xbox-legacy")
	add(newFrom, wire.ConnectionProviderLegacyFirst, "xbox-new")
	add(newFrom.Add(-eps), wire.ConnectionProviderSecond, "psn-legacy")
	add(newFrom.Add(eps), wire.ConnectionProviderSecond, "psn-new")
	add(newFrom.Add(eps), "steam", "steam")

	cases := []struct {
		name string
		at   time.Time
		want []string
	}{
		{"before the new-connection cutoff", newFrom.Add(-eps), []string{"psn-legacy", "xbox-legacy"}},
		{"after it", newFrom.Add(eps), []string{"psn-legacy", "steam", "xbox-legacy"}},
		{"just before Jul 10, 2026", wire.ConnectionsLegacyFirstHiddenFrom.Add(-eps), []string{"psn-legacy", "steam", "xbox-legacy"}},
		{"at Jul 10, 2026", wire.ConnectionsLegacyFirstHiddenFrom, []string{"psn-legacy", "steam"}},
		{"just before Sep 22, 2026", wire.ConnectionsSecondHiddenFrom.Add(-eps), []string{"psn-legacy", "steam"}},
		{"just after Sep 22, 2026", wire.ConnectionsSecondHiddenFrom.Add(eps), []string{"steam"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			e.Clock.Set(tc.at)
			access := e.Token(t, "alice", "identify connections").AccessToken // tokens live 7 days
			r := guildtest.Do(t, http.MethodGet, e.APIURL+"/users/@me/connections", nil, guildtest.Bearer(access))
			require.Equal(t, http.StatusOK, r.Status, "%s", r.Body)
			var list []wire.Connection
			r.JSON(t, &list)
			var got []string
			for _, c := range list {
				if c.ID != "steam" || !tc.at.Before(newFrom) { // steam was added after newFrom
					got = append(got, c.ID)
				}
			}
			assert.ElementsMatch(t, tc.want, got, "CON-1 (VER-3) %s", tc.name)
		})
	}

	// A token without the connections scope, and bad input to the dev route.
	other := e.Token(t, "alice", "identify").AccessToken
	assert.Equal(t, http.StatusForbidden, guildtest.Do(t, http.MethodGet, e.APIURL+"/users/@me/connections", nil, guildtest.Bearer(other)).Status)
	assert.Equal(t, http.StatusUnauthorized, guildtest.Do(t, http.MethodGet, e.APIURL+"/users/@me/connections", nil, nil).Status)
	for _, bad := range []wire.ConnectionRequest{{Type: "nope", ID: "x", Name: "x"}, {Type: "steam", Name: "x"},
		{Type: "steam", ID: "x", Name: strings.Repeat("n", 101)}, {Type: "steam", ID: "x", Name: "x", Visibility: 2}} {
		r := guildtest.SendJSON(t, http.MethodPost, e.APIURL+"/dev/users/"+alice.ID.String()+"/connections", bad, guildtest.Admin(e))
		assert.Equal(t, http.StatusBadRequest, r.Status, "%+v: %s", bad, r.Body)
	}
	r := guildtest.SendJSON(t, http.MethodPost, e.APIURL+"/dev/users/77/connections", wire.ConnectionRequest{Type: "steam", ID: "x", Name: "x"}, guildtest.Admin(e))
	assert.Equal(t, http.StatusNotFound, r.Status)
}
