package server_test

import (
	"bytes"
	"net/http"
	"strconv"
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
		r := sendJSON(t, http.MethodPut, tagURL, wire.GuildTagRequest{Tag: &tc.tag}, guildtest.Admin(e))
		assert.Equal(t, tc.status, r.Status, "LIM-5: tag %q: %s", tc.tag, r.Body)
		if tc.status == 400 {
			assert.Equal(t, wire.CodeInvalidFormBody, r.apiError(t).Code, "LIM-5: tag %q", tc.tag)
		}
	}
	r := sendJSON(t, http.MethodPut, e.APIURL+"/dev/guilds/999/tag", map[string]string{"tag": "OK"}, guildtest.Admin(e))
	assert.Equal(t, http.StatusNotFound, r.Status)

	tag, badge := "GG", "b4dge"
	require.Equal(t, 204, sendJSON(t, http.MethodPut, tagURL, wire.GuildTagRequest{Tag: &tag, Badge: &badge}, guildtest.Admin(e)).Status)
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
		r := sendJSON(t, http.MethodPut, u, bad.body, guildtest.Admin(e))
		assert.Equal(t, bad.status, r.Status, "USR-2: %s: %s", bad.name, r.Body)
	}

	access := e.Token(t, "bob", "identify").AccessToken
	me, _ := getMe(t, e, access)
	assert.Nil(t, me.PrimaryGuild, "USR-2: no primary guild yet")
	r = sendJSON(t, http.MethodPut, pgURL, map[string]any{"identity_guild_id": g.ID}, guildtest.Admin(e))
	require.Equal(t, http.StatusOK, r.Status, "%s", r.Body)

	me, raw := getMe(t, e, access)
	require.NotNil(t, me.PrimaryGuild, "USR-2: %s", raw.Body)
	assert.JSONEq(t, `{"identity_guild_id":"`+g.ID.String()+`","identity_enabled":true,"tag":"GG","badge":"b4dge"}`,
		string(guildtest.JSONField(t, raw.Body, "primary_guild")), "USR-2")

	newTag := "PRO"
	require.Equal(t, 204, sendJSON(t, http.MethodPut, tagURL, wire.GuildTagRequest{Tag: &newTag}, guildtest.Admin(e)).Status)
	me, _ = getMe(t, e, access)
	require.NotNil(t, me.PrimaryGuild)
	assert.Equal(t, "PRO", *me.PrimaryGuild.Tag, "USR-2: the user's tag follows the guild's")
	assert.Nil(t, me.PrimaryGuild.Badge)

	r = do(t, http.MethodPut, tagURL, strings.NewReader(`{"tag":null}`), http.Header{"Authorization": guildtest.Admin(e)["Authorization"],
		"Content-Type": {"application/json"}})
	require.Equal(t, 204, r.Status)
	me, raw = getMe(t, e, access)
	assert.JSONEq(t, `{"identity_guild_id":"`+g.ID.String()+`","identity_enabled":null,"tag":null,"badge":null}`,
		string(guildtest.JSONField(t, raw.Body, "primary_guild")), "USR-2: a removed tag clears the identity")

	r = sendJSON(t, http.MethodPut, pgURL, map[string]any{"identity_guild_id": nil}, guildtest.Admin(e))
	require.Equal(t, http.StatusOK, r.Status)
	me, _ = getMe(t, e, access)
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
		r := sendJSON(t, http.MethodPost, e.APIURL+"/dev/users/"+alice.ID.String()+"/connections",
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
			r := do(t, http.MethodGet, e.APIURL+"/users/@me/connections", nil, bearer(access))
			require.Equal(t, http.StatusOK, r.Status, "%s", r.Body)
			var list []wire.Connection
			r.json(t, &list)
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
	assert.Equal(t, http.StatusForbidden, do(t, http.MethodGet, e.APIURL+"/users/@me/connections", nil, bearer(other)).Status)
	assert.Equal(t, http.StatusUnauthorized, do(t, http.MethodGet, e.APIURL+"/users/@me/connections", nil, nil).Status)
	for _, bad := range []wire.ConnectionRequest{{Type: "nope", ID: "x", Name: "x"}, {Type: "steam", Name: "x"},
		{Type: "steam", ID: "x", Name: strings.Repeat("n", 101)}, {Type: "steam", ID: "x", Name: "x", Visibility: 2}} {
		r := sendJSON(t, http.MethodPost, e.APIURL+"/dev/users/"+alice.ID.String()+"/connections", bad, guildtest.Admin(e))
		assert.Equal(t, http.StatusBadRequest, r.Status, "%+v: %s", bad, r.Body)
	}
	r := sendJSON(t, http.MethodPost, e.APIURL+"/dev/users/77/connections", wire.ConnectionRequest{Type: "steam", ID: "x", Name: "x"}, guildtest.Admin(e))
	assert.Equal(t, http.StatusNotFound, r.Status)
}

