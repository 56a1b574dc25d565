// Package bots runs bots written with client libraries of the platform, unchanged but for their
// endpoints, against the service.
package bots

import (
	"bytes"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/bwmarrin/discordgo"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"sdkpp/server"
	"sdkpp/server/ratelimit"
	"sdkpp/server/servertest"
	"sdkpp/wire"
)

// pointDiscordgo sets discordgo's endpoint variables to the service's base URL (the only change
// a bot needs), and puts them back when the test ends. discordgo builds the rest from these.
func pointDiscordgo(t *testing.T, base string) {
	vars := []*string{&discordgo.EndpointDiscord, &discordgo.EndpointAPI, &discordgo.EndpointGuilds,
		&discordgo.EndpointChannels, &discordgo.EndpointUsers, &discordgo.EndpointGateway, &discordgo.EndpointGatewayBot,
		&discordgo.EndpointWebhooks, &discordgo.EndpointStickers, &discordgo.EndpointStageInstances, &discordgo.EndpointSKUs,
		&discordgo.EndpointVoice, &discordgo.EndpointVoiceRegions, &discordgo.EndpointApplications, &discordgo.EndpointOAuth2}
	saved := make([]string, len(vars))
	for i, v := range vars {
		saved[i] = *v
	}
	t.Cleanup(func() {
		for i, v := range vars {
			*v = saved[i]
		}
	})
	discordgo.EndpointDiscord = base + "/"
	discordgo.EndpointAPI = discordgo.EndpointDiscord + "api/v" + discordgo.APIVersion + "/"
	discordgo.EndpointGuilds = discordgo.EndpointAPI + "guilds/"
	discordgo.EndpointChannels = discordgo.EndpointAPI + "channels/"
	discordgo.EndpointUsers = discordgo.EndpointAPI + "users/"
	discordgo.EndpointGateway = discordgo.EndpointAPI + "gateway"
	discordgo.EndpointGatewayBot = discordgo.EndpointGateway + "/bot"
	discordgo.EndpointWebhooks = discordgo.EndpointAPI + "webhooks/"
	discordgo.EndpointStickers = discordgo.EndpointAPI + "stickers/"
	discordgo.EndpointStageInstances = discordgo.EndpointAPI + "stage-instances"
	discordgo.EndpointSKUs = discordgo.EndpointAPI + "skus"
	discordgo.EndpointVoice = discordgo.EndpointAPI + "/voice/"
	discordgo.EndpointVoiceRegions = discordgo.EndpointVoice + "regions"
	discordgo.EndpointApplications = discordgo.EndpointAPI + "applications"
	discordgo.EndpointOAuth2 = discordgo.EndpointAPI + "oauth2/"
}

// memberRoute is the route whose limit the test makes small, so that the bot meets a 429.
const memberRoute = "GET /guilds/{guild_id}/members/{user_id}"

// memberWindow is that route's window, one request in each: the bot's request must land in the
// window the test's own request opens, so it is long enough for a loaded machine's stalls (with
// one second, a stall of a second let the bot's request through unlimited).
const memberWindow = 3 * time.Second

