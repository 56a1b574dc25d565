package messages_test

import (
	"net/http"
	"net/url"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"sdkpp/server/servertest/guildtest"
	"sdkpp/wire"
)

// searchGuild searches the fixture's guild with the query and the header: the status and, on
// 200, the result.
func searchGuild(t *testing.T, f *guildtest.Bots, q url.Values, h http.Header) (guildtest.Resp, wire.GuildSearchResult) {
	t.Helper()
	r := guildtest.Do(t, http.MethodGet, f.API(f.GuildPath("/messages/search")+"?"+q.Encode()), nil, h)
	var out wire.GuildSearchResult
	if r.Status == http.StatusOK {
		r.JSON(t, &out)
	}
	return r, out
}

// GLD-3: Search Guild Messages answers 202 110000 until the guild's index is built (its first
// search starts that), then filters by content, author, channel and mentions, sorts by time or
// relevance and pages; it searches only channels the caller may read the history of, and a bot
// needs the MESSAGE_CONTENT intent.
func TestSearchGuildMessages(t *testing.T) {
	f := guildtest.NewBots(t)
	post := func(channel, content string, h http.Header) wire.GuildMessage {
		t.Helper()
		var m wire.GuildMessage
		guildtest.OK(t, guildtest.SendJSON(t, http.MethodPost, f.API("/channels/"+f.Channel(channel).ID.String()+"/messages"), map[string]any{"content": content}, h), &m)
		return m
	}
	nine := post("general", "the raid starts at nine", guildtest.Bearer(f.Alice))
	loud := post("general", "raid raid raid, bring potions <@"+f.E.User("bob").ID.String()+">", f.BotHeader())
	staff := post("staff", "raid loot rules", guildtest.Bearer(f.Alice))
	post("hidden", "the secret raid", guildtest.Bearer(f.Alice))

	r, _ := searchGuild(t, f, url.Values{"content": {"raid"}}, f.BotHeader())
	require.Equal(t, http.StatusForbidden, r.Status, "GLD-3: the app has no message content intent: %s", r.Body)
	assert.Equal(t, 50001, r.APIError(t).Code)
	guildtest.SetAppFlags(t, f.E, wire.AppFlagGatewayMessageContentLimited)

	r, _ = searchGuild(t, f, url.Values{"content": {"raid"}}, f.BotHeader())
	require.Equal(t, http.StatusAccepted, r.Status, "GLD-3: the first search of a guild: %s", r.Body)
	assert.JSONEq(t, `{"message":"Index not yet available. Try again later","code":110000,"documents_indexed":0,"retry_after":2}`, string(r.Body))
	deadline := time.Now().Add(10 * time.Second)
	for r.Status == http.StatusAccepted { // the index is built in the background: wait for it, as a bot does
		require.True(t, time.Now().Before(deadline), "the index was not built")
		time.Sleep(10 * time.Millisecond)
		r, _ = searchGuild(t, f, url.Values{"content": {"raid"}}, f.BotHeader())
	}
	late := post("general", "late raid news", guildtest.Bearer(f.Alice)) // indexed as it is sent

	ids := func(res wire.GuildSearchResult) (out []wire.Snowflake) {
		for _, group := range res.Messages {
			require.Len(t, group, 1)
			out = append(out, group[0].ID)
		}
		return out
	}
	for _, tc := range []struct {
		name  string
		q     url.Values
		total int
		want  []wire.Snowflake
	}{
		{"content, newest first; the bot sees staff (mod) but not hidden", url.Values{"content": {"raid"}}, 4, []wire.Snowflake{late.ID, staff.ID, loud.ID, nine.ID}},
		{"relevance", url.Values{"content": {"raid"}, "sort_by": {"relevance"}}, 4, []wire.Snowflake{loud.ID, late.ID, staff.ID, nine.ID}},
		{"oldest first, paged", url.Values{"content": {"raid"}, "sort_order": {"asc"}, "limit": {"2"}, "offset": {"1"}}, 4, []wire.Snowflake{loud.ID, staff.ID}},
		{"every word", url.Values{"content": {"raid nine"}}, 1, []wire.Snowflake{nine.ID}},
		{"author", url.Values{"author_id": {f.BotID.String()}}, 1, []wire.Snowflake{loud.ID}},
		{"bots", url.Values{"author_type": {"bot"}}, 1, []wire.Snowflake{loud.ID}},
		{"mentions", url.Values{"mentions": {f.E.User("bob").ID.String()}}, 1, []wire.Snowflake{loud.ID}},
		{"channel", url.Values{"channel_id": {f.Channel("staff").ID.String()}}, 1, []wire.Snowflake{staff.ID}},
		{"not pinned", url.Values{"pinned": {"false"}, "content": {"nine"}}, 1, []wire.Snowflake{nine.ID}},
		{"files: the service has none", url.Values{"has": {"file"}}, 0, nil},
		{"content without a word", url.Values{"content": {"?!"}}, 0, nil},
		{"empty content: no filter", url.Values{"content": {""}, "author_id": {f.BotID.String()}}, 1, []wire.Snowflake{loud.ID}},
		{"id bounds", url.Values{"min_id": {nine.ID.String()}, "max_id": {late.ID.String()}}, 2, []wire.Snowflake{staff.ID, loud.ID}},
	} {
		r, res := searchGuild(t, f, tc.q, f.BotHeader())
		require.Equal(t, http.StatusOK, r.Status, "%s: %s", tc.name, r.Body)
		assert.Equal(t, tc.total, res.TotalResults, "GLD-3 %s", tc.name)
		assert.Equal(t, tc.want, ids(res), "GLD-3 %s", tc.name)
	}
	_, res := searchGuild(t, f, url.Values{"content": {"potions"}}, f.BotHeader())
	require.Len(t, res.Messages, 1)
	assert.Contains(t, res.Messages[0][0].Content, "bring potions", "the message whole")

	// bob cannot view staff or hidden: they are left out, and naming one is 50001.
	_, res = searchGuild(t, f, url.Values{"content": {"raid"}}, guildtest.Bearer(f.Bob))
	assert.Equal(t, []wire.Snowflake{late.ID, loud.ID, nine.ID}, ids(res), "GLD-3: only what bob may read")
	for _, tc := range []struct {
		name         string
		q            url.Values
		h            http.Header
		status, code int
	}{
		{"a channel bob cannot view", url.Values{"channel_id": {f.Channel("staff").ID.String()}}, guildtest.Bearer(f.Bob), 403, 50001},
		{"another guild's channel", url.Values{"channel_id": {"1"}}, f.BotHeader(), 404, 10003},
		{"limit 26", url.Values{"limit": {"26"}}, f.BotHeader(), 400, 50035},
		{"offset past 9975", url.Values{"offset": {"9976"}}, f.BotHeader(), 400, 50035},
		{"bad author", url.Values{"author_id": {"x"}}, f.BotHeader(), 400, 50035},
		{"bad sort", url.Values{"sort_by": {"votes"}}, f.BotHeader(), 400, 50035},
		{"bad has", url.Values{"has": {"cake"}}, f.BotHeader(), 400, 50035},
		{"bad pinned", url.Values{"pinned": {"maybe"}}, f.BotHeader(), 400, 50035},
		{"content too long", url.Values{"content": {string(make([]byte, 1025))}}, f.BotHeader(), 400, 50035},
	} {
		r, _ := searchGuild(t, f, tc.q, tc.h)
		require.Equal(t, tc.status, r.Status, "%s: %s", tc.name, r.Body)
		assert.Equal(t, tc.code, r.APIError(t).Code, "%s", tc.name)
	}
	r = guildtest.Do(t, http.MethodGet, f.API("/guilds/"+f.Other.ID.String()+"/messages/search"), nil, f.BotHeader())
	require.Equal(t, http.StatusForbidden, r.Status, "a guild the bot is not in")
}