// APP-1: flags is the 32-bit field (bits 0 to 30), flags_new every bit as a string, on every
// route that returns the application; PATCH keeps taking the integer field.
func TestApplicationFlags(t *testing.T) {
	e := servertest.Start(t)
	const all = uint64(1)<<40 | uint64(1)<<31 | wire.AppFlagGatewayMessageContent | wire.AppFlagEmbedded
	r := sendJSON(t, http.MethodPut, e.APIURL+"/dev/applications/"+e.App.ID.String()+"/flags",
		map[string]any{"flags": strconv.FormatUint(all, 10)}, guildtest.Admin(e))
	require.Equal(t, http.StatusOK, r.Status, "%s", r.Body)

	for _, path := range []string{"/applications/@me", "/oauth2/applications/@me"} {
		r := do(t, http.MethodGet, e.APIURL+path, nil, bot(e.App.BotToken))
		require.Equal(t, http.StatusOK, r.Status, "%s: %s", path, r.Body)
		assert.JSONEq(t, strconv.FormatUint(wire.AppFlagGatewayMessageContent|wire.AppFlagEmbedded, 10),
			string(guildtest.JSONField(t, r.Body, "flags")), "APP-1: %s flags holds bits 0-30 as an integer", path)
		assert.JSONEq(t, `"`+strconv.FormatUint(all, 10)+`"`, string(guildtest.JSONField(t, r.Body, "flags_new")),
			"APP-1: %s flags_new holds every bit as a string", path)
		var app wire.Application
		r.json(t, &app)
		assert.Equal(t, e.App.ID, app.ID)
		assert.Equal(t, e.App.PublicKey, app.VerifyKey)
		require.NotNil(t, app.Bot)
		assert.Equal(t, e.App.BotUserID, app.Bot.ID)
		require.NotNil(t, app.Owner, "%s: the owner, which client libraries read", path)
		assert.Equal(t, 1<<10, app.Owner.Flags, "the owner is the publisher's team pseudo-user")
		assert.Equal(t, "team"+app.Owner.ID.String(), app.Owner.Username)
		assert.Equal(t, http.StatusUnauthorized, do(t, http.MethodGet, e.APIURL+path, nil, bearer("nope")).Status)
	}

	r = do(t, http.MethodGet, e.APIURL+"/oauth2/applications/"+e.App.ID.String(), nil, bot(e.App.BotToken))
	require.Equal(t, http.StatusOK, r.Status, "client libraries ask for their own id: %s", r.Body)
	assert.JSONEq(t, `"`+strconv.FormatUint(all, 10)+`"`, string(guildtest.JSONField(t, r.Body, "flags_new")), "APP-1")
	r = do(t, http.MethodGet, e.APIURL+"/oauth2/applications/"+e.ChildApp.ID.String(), nil, bot(e.App.BotToken))
	assert.Equal(t, http.StatusNotFound, r.Status)
	assert.Equal(t, wire.CodeUnknownApplication, r.apiError(t).Code)

	// GET /oauth2/@me: a Bearer token's authorization with its application.
	for _, tc := range []struct {
		scope    string
		withUser bool
	}{{"identify guilds", true}, {"guilds", false}} {
		access := e.Token(t, "alice", tc.scope).AccessToken
		r := do(t, http.MethodGet, e.APIURL+"/oauth2/@me", nil, bearer(access))
		require.Equal(t, http.StatusOK, r.Status, "%s", r.Body)
		var cur wire.CurrentAuthorization
		r.json(t, &cur)
		assert.Equal(t, e.App.ID, cur.Application.ID)
		assert.Equal(t, strconv.FormatUint(all, 10), cur.Application.FlagsNew, "APP-1")
		assert.Equal(t, int32(wire.AppFlagGatewayMessageContent|wire.AppFlagEmbedded), cur.Application.Flags, "APP-1")
		assert.ElementsMatch(t, strings.Fields(tc.scope), cur.Scopes)
		assert.NotEmpty(t, cur.Expires)
		assert.Equal(t, tc.withUser, cur.User != nil, "the user with scope identify only")
	}
	assert.Equal(t, http.StatusUnauthorized, do(t, http.MethodGet, e.APIURL+"/oauth2/@me", nil, bot(e.App.BotToken)).Status)

	patch := func(body string) resp {
		return do(t, http.MethodPatch, e.APIURL+"/applications/@me", strings.NewReader(body),
			http.Header{"Authorization": {"Bot " + e.App.BotToken}, "Content-Type": {"application/json"}})
	}
	legacy := wire.AppFlagGatewayMessageContent | wire.AppFlagEmbedded
	r = patch(`{"flags":` + strconv.FormatUint(legacy|wire.AppFlagGatewayMessageContentLimited, 10) + `}`)
	require.Equal(t, http.StatusOK, r.Status, "APP-1: request payloads use flags: %s", r.Body)
	var app wire.Application
	r.json(t, &app)
	assert.Equal(t, strconv.FormatUint(all|wire.AppFlagGatewayMessageContentLimited, 10), app.FlagsNew,
		"APP-1: the bits above 30 stay")
	for _, bad := range []string{`{"flags":"` + strconv.FormatUint(legacy, 10) + `"}`, `{"flags":4294967296}`, `{"flags":-1}`,
		`{"flags":1}`, `{"flags":1.5}`} {
		r := patch(bad)
		assert.Equal(t, http.StatusBadRequest, r.Status, "APP-1: %s: %s", bad, r.Body)
	}
	for _, bad := range []string{`{"flags":"x"}`, `{"flags":"9223372036854775808"}`, `{"flags":[]}`} {
		r := do(t, http.MethodPut, e.APIURL+"/dev/applications/"+e.App.ID.String()+"/flags", strings.NewReader(bad),
			http.Header{"Authorization": guildtest.Admin(e)["Authorization"], "Content-Type": {"application/json"}})
		assert.Equal(t, http.StatusBadRequest, r.Status, "%s: %s", bad, r.Body)
	}
}