// A bot built with discordgo logs in with its bot token, receives READY and GUILD_CREATE,
// answers a message in a guild text channel, reads members and roles, and waits out a 429 and
// retries, as discordgo does.
func TestDiscordgoBot(t *testing.T) {
	e := servertest.Start(t, servertest.WithConfig(func(c *server.Config) {
		// One request per second in the bucket of one guild's members.
		c.RateLimits.Routes = map[string]ratelimit.Rule{memberRoute: {Limit: 1, Window: memberWindow}}
	}))
	alice, bob := e.User("alice"), e.User("bob")
	guild := botLab(t, e, "Bot Lab")
	general := guild.Channels[0].ID.String()
	pointDiscordgo(t, e.URL)
	enableIntents(t, e) // it identifies with GUILD_MEMBERS and MESSAGE_CONTENT, and reads alice's message back over REST

	dg, err := discordgo.New("Bot " + e.App.BotToken)
	require.NoError(t, err)
	// Handlers run in order on discordgo's reader: with its default (a goroutine each), a READY
	// handler reading the guild list races with discordgo's own state filling those guilds in
	// from GUILD_CREATE (the race detector sees it inside discordgo).
	dg.SyncEvents = true
	dg.Identify.Intents = discordgo.IntentsGuilds | discordgo.IntentsGuildMembers | discordgo.IntentsGuildMessages |
		discordgo.IntentsMessageContent
	// The handlers copy what the test reads: discordgo's state keeps the event's objects and
	// changes them on its own goroutine.
	type readySeen struct {
		userID string
		bot    bool
		guilds []string
	}
	type guildSeen struct {
		name     string
		channels []string
		members  int
	}
	ready := make(chan readySeen, 1)
	created := make(chan guildSeen, 1)
	answered := make(chan *discordgo.Message, 1)
	limited := make(chan *discordgo.RateLimit, 4)
	dg.AddHandler(func(_ *discordgo.Session, r *discordgo.Ready) {
		seen := readySeen{userID: r.User.ID, bot: r.User.Bot}
		for _, g := range r.Guilds {
			seen.guilds = append(seen.guilds, g.ID)
		}
		ready <- seen
	})
	dg.AddHandler(func(_ *discordgo.Session, g *discordgo.GuildCreate) {
		seen := guildSeen{name: g.Name, members: len(g.Members)}
		for _, c := range g.Channels {
			seen.channels = append(seen.channels, c.Name)
		}
		created <- seen
	})
	dg.AddHandler(func(s *discordgo.Session, m *discordgo.MessageCreate) {
		if m.Author.ID == s.State.User.ID || m.Content != "!ping" {
			return
		}
		reply, err := s.ChannelMessageSendReply(m.ChannelID, "pong", m.Reference())
		if err != nil {
			t.Errorf("reply: %v", err)
			return
		}
		answered <- reply
	})
	dg.AddHandler(func(_ *discordgo.Session, r *discordgo.RateLimit) { limited <- r })
	require.NoError(t, dg.Open())
	t.Cleanup(func() { _ = dg.Close() })

	r := receive(t, ready, "READY")
	assert.Equal(t, readySeen{userID: e.App.BotUserID.String(), bot: true, guilds: []string{guild.ID.String()}}, r)
	g := receive(t, created, "GUILD_CREATE")
	assert.Equal(t, guildSeen{name: "Bot Lab", channels: []string{"general"}, members: 3}, g)
	cached, err := dg.State.Channel(general)
	require.NoError(t, err, "discordgo's state holds the guild's channel")
	assert.Equal(t, discordgo.ChannelTypeGuildText, cached.Type)

	// alice writes "!ping" in the guild's text channel; the bot answers with a reply.
	ping := alicePings(t, e, general)
	reply := receive(t, answered, "the bot's answer")
	assert.Equal(t, "pong", reply.Content)
	assert.Equal(t, guild.ID.String(), reply.GuildID)
	assert.Equal(t, discordgo.MessageTypeReply, reply.Type)
	require.NotNil(t, reply.MessageReference)
	assert.Equal(t, ping, reply.MessageReference.MessageID)
	require.NotNil(t, reply.ReferencedMessage)
	assert.Equal(t, "!ping", reply.ReferencedMessage.Content)
	require.Len(t, reply.Mentions, 1, "a reply pings the replied-to author")
	assert.Equal(t, alice.ID.String(), reply.Mentions[0].ID)
	history, err := dg.ChannelMessages(general, 10, "", "", "")
	require.NoError(t, err)
	require.Len(t, history, 2)
	assert.Equal(t, "pong", history[0].Content)
	assert.Equal(t, "!ping", history[1].Content)
	assert.Equal(t, "alice", history[1].Author.Username)

	// Members and roles.
	members, err := dg.GuildMembers(guild.ID.String(), "", 100)
	require.NoError(t, err)
	assert.Len(t, members, 3)
	roles, err := dg.GuildRoles(guild.ID.String())
	require.NoError(t, err)
	require.Len(t, roles, 2)
	assert.Equal(t, "helper", roles[1].Name)
	assert.Equal(t, 0x3498db, roles[1].Color)
	assert.Equal(t, int64(1<<13), roles[1].Permissions)

	// Another process of the same bot has just used the one request per window of the members
	// bucket: discordgo's first request there meets the service's 429, waits retry_after as the
	// answer says, and retries.
	raw, err := http.NewRequest(http.MethodGet, e.APIURL+"/guilds/"+guild.ID.String()+"/members/"+alice.ID.String(), nil)
	require.NoError(t, err)
	raw.Header.Set("Authorization", "Bot "+e.App.BotToken)
	res, err := http.DefaultClient.Do(raw)
	require.NoError(t, err)
	res.Body.Close()
	require.Equal(t, http.StatusOK, res.StatusCode)
	start := time.Now()
	member, err := dg.GuildMember(guild.ID.String(), bob.ID.String())
	require.NoError(t, err, "discordgo retries after the 429")
	assert.Equal(t, "bob", member.User.Username)
	assert.Equal(t, guild.ID.String(), member.GuildID)
	met := receive(t, limited, "the 429")
	assert.Greater(t, met.RetryAfter, time.Duration(0))
	assert.LessOrEqual(t, met.RetryAfter, memberWindow)
	assert.True(t, strings.Contains(met.URL, "/members/"+bob.ID.String()), "the limited request: %s", met.URL)
	assert.GreaterOrEqual(t, time.Since(start), met.RetryAfter, "it waited retry_after")
	assert.Empty(t, limited, "one 429 only")
}

