package gateway

import (
	"bytes"
	"compress/zlib"
	"context"
	"encoding/json"
	"errors"
	"io"
	"strconv"
	"testing"
	"time"

	"github.com/coder/websocket"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"sdkpp/wire"
	gwire "sdkpp/wire/gateway"
)

// botEnv is a hub whose bots are in guilds 100 (sent with GUILD_CREATE) and 200 (whose
// GUILD_CREATE the intents leave out), and whose guild 100 has members 1 to 3.
func botEnv(t *testing.T, mod func(*Config)) *env {
	return newEnv(t, func(c *Config) {
		c.Guilds = func(_ context.Context, who Identity, intents uint64, shard []int) ([]BotGuild, error) {
			out := []BotGuild{{ID: 100}, {ID: 200}}
			if intents&gwire.IntentGuilds != 0 {
				out[0].Create = map[string]any{"id": "100", "name": "g", "bot": who.UserID}
			}
			return out, nil
		}
		c.Members = func(_ context.Context, _ Identity, guildID uint64, query string, limit int, userIDs []uint64) ([]wire.Member, []uint64, error) {
			if guildID != 100 {
				return nil, nil, wire.UnknownGuild()
			}
			var out []wire.Member
			var missing []uint64
			for _, id := range userIDs {
				if id > 3 {
					missing = append(missing, id)
					continue
				}
				out = append(out, wire.Member{User: &wire.User{ID: wire.Snowflake(id)}, Roles: []wire.Snowflake{}})
			}
			if userIDs == nil {
				for id := 1; id <= 3 && (limit == 0 || len(out) < limit); id++ {
					out = append(out, wire.Member{User: &wire.User{ID: wire.Snowflake(id)}, Roles: []wire.Snowflake{}})
				}
			}
			return out, missing, nil
		}
		if mod != nil {
			mod(c)
		}
	})
}

func botIdentify(token string, intents uint64) map[string]any {
	d := identifyData(token)
	d["intents"] = intents
	return d
}

// A bot token identifies with or without "Bot " (not as a Bearer token): READY's user is the
// bot, its guilds come unavailable, then one GUILD_CREATE each the intents allow.
func TestBotIdentify(t *testing.T) {
	e := botEnv(t, nil)
	for _, tok := range []string{"Bot bot-7", "bot-7"} {
		c := e.dial()
		c.send(gwire.OpIdentify, botIdentify(tok, gwire.IntentGuilds))
		p := c.expectDispatch(gwire.EventReady, 1)
		var r struct {
			User   wire.User               `json:"user"`
			Guilds []wire.UnavailableGuild `json:"guilds"`
		}
		require.NoError(t, json.Unmarshal(p.D, &r))
		assert.EqualValues(t, 7, r.User.ID, "READY's user is the bot")
		assert.Equal(t, []wire.UnavailableGuild{{ID: 100, Unavailable: true}, {ID: 200, Unavailable: true}}, r.Guilds)
		g := c.expectDispatch(gwire.EventGuildCreate, 2)
		assert.JSONEq(t, `{"id":"100","name":"g","bot":7}`, string(g.D))
		c.heartbeat() // nothing for guild 200
	}
	c := e.dial()
	c.send(gwire.OpIdentify, botIdentify("Bot bot-7", 0)) // no GUILDS: no GUILD_CREATE
	c.expectDispatch(gwire.EventReady, 1)
	c.heartbeat()
	c = e.dial()
	c.send(gwire.OpIdentify, botIdentify("Bearer bot-7", 0))
	c.expectClose(gwire.CloseAuthenticationFailed)
}