// ST-3, VER-3: a subscription is active (0), ending (2) once canceled and inactive (1) once its
// period is over, by the service's clock: tried a moment before and after the period's end.
func TestSubscriptionStatuses(t *testing.T) {
	start := time.Date(2026, time.November, 1, 12, 0, 0, 0, time.UTC)
	e := servertest.Start(t, servertest.WithFrozenClock(start))
	r := sendJSON(t, http.MethodPost, e.APIURL+"/dev/applications/"+e.App.ID.String()+"/skus",
		wire.SKURequest{Type: wire.SKUSubscription, Name: "Premium"}, guildtest.Admin(e))
	require.Equal(t, http.StatusOK, r.Status, "%s", r.Body)
	var sku wire.SKU
	r.json(t, &sku)
	subscribe := func(user wire.Snowflake) wire.Subscription {
		r := sendJSON(t, http.MethodPost, e.APIURL+"/dev/skus/"+sku.ID.String()+"/subscriptions",
			wire.SubscriptionRequest{UserID: user, PeriodSeconds: 3600, Country: "FR"}, guildtest.Admin(e))
		require.Equal(t, http.StatusOK, r.Status, "%s", r.Body)
		var x wire.Subscription
		r.json(t, &x)
		return x
	}
	kept, canceled := subscribe(e.User("alice").ID), subscribe(e.User("bob").ID)
	e.Clock.Set(start.Add(10 * time.Minute))
	require.Equal(t, http.StatusOK, do(t, http.MethodPost, e.APIURL+"/dev/subscriptions/"+canceled.ID.String()+"/cancel", nil, guildtest.Admin(e)).Status)

	get := func(id wire.Snowflake) wire.Subscription {
		r := do(t, http.MethodGet, e.APIURL+"/skus/"+sku.ID.String()+"/subscriptions/"+id.String(), nil, bot(e.App.BotToken))
		require.Equal(t, http.StatusOK, r.Status, "%s", r.Body)
		var x wire.Subscription
		r.json(t, &x)
		return x
	}
	end := start.Add(time.Hour)
	for _, tc := range []struct {
		at             time.Time
		kept, canceled int
	}{
		{end.Add(-time.Millisecond), wire.SubscriptionActive, wire.SubscriptionEnding},
		{end, wire.SubscriptionInactive, wire.SubscriptionInactive},
		{end.Add(time.Millisecond), wire.SubscriptionInactive, wire.SubscriptionInactive},
	} {
		e.Clock.Set(tc.at)
		assert.Equal(t, tc.kept, get(kept.ID).Status, "ST-3 (VER-3) at %s", tc.at)
		assert.Equal(t, tc.canceled, get(canceled.ID).Status, "ST-3 (VER-3) at %s", tc.at)
	}
	assert.Equal(t, 1, wire.SubscriptionInactive, "ST-3")
	assert.Equal(t, 2, wire.SubscriptionEnding, "ST-3")

	r = do(t, http.MethodGet, e.APIURL+"/skus/"+sku.ID.String()+"/subscriptions?user_id="+e.User("bob").ID.String(), nil, bot(e.App.BotToken))
	require.Equal(t, http.StatusOK, r.Status)
	var list []wire.Subscription
	r.json(t, &list)
	require.Len(t, list, 1)
	assert.Equal(t, canceled.ID, list[0].ID)
	require.NotNil(t, list[0].CanceledAt)

	// before and after as times, as client libraries send them.
	for _, tc := range []struct {
		query string
		n     int
	}{
		{"?before=" + start.Add(-time.Second).Format(time.RFC3339), 0}, {"?after=" + start.Add(-time.Second).Format(time.RFC3339), 2},
		{"?before=" + start.Add(time.Second).Format(time.RFC3339), 2}, {"?after=" + start.Add(time.Second).Format(time.RFC3339), 0},
		{"?after=" + kept.ID.String(), 1}, {"?before=" + canceled.ID.String(), 1},
	} {
		r := do(t, http.MethodGet, e.APIURL+"/skus/"+sku.ID.String()+"/subscriptions"+tc.query, nil, bot(e.App.BotToken))
		require.Equal(t, http.StatusOK, r.Status, "%s: %s", tc.query, r.Body)
		var list []wire.Subscription
		r.json(t, &list)
		assert.Len(t, list, tc.n, tc.query)
	}
	byUser := e.APIURL + "/skus/" + sku.ID.String() + "/subscriptions/" + kept.ID.String() + "?user_id="
	assert.Equal(t, http.StatusOK, do(t, http.MethodGet, byUser+e.User("alice").ID.String(), nil, bot(e.App.BotToken)).Status)
	assert.Equal(t, http.StatusNotFound, do(t, http.MethodGet, byUser+e.User("bob").ID.String(), nil, bot(e.App.BotToken)).Status)
	assert.Equal(t, http.StatusBadRequest, do(t, http.MethodGet, byUser+"x", nil, bot(e.App.BotToken)).Status)

	for _, q := range []string{"?limit=0", "?limit=101", "?user_id=x", "?before=-1", "?after=yesterday", "?user_id=2026-01-01T00:00:00Z"} {
		r := do(t, http.MethodGet, e.APIURL+"/skus/"+sku.ID.String()+"/subscriptions"+q, nil, bot(e.App.BotToken))
		assert.Equal(t, http.StatusBadRequest, r.Status, "%s: %s", q, r.Body)
	}
	other := e.ChildApp.BotToken // another application's bot does not see this SKU
	assert.Equal(t, http.StatusNotFound, do(t, http.MethodGet, e.APIURL+"/skus/"+sku.ID.String()+"/subscriptions", nil, bot(other)).Status)
	assert.Equal(t, http.StatusNotFound, do(t, http.MethodGet, e.APIURL+"/skus/"+sku.ID.String()+"/subscriptions/1", nil, bot(e.App.BotToken)).Status)
}