// receive waits for a value of what (real time: discordgo runs on its own goroutines).
func receive[T any](t *testing.T, c <-chan T, what string) T {
	t.Helper()
	select {
	case v := <-c:
		return v
	case <-time.After(10 * time.Second):
		require.FailNow(t, "no "+what)
		var zero T
		return zero
	}
}

// botLab makes a guild owned by alice with bob and the application's bot as members, a "helper"
// role (color 0x3498db, MANAGE_MESSAGES) given to the bot, and one text channel, "general".
func botLab(t *testing.T, e *servertest.Env, name string) wire.DevGuild {
	t.Helper()
	alice, bob := e.User("alice"), e.User("bob")
	guild, err := e.Server.CreateGuild(wire.GuildSpec{Name: name, OwnerID: alice.ID,
		Roles:   []wire.RoleSpec{{Name: "helper", Color: 0x3498db, Permissions: wire.Permissions(1 << 13)}},
		Members: []wire.GuildMemberSpec{{ID: bob.ID}, {ID: e.App.BotUserID, Roles: []int{0}}},
		Channel: []wire.GuildChannelSpec{{Name: "general", Type: wire.ChannelGuildText}}})
	require.NoError(t, err)
	return guild
}

// enableIntents turns on the privileged intents the test bots identify with, GUILD_MEMBERS and
// MESSAGE_CONTENT, as a bot owner does with the intents' toggles in the app's settings: PATCH
// /applications/@me with GATEWAY_GUILD_MEMBERS_LIMITED and GATEWAY_MESSAGE_CONTENT_LIMITED (the
// dev application reaches fewer than 10,000 users, rule LIM-4). Without them the gateway closes
// the bot's session with 4014, and the bot reads other users' messages over REST without their
// content.
func enableIntents(t *testing.T, e *servertest.Env) {
	t.Helper()
	body, _ := json.Marshal(map[string]uint64{"flags": wire.AppFlagGatewayGuildMembersLimited | wire.AppFlagGatewayMessageContentLimited})
	req, err := http.NewRequest(http.MethodPatch, e.APIURL+"/applications/@me", bytes.NewReader(body))
	require.NoError(t, err)
	req.Header.Set("Authorization", "Bot "+e.App.BotToken)
	req.Header.Set("Content-Type", "application/json")
	res, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer res.Body.Close()
	require.Equal(t, http.StatusOK, res.StatusCode)
}

// alicePings posts "!ping" as alice in a guild channel and returns the message's id.
func alicePings(t *testing.T, e *servertest.Env, channel string) string {
	t.Helper()
	return aliceSays(t, e, channel, "!ping")
}

// aliceSays posts content as alice with her game's token in a channel (a guild's, or a DM) and
// returns the message's id.
func aliceSays(t *testing.T, e *servertest.Env, channel, content string) string {
	t.Helper()
	token := e.Token(t, "alice", "openid sdk.social_layer").AccessToken
	body, _ := json.Marshal(map[string]string{"content": content})
	req, err := http.NewRequest(http.MethodPost, e.APIURL+"/channels/"+channel+"/messages", bytes.NewReader(body))
	require.NoError(t, err)
	req.Header.Set("Authorization", "Bearer "+token)
	req.Header.Set("Content-Type", "application/json")
	res, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer res.Body.Close()
	require.Equal(t, http.StatusOK, res.StatusCode)
	var msg struct {
		ID string `json:"id"`
	}
	require.NoError(t, json.NewDecoder(res.Body).Decode(&msg))
	return msg.ID
}