// GET /gateway/bot's session_start_limit: every bot Identify counts on the hub's clock; past the
// window's total it gets Invalid Session, and the count starts again after reset_after.
func TestSessionStartLimit(t *testing.T) {
	e := botEnv(t, func(c *Config) { c.SessionStarts = 2 })
	fresh := e.hub.SessionStartLimit(testApp, 1)
	assert.Equal(t, wire.SessionStartLimit{Total: 2, Remaining: 2, ResetAfter: DefaultSessionStartWindow.Milliseconds(), MaxConcurrency: 1}, fresh)
	e.dial().identify("bot-7")
	e.clk.Advance(time.Hour)
	e.dial().identify("bot-8") // the same application's bot token
	got := e.hub.SessionStartLimit(testApp, 4)
	assert.Equal(t, 0, got.Remaining)
	assert.Equal(t, 4, got.MaxConcurrency)
	assert.Equal(t, (23 * time.Hour).Milliseconds(), got.ResetAfter)
	c := e.dial()
	c.send(gwire.OpIdentify, identifyData("bot-7"))
	p := c.expectOp(gwire.OpInvalidSession)
	assert.JSONEq(t, "false", string(p.D))
	c.identify("user-1") // users are not counted, and the connection stays open
	assert.Equal(t, 2, e.hub.SessionStartLimit(testApp2, 1).Remaining, "another application's count")
	e.clk.Advance(23 * time.Hour)
	assert.Equal(t, 2, e.hub.SessionStartLimit(testApp, 1).Remaining, "a new window")
	e.dial().identify("bot-7")
}

// max_concurrency: a bot identifies once per IdentifyWindow in each rate-limit bucket (shard id
// modulo max_concurrency); a second Identify of a bucket in the window gets Invalid Session and
// uses none of the day's starts; the other buckets are free, and the window ends on time.
func TestMaxConcurrencyBuckets(t *testing.T) {
	e := botEnv(t, func(c *Config) {
		c.MaxConcurrency = func(context.Context, uint64) (int, error) { return 2, nil }
	})
	shard := func(id, n int) map[string]any {
		d := botIdentify("bot-7", 0)
		d["shard"] = []int{id, n}
		return d
	}
	refused := func(d map[string]any) {
		t.Helper()
		c := e.dial()
		c.send(gwire.OpIdentify, d)
		assert.JSONEq(t, "false", string(c.expectOp(gwire.OpInvalidSession).D))
	}
	started := func(d map[string]any) {
		t.Helper()
		c := e.dial()
		c.send(gwire.OpIdentify, d)
		c.expectDispatch(gwire.EventReady, 1)
	}
	started(shard(0, 4)) // bucket 0
	started(shard(1, 4)) // bucket 1
	refused(shard(2, 4)) // bucket 0 again, within the window
	refused(botIdentify("bot-7", 0))
	assert.Equal(t, DefaultSessionStarts-2, e.hub.SessionStartLimit(testApp, 2).Remaining, "refused Identifies use no start")
	e.clk.Advance(DefaultIdentifyWindow - time.Millisecond)
	refused(shard(3, 4)) // bucket 1, a millisecond before its window ends
	e.clk.Advance(time.Millisecond)
	started(shard(2, 4))
	refused(botIdentify("bot-7", 0)) // no shard is shard 0: bucket 0, just used
	started(shard(3, 4))
	e.dial().identify("user-1") // players are not limited
}

// readBinary reads the next message, which must be a binary frame.
func readBinary(t *testing.T, c *client) []byte {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), wait)
	defer cancel()
	typ, raw, err := c.ws.Read(ctx)
	require.NoError(t, err)
	require.Equal(t, websocket.MessageBinary, typ)
	return raw
}

// Identify's compress: each dispatch comes as a binary frame holding a zlib stream of its own;
// other payloads stay text.
func TestPayloadCompression(t *testing.T) {
	e := botEnv(t, nil)
	c := e.dial()
	d := botIdentify("bot-7", gwire.IntentGuilds)
	d["compress"] = true
	c.send(gwire.OpIdentify, d)
	for _, event := range []string{gwire.EventReady, gwire.EventGuildCreate} {
		z, err := zlib.NewReader(bytes.NewReader(readBinary(t, c)))
		require.NoError(t, err)
		plain, err := io.ReadAll(z)
		require.NoError(t, err, "a whole zlib stream")
		var p gwire.Payload
		require.NoError(t, json.Unmarshal(plain, &p))
		assert.Equal(t, event, deref(p.T))
	}
	c.heartbeat() // a text ACK
}

