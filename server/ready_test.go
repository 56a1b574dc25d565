package server_test

import (
	"net/http"
	"strconv"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"sdkpp/server/servertest"
	"sdkpp/server/servertest/guildtest"
	"sdkpp/wire"
)

// APP-1: READY's application carries the 32-bit flags.
func TestReadyApplicationFlags(t *testing.T) {
	e := servertest.Start(t)
	const all = uint64(1)<<40 | wire.AppFlagGatewayMessageContentLimited
	r := guildtest.SendJSON(t, http.MethodPut, e.APIURL+"/dev/applications/"+e.App.ID.String()+"/flags",
		map[string]any{"flags": strconv.FormatUint(all, 10)}, http.Header{"Authorization": {"Admin " + e.Creds.AdminToken}})
	require.Equal(t, http.StatusOK, r.Status, "%s", r.Body)
	g := guildtest.Dial(t, e, "/?v=10&encoding=json")
	ready := g.Identify(e.App.BotToken, 0)
	assert.JSONEq(t, `{"id":"`+e.App.ID.String()+`","flags":`+strconv.FormatUint(wire.AppFlagGatewayMessageContentLimited, 10)+`}`,
		string(ready["application"]), "APP-1")
}
