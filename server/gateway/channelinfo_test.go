package gateway

import (
	"context"
	"encoding/json"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"sdkpp/wire"
	gwire "sdkpp/wire/gateway"
)

// GW-3: op 43 reaches Config.ChannelInfo with the session's identity, whose Capabilities are the
// Identify's (GW-1); its answer is a CHANNEL_INFO dispatch, a refusal gets none, a malformed
// request closes with 4002, and without the hook op 43 is unknown (4001).
func TestRequestChannelInfoOp(t *testing.T) {
	var mu sync.Mutex
	var seen []Identity
	e := newEnv(t, func(c *Config) {
		c.ChannelInfo = func(_ context.Context, who Identity, guildID uint64, fields []string) (any, error) {
			mu.Lock()
			seen = append(seen, who)
			mu.Unlock()
			if guildID == 666 {
				return nil, wire.MissingAccess()
			}
			return gwire.ChannelInfo{GuildID: wire.Snowflake(guildID), Channels: []gwire.ChannelInfoEntry{}}, nil
		}
	})
	c := e.dial()
	d := identifyData("user-1")
	d["capabilities"] = gwire.CapabilityChannelObfuscation
	c.send(gwire.OpIdentify, d)
	c.expectDispatch(gwire.EventReady, 1)
	c.send(gwire.OpRequestChannelInfo, map[string]any{"guild_id": "666", "fields": []string{"status"}})
	c.send(gwire.OpRequestChannelInfo, map[string]any{"guild_id": "42", "fields": []string{"status", "voice_start_time"}})
	p := c.expectDispatch(gwire.EventChannelInfo, 2) // the refused request got no dispatch before it
	var info gwire.ChannelInfo
	require.NoError(t, json.Unmarshal(p.D, &info))
	assert.Equal(t, wire.Snowflake(42), info.GuildID, "GW-3")
	mu.Lock()
	require.Len(t, seen, 2)
	assert.Equal(t, int64(gwire.CapabilityChannelObfuscation), seen[1].Capabilities, "GW-1: the Identify's capabilities")
	assert.Equal(t, uint64(1), seen[1].UserID)
	mu.Unlock()

	plain := e.dial()
	plain.identify("user-2")
	plain.send(gwire.OpRequestChannelInfo, map[string]any{"guild_id": "42"})
	plain.expectDispatch(gwire.EventChannelInfo, 2)
	mu.Lock()
	assert.Equal(t, int64(0), seen[2].Capabilities, "GW-1: no capabilities given")
	mu.Unlock()

	for _, bad := range []string{`{"op":43,"d":{}}`, `{"op":43,"d":{"guild_id":"1","fields":["name"]}}`, `{"op":43,"d":"x"}`,
		`{"op":43,"d":{"guild_id":"9223372036854775808"}}`, `{"op":43,"d":{"guild_id":"1","fields":"status"}}`} {
		c := e.dial()
		c.identify("user-3")
		c.sendRaw(bad)
		c.expectClose(gwire.CloseDecodeError)
	}
	early := e.dial()
	early.send(gwire.OpRequestChannelInfo, map[string]any{"guild_id": "42"})
	early.expectClose(gwire.CloseNotAuthenticated)

	off := newEnv(t, nil)
	c = off.dial()
	c.identify("user-4")
	c.send(gwire.OpRequestChannelInfo, map[string]any{"guild_id": "42"})
	c.expectClose(gwire.CloseUnknownOpcode)
}