// A discordgo bot with GUILD_VOICE_STATES joins a guild voice channel with its Update Voice State
// (ChannelVoiceJoinManual, op 4), sees its own VOICE_STATE_UPDATE in discordgo's state, and the
// channel's voice session start as VOICE_CHANNEL_START_TIME_UPDATE (rule GW-4), which discordgo
// hands on as a raw event; leaving clears both. The service has no voice server for guild
// channels: no VOICE_SERVER_UPDATE comes, so discordgo's ChannelVoiceJoin, which waits for one
// to open a voice connection, cannot be used.
func TestDiscordgoVoiceState(t *testing.T) {
	e := servertest.Start(t, servertest.WithFrozenClock(time.Date(2026, 11, 25, 10, 0, 0, 0, time.UTC)))
	guild, err := e.Server.CreateGuild(wire.GuildSpec{Name: "Voice Lab", OwnerID: e.User("alice").ID,
		Members: []wire.GuildMemberSpec{{ID: e.App.BotUserID}},
		Channel: []wire.GuildChannelSpec{{Name: "lounge", Type: wire.ChannelGuildVoice}}})
	require.NoError(t, err)
	lounge := guild.Channels[0].ID.String()
	pointDiscordgo(t, e.URL)
	dg, err := discordgo.New("Bot " + e.App.BotToken)
	require.NoError(t, err)
	dg.SyncEvents = true
	dg.Identify.Intents = discordgo.IntentsGuilds | discordgo.IntentsGuildVoiceStates
	type stateSeen struct {
		user, channel, before string
		mute                  bool
	}
	created := make(chan struct{}, 1)
	states := make(chan stateSeen, 4)
	starts := make(chan map[string]any, 4)
	dg.AddHandler(func(_ *discordgo.Session, _ *discordgo.GuildCreate) { created <- struct{}{} })
	dg.AddHandler(func(_ *discordgo.Session, v *discordgo.VoiceStateUpdate) {
		seen := stateSeen{user: v.UserID, channel: v.ChannelID, mute: v.SelfMute}
		if v.BeforeUpdate != nil {
			seen.before = v.BeforeUpdate.ChannelID
		}
		states <- seen
	})
	dg.AddHandler(func(_ *discordgo.Session, ev *discordgo.Event) {
		if ev.Type == "VOICE_CHANNEL_START_TIME_UPDATE" {
			var d map[string]any
			if err := json.Unmarshal(ev.RawData, &d); err != nil {
				t.Errorf("VOICE_CHANNEL_START_TIME_UPDATE: %v", err)
			}
			starts <- d
		}
	})
	require.NoError(t, dg.Open())
	t.Cleanup(func() { _ = dg.Close() })
	receive(t, created, "GUILD_CREATE")

	bot := e.App.BotUserID.String()
	require.NoError(t, dg.ChannelVoiceJoinManual(guild.ID.String(), lounge, true, false))
	assert.Equal(t, stateSeen{user: bot, channel: lounge, mute: true}, receive(t, states, "the bot's voice state"))
	vs, err := dg.State.VoiceState(guild.ID.String(), bot)
	require.NoError(t, err, "discordgo's state holds the voice state")
	assert.Equal(t, lounge, vs.ChannelID)
	assert.NotEmpty(t, vs.SessionID)
	start := receive(t, starts, "GW-4: the voice session's start")
	assert.Equal(t, lounge, start["id"])
	assert.Equal(t, float64(e.Clock.Now().Unix()), start["voice_start_time"], "GW-4")

	require.NoError(t, dg.ChannelVoiceJoinManual(guild.ID.String(), "", false, false))
	assert.Equal(t, stateSeen{user: bot, before: lounge}, receive(t, states, "the bot's leave"))
	end := receive(t, starts, "GW-4: the voice session's end")
	assert.Equal(t, map[string]any{"id": lounge, "guild_id": guild.ID.String(), "voice_start_time": nil}, end, "GW-4")
}