// ?compress=zlib-stream: every message, Hello first, continues one zlib stream and ends with a
// sync flush (00 00 ff ff); one inflater reads them all.
func TestZlibStream(t *testing.T) {
	e := botEnv(t, nil)
	c := e.dialQuery("?v=10&encoding=json&compress=zlib-stream")
	var stream bytes.Buffer
	next := func() []byte { // the message's bytes, checked to end with the flush suffix
		raw := readBinary(t, c)
		require.True(t, bytes.HasSuffix(raw, []byte{0, 0, 0xff, 0xff}), "sync flush suffix")
		stream.Write(raw)
		return raw
	}
	next() // Hello
	d := botIdentify("bot-7", gwire.IntentGuilds)
	d["compress"] = true // ignored: the transport is compressed already
	c.send(gwire.OpIdentify, d)
	next()
	next()
	c.send(gwire.OpHeartbeat, nil)
	next()
	z, err := zlib.NewReader(&stream)
	require.NoError(t, err)
	plain, err := io.ReadAll(z)
	require.ErrorIs(t, err, io.ErrUnexpectedEOF, "the stream goes on: it is never closed")
	dec := json.NewDecoder(bytes.NewReader(plain))
	var ops []string
	for {
		var p gwire.Payload
		if err := dec.Decode(&p); errors.Is(err, io.EOF) {
			break
		} else {
			require.NoError(t, err)
		}
		ops = append(ops, deref(p.T)+"/"+strconv.Itoa(p.Op))
	}
	assert.Equal(t, []string{"<nil>/10", "READY/0", "GUILD_CREATE/0", "<nil>/11"}, ops)
}

// chunk reads the next dispatch as a GUILD_MEMBERS_CHUNK.
func chunk(t *testing.T, c *client, seq int64) wire.GuildMembersChunk {
	t.Helper()
	p := c.expectDispatch(gwire.EventGuildMembersChunk, seq)
	var out wire.GuildMembersChunk
	require.NoError(t, json.Unmarshal(p.D, &out))
	return out
}

// Rule GW-2: Request Guild Members for all members (query "", limit 0) is answered once per
// guild per bot per 30 s; another gets RATE_LIMITED with retry_after and meta; other requests
// and the chunks themselves are not limited.
func TestRequestGuildMembersRateLimit(t *testing.T) {
	e := botEnv(t, nil)
	c := e.dial()
	c.send(gwire.OpIdentify, botIdentify("bot-7", gwire.IntentGuildMembers))
	c.expectDispatch(gwire.EventReady, 1)
	all := map[string]any{"guild_id": "100", "query": "", "limit": 0, "nonce": "n1"}
	c.send(gwire.OpRequestGuildMembers, all)
	ch := chunk(t, c, 2)
	assert.Len(t, ch.Members, 3)
	assert.Equal(t, "n1", ch.Nonce)
	assert.Equal(t, 0, ch.ChunkIndex)
	assert.Equal(t, 1, ch.ChunkCount)

	e.clk.Advance(10 * time.Second)
	all["nonce"] = "n2"
	c.send(gwire.OpRequestGuildMembers, all)
	p := c.expectDispatch(gwire.EventRateLimited, 3)
	var rl wire.RateLimitedEvent
	require.NoError(t, json.Unmarshal(p.D, &rl))
	assert.Equal(t, wire.RateLimitedEvent{Opcode: gwire.OpRequestGuildMembers, RetryAfter: 20,
		Meta: wire.RateLimitedMeta{GuildID: 100, Nonce: "n2"}}, rl, "GW-2")

	// Another bot connection of the same application is limited too (per bot, not per session).
	other := e.dial()
	other.send(gwire.OpIdentify, botIdentify("bot-7", gwire.IntentGuildMembers))
	other.expectDispatch(gwire.EventReady, 1)
	other.send(gwire.OpRequestGuildMembers, all)
	other.expectDispatch(gwire.EventRateLimited, 2)

	// A query or user ids are not limited.
	c.send(gwire.OpRequestGuildMembers, map[string]any{"guild_id": "100", "query": "u", "limit": 2})
	assert.Len(t, chunk(t, c, 4).Members, 2)
	c.send(gwire.OpRequestGuildMembers, map[string]any{"guild_id": "100", "user_ids": []string{"1", "9"}})
	ch = chunk(t, c, 5)
	assert.Len(t, ch.Members, 1)
	assert.Equal(t, []wire.Snowflake{9}, ch.NotFound)

	e.clk.Advance(20 * time.Second) // 30 s after the first
	c.send(gwire.OpRequestGuildMembers, all)
	assert.Len(t, chunk(t, c, 6).Members, 3, "GW-2: allowed again after 30 s")

	// Another guild's request has its own limit; one for a guild the bot is not in gets nothing.
	c.send(gwire.OpRequestGuildMembers, map[string]any{"guild_id": "300", "query": "", "limit": 0})
	c.heartbeat()
}

