package guilds_test

import (
	"net/http"
	"sdkpp/server/servertest/guildtest"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// GLD-4: Get Guild Role Member Counts maps every role but @everyone to how many members have it;
// a guild the caller is not in is 50001, an unknown one 10004.
func TestRoleMemberCounts(t *testing.T) {
	f := guildtest.NewBots(t)
	for _, h := range []http.Header{f.BotHeader(), guildtest.Bearer(f.Bob)} {
		var counts map[string]int
		guildtest.OK(t, guildtest.Do(t, http.MethodGet, f.API(f.GuildPath("/roles/member-counts")), nil, h), &counts)
		assert.Equal(t, map[string]int{f.Mod.ID.String(): 2, f.Quiet.ID.String(): 0}, counts, "GLD-4: carol and the bot are mods")
	}
	for _, tc := range []struct {
		path         string
		status, code int
	}{
		{"/guilds/" + f.Other.ID.String() + "/roles/member-counts", http.StatusForbidden, 50001},
		{"/guilds/1/roles/member-counts", http.StatusNotFound, 10004},
		{"/guilds/x/roles/member-counts", http.StatusBadRequest, 50035},
	} {
		r := guildtest.Do(t, http.MethodGet, f.API(tc.path), nil, f.BotHeader())
		require.Equal(t, tc.status, r.Status, "%s: %s", tc.path, r.Body)
		assert.Equal(t, tc.code, r.APIError(t).Code, "%s", tc.path)
	}
}