// VER-5: the /.proxy/ prefix of activities is optional: a path with it is served as without.
func TestProxyPrefixOptional(t *testing.T) {
	e := servertest.Start(t)
	access := e.Token(t, "alice", "identify").AccessToken
	plain := do(t, http.MethodGet, e.URL+"/api/v10/users/@me", nil, bearer(access))
	require.Equal(t, http.StatusOK, plain.Status)
	proxied := do(t, http.MethodGet, e.URL+"/.proxy/api/v10/users/@me", nil, bearer(access))
	assert.Equal(t, http.StatusOK, proxied.Status, "VER-5")
	assert.JSONEq(t, string(plain.Body), string(proxied.Body), "VER-5")
	assert.Equal(t, http.StatusOK, do(t, http.MethodGet, e.URL+"/.proxy/healthz", nil, nil).Status, "VER-5")
	assert.Equal(t, http.StatusNotFound, do(t, http.MethodGet, e.URL+"/.proxyx/healthz", nil, nil).Status)
	assert.Equal(t, http.StatusNotFound, do(t, http.MethodGet, e.URL+"/.proxy/nothing", nil, nil).Status)
}

// GLD-5: Create Guild is removed: a bot gets 403 20001, a user's token 403 50001, no credential 401.
func TestCreateGuildRefused(t *testing.T) {
	e := servertest.Start(t)
	access := e.Token(t, "alice", "identify guilds").AccessToken
	for _, path := range []string{"/guilds", "/guilds/templates/abc"} {
		for _, tc := range []struct {
			auth   http.Header
			status int
			code   int
		}{
			{bot(e.App.BotToken), http.StatusForbidden, wire.CodeBotsCannotUse},
			{bearer(access), http.StatusForbidden, wire.CodeMissingAccess},
			{nil, http.StatusUnauthorized, 0},
			{bot("forged"), http.StatusUnauthorized, 0},
		} {
			h := http.Header{"Content-Type": {"application/json"}}
			for k, v := range tc.auth {
				h[k] = v
			}
			r := do(t, http.MethodPost, e.APIURL+path, bytes.NewReader([]byte(`{"name":"mine"}`)), h)
			assert.Equal(t, tc.status, r.Status, "GLD-5: %s %v", path, tc.auth)
			assert.Equal(t, tc.code, r.apiError(t).Code, "GLD-5: %s", path)
		}
	}
}

