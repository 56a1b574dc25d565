package apps_test

import (
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

// APP-1: flags is the 32-bit field (bits 0 to 30), flags_new every bit as a string, on every
// route that returns the application; PATCH keeps taking the integer field.
func TestApplicationFlags(t *testing.T) {
	e := servertest.Start(t)
	const all = uint64(1)<<40 | uint64(1)<<31 | wire.AppFlagGatewayMessageContent | wire.AppFlagEmbedded
	r := guildtest.SendJSON(t, http.MethodPut, e.APIURL+"/dev/applications/"+e.App.ID.String()+"/flags",
		map[string]any{"flags": strconv.FormatUint(all, 10)}, guildtest.Admin(e))
	require.Equal(t, http.StatusOK, r.Status, "%s", r.Body)

	for _, path := range []string{"/applications/@me", "/oauth2/applications/@me"} {
		r := guildtest.Do(t, http.MethodGet, e.APIURL+path, nil, guildtest.Bot(e.App.BotToken))
		require.Equal(t, http.StatusOK, r.Status, "%s: %s", path, r.Body)
		assert.JSONEq(t, strconv.FormatUint(wire.AppFlagGatewayMessageContent|wire.AppFlagEmbedded, 10),
			string(guildtest.JSONField(t, r.Body, "flags")), "APP-1: %s flags holds bits 0-30 as an integer", path)
		assert.JSONEq(t, `"`+strconv.FormatUint(all, 10)+`"`, string(guildtest.JSONField(t, r.Body, "flags_new")),
			"APP-1: %s flags_new holds every bit as a string", path)
		var app wire.Application
		r.JSON(t, &app)
		assert.Equal(t, e.App.ID, app.ID)
		assert.Equal(t, e.App.PublicKey, app.VerifyKey)
		require.NotNil(t, app.Bot)
		assert.Equal(t, e.App.BotUserID, app.Bot.ID)
		require.NotNil(t, app.Owner, "%s: the owner, which client libraries read", path)
		assert.Equal(t, 1<<10, app.Owner.Flags, "the owner is the publisher's team pseudo-user")
		assert.Equal(t, "team"+app.Owner.ID.String(), app.Owner.Username)
		assert.Equal(t, http.StatusUnauthorized, guildtest.Do(t, http.MethodGet, e.APIURL+path, nil, guildtest.Bearer("nope")).Status)
	}

	r = guildtest.Do(t, http.MethodGet, e.APIURL+"/oauth2/applications/"+e.App.ID.String(), nil, guildtest.Bot(e.App.BotToken))
	require.Equal(t, http.StatusOK, r.Status, "client libraries ask for their own id: %s", r.Body)
	assert.JSONEq(t, `"`+strconv.FormatUint(all, 10)+`"`, string(guildtest.JSONField(t, r.Body, "flags_new")), "APP-1")
	r = guildtest.Do(t, http.MethodGet, e.APIURL+"/oauth2/applications/"+e.ChildApp.ID.String(), nil, guildtest.Bot(e.App.BotToken))
	assert.Equal(t, http.StatusNotFound, r.Status)
	assert.Equal(t, wire.CodeUnknownApplication, r.APIError(t).Code)

	// GET /oauth2/@me: a Bearer token's authorization with its application.
	for _, tc := range []struct {
		scope    string
		withUser bool
	}{{"identify guilds", true}, {"guilds", false}} {
		access := e.Token(t, "alice", tc.scope).AccessToken
		r := guildtest.Do(t, http.MethodGet, e.APIURL+"/oauth2/@me", nil, guildtest.Bearer(access))
		require.Equal(t, http.StatusOK, r.Status, "%s", r.Body)
		var cur wire.CurrentAuthorization
		r.JSON(t, &cur)
		assert.Equal(t, e.App.ID, cur.Application.ID)
		assert.Equal(t, strconv.FormatUint(all, 10), cur.Application.FlagsNew, "APP-1")
		assert.Equal(t, int32(wire.AppFlagGatewayMessageContent|wire.AppFlagEmbedded), cur.Application.Flags, "APP-1")
		assert.ElementsMatch(t, strings.Fields(tc.scope), cur.Scopes)
		assert.NotEmpty(t, cur.Expires)
		assert.Equal(t, tc.withUser, cur.User != nil, "the user with scope identify only")
	}
	assert.Equal(t, http.StatusUnauthorized, guildtest.Do(t, http.MethodGet, e.APIURL+"/oauth2/@me", nil, guildtest.Bot(e.App.BotToken)).Status)

	patch := func(body string) guildtest.Resp {
		return guildtest.Do(t, http.MethodPatch, e.APIURL+"/applications/@me", strings.NewReader(body),
			http.Header{"Authorization": {"Bot " + e.App.BotToken}, "Content-Type": {"application/json"}})
	}
	legacy := wire.AppFlagGatewayMessageContent | wire.AppFlagEmbedded
	r = patch(`{"flags":` + strconv.FormatUint(legacy|wire.AppFlagGatewayMessageContentLimited, 10) + `}`)
	require.Equal(t, http.StatusOK, r.Status, "APP-1: request payloads use flags: %s", r.Body)
	var app wire.Application
	r.JSON(t, &app)
	assert.Equal(t, strconv.FormatUint(all|wire.AppFlagGatewayMessageContentLimited, 10), app.FlagsNew,
		"APP-1: the bits above 30 stay")
	for _, bad := range []string{`{"flags":"` + strconv.FormatUint(legacy, 10) + `"}`, `{"flags":4294967296}`, `{"flags":-1}`,
		`{"flags":1}`, `{"flags":1.5}`} {
		r := patch(bad)
		assert.Equal(t, http.StatusBadRequest, r.Status, "APP-1: %s: %s", bad, r.Body)
	}
	for _, bad := range []string{`{"flags":"x"}`, `{"flags":"9223372036854775808"}`, `{"flags":[]}`} {
		r := guildtest.Do(t, http.MethodPut, e.APIURL+"/dev/applications/"+e.App.ID.String()+"/flags", strings.NewReader(bad),
			http.Header{"Authorization": guildtest.Admin(e)["Authorization"], "Content-Type": {"application/json"}})
		assert.Equal(t, http.StatusBadRequest, r.Status, "%s: %s", bad, r.Body)
	}
}

// ST-3, VER-3: a subscription is active (0), ending (2) once canceled and inactive (1) once its
// period is over, by the service's clock: tried a moment before and after the period's end.
func TestSubscriptionStatuses(t *testing.T) {
	start := time.Date(2026, time.November, 1, 12, 0, 0, 0, time.UTC)
	e := servertest.Start(t, servertest.WithFrozenClock(start))
	r := guildtest.SendJSON(t, http.MethodPost, e.APIURL+"/dev/applications/"+e.App.ID.String()+"/skus",
		wire.SKURequest{Type: wire.SKUSubscription, Name: "Premium"}, guildtest.Admin(e))
	require.Equal(t, http.StatusOK, r.Status, "%s", r.Body)
	var sku wire.SKU
	r.JSON(t, &sku)
	subscribe := func(user wire.Snowflake) wire.Subscription {
		r := guildtest.SendJSON(t, http.MethodPost, e.APIURL+"/dev/skus/"+sku.ID.String()+"/subscriptions",
			wire.SubscriptionRequest{UserID: user, PeriodSeconds: 3600, Country: "FR"}, guildtest.Admin(e))
		require.Equal(t, http.StatusOK, r.Status, "%s", r.Body)
		var x wire.Subscription
		r.JSON(t, &x)
		return x
	}
	kept, canceled := subscribe(e.User("alice").ID), subscribe(e.User("bob").ID)
	e.Clock.Set(start.Add(10 * time.Minute))
	require.Equal(t, http.StatusOK, guildtest.Do(t, http.MethodPost, e.APIURL+"/dev/subscriptions/"+canceled.ID.String()+"/cancel", nil, guildtest.Admin(e)).Status)

	get := func(id wire.Snowflake) wire.Subscription {
		r := guildtest.Do(t, http.MethodGet, e.APIURL+"/skus/"+sku.ID.String()+"/subscriptions/"+id.String(), nil, guildtest.Bot(e.App.BotToken))
		require.Equal(t, http.StatusOK, r.Status, "%s", r.Body)
		var x wire.Subscription
		r.JSON(t, &x)
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

	r = guildtest.Do(t, http.MethodGet, e.APIURL+"/skus/"+sku.ID.String()+"/subscriptions?user_id="+e.User("bob").ID.String(), nil, guildtest.Bot(e.App.BotToken))
	require.Equal(t, http.StatusOK, r.Status)
	var list []wire.Subscription
	r.JSON(t, &list)
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
		r := guildtest.Do(t, http.MethodGet, e.APIURL+"/skus/"+sku.ID.String()+"/subscriptions"+tc.query, nil, guildtest.Bot(e.App.BotToken))
		require.Equal(t, http.StatusOK, r.Status, "%s: %s", tc.query, r.Body)
		var list []wire.Subscription
		r.JSON(t, &list)
		assert.Len(t, list, tc.n, tc.query)
	}
	byUser := e.APIURL + "/skus/" + sku.ID.String() + "/subscriptions/" + kept.ID.String() + "?user_id="
	assert.Equal(t, http.StatusOK, guildtest.Do(t, http.MethodGet, byUser+e.User("alice").ID.String(), nil, guildtest.Bot(e.App.BotToken)).Status)
	assert.Equal(t, http.StatusNotFound, guildtest.Do(t, http.MethodGet, byUser+e.User("bob").ID.String(), nil, guildtest.Bot(e.App.BotToken)).Status)
	assert.Equal(t, http.StatusBadRequest, guildtest.Do(t, http.MethodGet, byUser+"x", nil, guildtest.Bot(e.App.BotToken)).Status)

	for _, q := range []string{"?limit=0", "?limit=101", "?user_id=x", "?before=-1", "?after=yesterday", "?user_id=2026-01-01T00:00:00Z"} {
		r := guildtest.Do(t, http.MethodGet, e.APIURL+"/skus/"+sku.ID.String()+"/subscriptions"+q, nil, guildtest.Bot(e.App.BotToken))
		assert.Equal(t, http.StatusBadRequest, r.Status, "%s: %s", q, r.Body)
	}
	other := e.ChildApp.BotToken // another application's bot does not see this SKU
	assert.Equal(t, http.StatusNotFound, guildtest.Do(t, http.MethodGet, e.APIURL+"/skus/"+sku.ID.String()+"/subscriptions", nil, guildtest.Bot(other)).Status)
	assert.Equal(t, http.StatusNotFound, guildtest.Do(t, http.MethodGet, e.APIURL+"/skus/"+sku.ID.String()+"/subscriptions/1", nil, guildtest.Bot(e.App.BotToken)).Status)
}