// Malformed Request Guild Members payloads close with 4002; before Identify with 4003; from a
// user session with 4001.
func TestRequestGuildMembersBadInput(t *testing.T) {
	e := botEnv(t, nil)
	bad := []any{
		"x",
		map[string]any{"query": "", "limit": 0},
		map[string]any{"guild_id": "abc", "query": "", "limit": 0},
		map[string]any{"guild_id": []string{"100"}, "query": "", "limit": 0},
		map[string]any{"guild_id": "100"},
		map[string]any{"guild_id": "100", "query": ""},
		map[string]any{"guild_id": "100", "query": "", "limit": -1},
		map[string]any{"guild_id": "100", "query": "", "limit": 0, "user_ids": []string{"1"}},
		map[string]any{"guild_id": "100", "user_ids": make([]string, 101)},
		map[string]any{"guild_id": "100", "user_ids": "18446744073709551616"},
		map[string]any{"guild_id": "100", "query": "", "limit": 0, "nonce": string(make([]byte, 33))},
	}
	for _, d := range bad {
		c := e.dial()
		c.send(gwire.OpIdentify, botIdentify("bot-7", 0))
		c.expectDispatch(gwire.EventReady, 1)
		c.send(gwire.OpRequestGuildMembers, d)
		c.expectClose(gwire.CloseDecodeError)
	}
	c := e.dial()
	c.send(gwire.OpRequestGuildMembers, map[string]any{"guild_id": "100", "query": "", "limit": 0})
	c.expectClose(gwire.CloseNotAuthenticated)
	c = e.dial()
	c.identify("user-1")
	c.send(gwire.OpRequestGuildMembers, map[string]any{"guild_id": "100", "query": "", "limit": 0})
	c.expectClose(gwire.CloseUnknownOpcode)
}

// DispatchBots reaches only bot sessions whose intents include the event's.
func TestDispatchBots(t *testing.T) {
	e := botEnv(t, nil)
	withIntent := e.dial()
	withIntent.send(gwire.OpIdentify, botIdentify("bot-7", gwire.IntentGuildMessages))
	withIntent.expectDispatch(gwire.EventReady, 1)
	without := e.dial()
	without.send(gwire.OpIdentify, botIdentify("bot-7", gwire.IntentGuilds))
	without.expectDispatch(gwire.EventReady, 1)
	without.expectDispatch(gwire.EventGuildCreate, 2)
	user := e.dial()
	user.identify("user-7") // a user session of the same user id
	e.hub.DispatchBots([]uint64{7, 7}, gwire.IntentGuildMessages, gwire.EventMessageCreate, map[string]int{"x": 1})
	p := withIntent.expectDispatch(gwire.EventMessageCreate, 2)
	assert.JSONEq(t, `{"x":1}`, string(p.D))
	without.heartbeat()
	user.heartbeat()
	e.hub.Dispatch(7, "PING", 1) // the next dispatch each gets: nothing came before it
	withIntent.expectDispatch("PING", 3)
	without.expectDispatch("PING", 3)
	user.expectDispatch("PING", 2)
}
