package server_test

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"
	"github.com/stretchr/testify/require"

	"sdkpp/server"
	"sdkpp/server/servertest/guildtest"
	"sdkpp/wire"
	gwire "sdkpp/wire/gateway"
)

// Flags of a FuzzGateway input.
const (
	gatewayIdentified = 1 << iota // identify before the fuzzed frame
	gatewayBinary                 // send the frame as a binary message
	gatewayBot                    // identify with the application's bot token instead (before the fuzzed frame)
)

// FuzzGateway sends one frame to the live service's gateway, on a connection that has identified
// or not, then a heartbeat. In the frame, {guild}, {voice} and {text} stand for a guild that
// alice owns and the bot is in, and its voice and text channels, so that the guild ops (4, 8,
// 43) reach their handlers with real ids. The hub decodes it as it decodes every payload (its decoders are
// unexported, so this goes through a real connection); whatever the frame, the connection must
// either answer the heartbeat, with any request the frame made answered with a status below 500,
// or be closed with a close code that names the client's fault: never an internal error, never a
// dropped connection, never a crash of the service.
func FuzzGateway(f *testing.F) {
	e := startFuzzService(f)
	guildtest.EnableIntents(f, e, wire.AppFlagGatewayGuildMembersLimited) // the bot identifies with GUILD_MEMBERS (rule LIM-4)
	token := e.Token(f, "alice", "identify openid sdk.social_layer").AccessToken
	me, app := e.User("alice").ID.String(), e.App.ID.String()
	url := "ws" + strings.TrimPrefix(e.URL, "http") + server.GatewayPath + "?v=10&encoding=json"
	identify, err := json.Marshal(map[string]any{"op": gwire.OpIdentify, "d": map[string]any{"token": token, "intents": 0,
		"properties": map[string]string{"os": "linux", "browser": "sdkpp", "device": "sdkpp"}}})
	require.NoError(f, err)
	botIdentify, err := json.Marshal(map[string]any{"op": gwire.OpIdentify, "d": map[string]any{"token": "Bot " + e.App.BotToken,
		"intents": gwire.IntentGuilds | gwire.IntentGuildMembers | gwire.IntentGuildVoiceStates, "compress": false}})
	require.NoError(f, err)
	guild, err := e.Server.CreateGuild(wire.GuildSpec{Name: "Fuzz", OwnerID: e.User("alice").ID,
		Members: []wire.GuildMemberSpec{{ID: e.App.BotUserID}},
		Channel: []wire.GuildChannelSpec{{Name: "voice", Type: wire.ChannelGuildVoice}, {Name: "text", Type: wire.ChannelGuildText}}})
	require.NoError(f, err)
	ids := strings.NewReplacer("{guild}", guild.ID.String(), "{voice}", guild.Channels[0].ID.String(),
		"{text}", guild.Channels[1].ID.String())
	for _, s := range []string{
		// Update Voice State in the guild: joins, moves, leaves, and malformed ones.
		`{"op":4,"d":{"guild_id":"{guild}","channel_id":"{voice}","self_mute":true,"self_deaf":false}}`,
		`{"op":4,"d":{"guild_id":"{guild}","channel_id":null}}`, `{"op":4,"d":{"guild_id":"{guild}","channel_id":"{text}"}}`,
		`{"op":4,"d":{"guild_id":"{guild}","channel_id":"{voice}","self_mute":"yes"}}`,
		`{"op":4,"d":{"guild_id":"{guild}","channel_id":"{voice}","self_deaf":1e999}}`,
		`{"op":4,"d":{"guild_id":"{guild}","channel_id":"18446744073709551616"}}`,
		`{"op":4,"d":{"guild_id":"{guild}","channel_id":"-1"}}`, `{"op":4,"d":{"guild_id":"{voice}","channel_id":"{voice}"}}`,
		`{"op":4,"d":{"guild_id":"9223372036854775808","channel_id":"{voice}"}}`, `{"op":4,"d":{"guild_id":"{guild}","channel_id":["{voice}"]}}`,
		`{"op":4,"d":{"guild_id":"{guild}","channel_id":"{voice}","sdkpp_e2ee_public_keys":"%%"}}`,
		`{"op":4,"d":{"guild_id":"\u0000","channel_id":"{voice}"}}`, "{\"op\":4,\"d\":{\"guild_id\":\"{guild}\",\"x\":\"\xff\"}}",
		// Request Guild Members and Request Channel Info of the real guild.
		`{"op":8,"d":{"guild_id":"{guild}","query":"","limit":0}}`, `{"op":8,"d":{"guild_id":"{guild}","query":"a","limit":-1}}`,
		`{"op":8,"d":{"guild_id":"{guild}","query":"` + strings.Repeat("\u00e9", 200) + `","limit":99999999999}}`,
		`{"op":8,"d":{"guild_id":"{guild}","user_ids":["x"]}}`, `{"op":8,"d":{"guild_id":"{guild}","user_ids":"{guild}","nonce":"` + strings.Repeat("n", 40) + `"}}`,
		`{"op":8,"d":{"guild_id":"{guild}","query":"","limit":0,"presences":"x"}}`,
		`{"op":43,"d":{"guild_id":"{guild}","fields":["status","voice_start_time"]}}`, `{"op":43,"d":{"guild_id":"{guild}","fields":"status"}}`,
		`{"op":43,"d":{"guild_id":"{guild}","fields":[5]}}`, `{"op":43,"d":{"guild_id":-1}}`,
		`{"op":14,"d":{"guild_id":"{guild}","typing":true,"channels":{"{text}":[[0,99]]}}}`, `{"op":14,"d":null}`,
		`{"op":100,"d":{"nonce":"n","method":"PUT","path":"/channels/{voice}/voice-status","body":{"status":5}}}`,
		`{"op":100,"d":{"nonce":"n","method":"GET","path":"/channels/{text}/messages?limit=-1&around=x"}}`,
		`{"op":100,"d":{"nonce":"n","method":"POST","path":"/channels/{text}/messages","body":{"content":["x"]}}}`,
		`{"op":100,"d":{"nonce":"n","method":"PATCH","path":"/guilds/{guild}/members/@me","body":{"nick":5}}}`,
	} {
		f.Add([]byte(s), uint8(gatewayBot))
		f.Add([]byte(s), uint8(gatewayIdentified))
	}
	for _, s := range []string{
		`{"op":8,"d":{"guild_id":"1","query":"","limit":0}}`, `{"op":8,"d":{"guild_id":"1","user_ids":["1","2"],"nonce":"n"}}`,
		`{"op":8,"d":{"guild_id":"` + me + `","query":"a","limit":5,"presences":true}}`, `{"op":8,"d":{"guild_id":["1"]}}`,
		`{"op":8,"d":{"guild_id":"9223372036854775808","query":"","limit":0}}`, `{"op":8,"d":null}`, `{"op":8}`,
		`{"op":100,"d":{"nonce":"n","method":"GET","path":"/guilds/1/members?limit=x"}}`,
		`{"op":100,"d":{"nonce":"n","method":"PATCH","path":"/guilds/1/members/@me","body":{"avatar":"data:image/png;base64,%%"}}}`,
		`{"op":100,"d":{"nonce":"n","method":"POST","path":"/channels/1/messages","body":{"content":""}}}`,
	} {
		f.Add([]byte(s), uint8(gatewayBot))
		f.Add([]byte(s), uint8(gatewayIdentified))
	}

	for _, s := range []string{
		`{"op":1,"d":null}`, `{"op":1,"d":5}`, `{"op":1,"d":"x"}`, string(identify), `{"op":2,"d":{"token":"x","intents":0}}`,
		`{"op":2,"d":{"token":"` + token + `","intents":-1}}`, `{"op":2,"d":{"token":"` + token + `","intents":0,"shard":[1,1]}}`,
		`{"op":6,"d":{"token":"` + token + `","session_id":"s","seq":99}}`,
		`{"op":3,"d":{"since":null,"activities":[{"name":"g","type":0}],"status":"online","afk":false}}`,
		`{"op":3,"d":{"activities":[{"name":"` + strings.Repeat("x", 300) + `","type":99}]}}`,
		`{"op":100,"d":{"nonce":"n","method":"GET","path":"/users/@me"}}`,
		`{"op":100,"d":{"nonce":"n","method":"GET","path":"/users/` + me + `"}}`,
		`{"op":100,"d":{"nonce":"n","method":"GET","path":"/lobbies/9223372036854775808"}}`,
		`{"op":100,"d":{"nonce":"n","method":"POST","path":"/lobbies","body":{"metadata":{"k":"v"}}}}`,
		`{"op":100,"d":{"nonce":"n","method":"PUT","path":"/lobbies","body":{"secret":"s","application_id":"` + app + `"}}}`,
		`{"op":100,"d":{"nonce":"n","method":"POST","path":"/users/@me/messages/18446744073709551615","body":{"content":"hi"}}}`,
		`{"op":100,"d":{"nonce":"n\u00e9","method":"GET","path":"/users/@me","extra":1}}`,
		`{"op":100,"d":{"nonce":"","method":"GET","path":"/"}}`, `{"op":100,"d":{"nonce":"n","method":"TRACE","path":"/users/@me"}}`,
		`{"op":100,"d":{"nonce":"n","method":"GET","path":"//evil"}}`, `{"op":100,"d":"x"}`, `{"op":100}`,
		`{"op":0,"d":{}}`, `{"op":11}`, `{"op":99,"d":null}`, `{"op":"1"}`, `{"op":1.5}`, `[]`, `null`, ``, `{`,
		"{\"op\":1,\"d\":null,\"x\":\"\xff\"}", `{"OP":1,"D":null}`, `{"op":1,"op":100,"d":{"nonce":"n","method":"GET","path":"/users/@me"}}`,
	} {
		for _, flags := range []uint8{0, gatewayIdentified} {
			f.Add([]byte(s), flags)
		}
	}
	f.Add([]byte(`{"op":1,"d":null}`), uint8(gatewayIdentified|gatewayBinary))
	for _, s := range []string{`{"op":43,"d":{"guild_id":"1","fields":["status","voice_start_time"]}}`, // rule GW-3
		`{"op":43,"d":{"guild_id":"9223372036854775808"}}`, `{"op":43,"d":{"fields":["x"]}}`, `{"op":43,"d":null}`} {
		f.Add([]byte(s), uint8(gatewayIdentified))
	}

	f.Fuzz(func(t *testing.T, frame []byte, flags uint8) {
		frame = []byte(ids.Replace(string(frame)))
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		defer cancel()
		ws, _, err := websocket.Dial(ctx, url, nil)
		require.NoError(t, err)
		defer ws.CloseNow()
		ws.SetReadLimit(1 << 22)
		gw := fuzzConn{t: t, ctx: ctx, ws: ws}
		gw.expectOp(gwire.OpHello)
		switch {
		case flags&gatewayBot != 0:
			gw.write(websocket.MessageText, botIdentify)
			if p := gw.expectAny(); p.Op == gwire.OpInvalidSession {
				return // the bot's session starts of the day are used up (a long fuzzing run)
			} else {
				require.Equal(t, gwire.EventReady, *p.T)
			}
		case flags&gatewayIdentified != 0:
			gw.write(websocket.MessageText, identify)
			p := gw.expectOp(gwire.OpDispatch)
			require.Equal(t, gwire.EventReady, *p.T)
		}
		typ := websocket.MessageText
		if flags&gatewayBinary != 0 {
			typ = websocket.MessageBinary
		}
		gw.write(typ, frame)
		gw.write(websocket.MessageText, []byte(`{"op":1,"d":null}`))
		for {
			p, ok := gw.read(frame)
			if !ok || p.Op == gwire.OpHeartbeatACK {
				return
			}
			if p.Op == gwire.OpDispatch && p.T != nil && *p.T == gwire.EventRequestResult {
				var res gwire.RequestResult
				require.NoError(t, json.Unmarshal(p.D, &res))
				require.Less(t, res.Status, 500, "frame %q: request answered %d: %s", frame, res.Status, res.Body)
			}
		}
	})
}