// The dev and API routes of users and apps answer bad input with a 4xx and the platform's body.
func TestUsersAppsBadInput(t *testing.T) {
	e := servertest.Start(t)
	paths := []struct{ method, path string }{
		{"PUT", "/dev/guilds/x/tag"}, {"PUT", "/dev/guilds/1/tag"}, {"PUT", "/dev/users/x/primary-guild"},
		{"PUT", "/dev/users/" + e.User("alice").ID.String() + "/primary-guild"}, {"POST", "/dev/users/1/connections"},
		{"PUT", "/dev/applications/x/flags"}, {"PUT", "/dev/applications/" + e.App.ID.String() + "/flags"},
		{"POST", "/dev/applications/" + e.App.ID.String() + "/skus"}, {"POST", "/dev/skus/1/subscriptions"},
		{"POST", "/dev/subscriptions/x/cancel"}, {"POST", "/dev/subscriptions/1/cancel"},
		{"PATCH", "/applications/@me"}, {"GET", "/skus/x/subscriptions"}, {"GET", "/skus/1/subscriptions/x"},
		{"GET", "/oauth2/applications/x"}, {"GET", "/oauth2/@me"}, {"PUT", "/channels/x/voice-status"},
		{"PUT", "/channels/1/voice-status"}, {"GET", "/guilds/x/audit-logs"}, {"GET", "/guilds/1/audit-logs"},
		{"POST", "/guilds"}, {"POST", "/guilds/templates/x"},
	}
	bodies := []string{"", "{", "[]", "null", `{"tag": 5}`, `{"tag": "` + strings.Repeat("x", 1000) + `"}`,
		`{"identity_guild_id": "x"}`, `{"identity_guild_id": "1"}`, `{"type": 9, "name": ""}`, `{"user_id": "1", "period_seconds": -1}`,
		`{"flags": {}}`, `{"flags": "18446744073709551615"}`, `{"status": 1}`, `{"status": "` + strings.Repeat("s", 600) + `"}`, `{"type": "steam", "id": "` + strings.Repeat("i", 200) + `"}`}
	for _, p := range paths {
		for _, b := range bodies {
			for _, auth := range []string{"Admin " + e.Creds.AdminToken, "Bot " + e.App.BotToken, ""} {
				r := do(t, p.method, e.APIURL+p.path, strings.NewReader(b), http.Header{"Content-Type": {"application/json"},
					"Authorization": {auth}})
				if r.Status >= 400 {
					assert.NotEmpty(t, r.apiError(t).Message, "%s %s %s: the platform's error body", p.method, p.path, b)
				}
			}
		}
	}
}