// fuzzConn is one fuzzed gateway connection.
type fuzzConn struct {
	t   *testing.T
	ctx context.Context
	ws  *websocket.Conn
}

func (c *fuzzConn) write(typ websocket.MessageType, b []byte) {
	if err := c.ws.Write(c.ctx, typ, b); err != nil {
		var ce websocket.CloseError
		if !errors.As(err, &ce) { // a close that raced the write is read below
			c.t.Logf("write: %v", err)
		}
	}
}

// read returns the next payload, or false once the service has closed the connection with a
// code that blames the client (anything else fails the test).
func (c *fuzzConn) read(frame []byte) (gwire.Payload, bool) {
	_, raw, err := c.ws.Read(c.ctx)
	if err != nil {
		code := websocket.CloseStatus(err)
		switch {
		case code == -1:
			c.t.Fatalf("frame %q: the connection was dropped without a close frame: %v", frame, err)
		case code == gwire.CloseUnknownError || code == websocket.StatusInternalError:
			c.t.Fatalf("frame %q: closed with an internal error: %v", frame, err)
		}
		return gwire.Payload{}, false
	}
	var p gwire.Payload
	require.NoError(c.t, json.Unmarshal(raw, &p), "payload %s", raw)
	return p, true
}

// expectAny reads the next payload, whatever its opcode.
func (c *fuzzConn) expectAny() gwire.Payload {
	p, ok := c.read(nil)
	require.True(c.t, ok, "connection closed")
	return p
}

// expectOp reads the next payload, which must have opcode op.
func (c *fuzzConn) expectOp(op int) gwire.Payload {
	p, ok := c.read(nil)
	require.True(c.t, ok, "connection closed before op %d", op)
	require.Equal(c.t, op, p.Op)
	return p
}
