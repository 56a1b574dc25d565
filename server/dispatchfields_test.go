package server_test

import (
	"encoding/json"
	"net/http"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"sdkpp/server"
	"sdkpp/server/servertest"
	"sdkpp/server/servertest/guildtest"
	"sdkpp/wire"
	gwire "sdkpp/wire/gateway"
)

// Fields of the platform's documented objects (its API reference, v10), as they are nested in
// the dispatches below: every field the reference lists without "?" (null values allowed).
var (
	docUser    = []string{"id", "username", "discriminator", "global_name", "avatar"}
	docMember  = []string{"roles", "joined_at", "deaf", "mute", "flags"} // user aside: absent from a message's member
	docMessage = []string{"id", "channel_id", "author", "content", "timestamp", "edited_timestamp", "tts",
		"mention_everyone", "mentions", "mention_roles", "attachments", "embeds", "pinned", "type"}
	docGuild = []string{"id", "name", "icon", "splash", "discovery_splash", "owner_id", "afk_channel_id", "afk_timeout",
		"verification_level", "default_message_notifications", "explicit_content_filter", "roles", "emojis", "features",
		"mfa_level", "application_id", "system_channel_id", "system_channel_flags", "rules_channel_id", "vanity_url_code",
		"description", "banner", "premium_tier", "preferred_locale", "public_updates_channel_id", "nsfw_level",
		"premium_progress_bar_enabled", "safety_alerts_channel_id"}
	docVoiceState = []string{"guild_id", "channel_id", "user_id", "session_id", "deaf", "mute", "self_deaf", "self_mute",
		"self_video", "suppress", "request_to_speak_timestamp"}
)

// dispatchShape is a dispatch's documented payload where it is sent: in a guild, in a DM
// channel, or "" for a dispatch that is neither. fields must be there; absent must not (a DM's
// message has no guild_id or member); nested checks objects inside d, by path.
type dispatchShape struct {
	event, where string
	fields       []string
	absent       []string
	nested       map[string][]string // "author": docUser, "mentions[]": ..., "member": ...
}

func with(base []string, more ...string) []string { return append(slices.Clone(base), more...) }

// dispatchShapes is every dispatch the service sends a bot, with the fields the platform's
// gateway reference lists for it.
var dispatchShapes = []dispatchShape{
	{event: "READY", fields: []string{"v", "user", "guilds", "session_id", "resume_gateway_url", "application"},
		nested: map[string][]string{"user": docUser, "application": {"id", "flags"}, "guilds[]": {"id", "unavailable"}}},
	{event: "RESUMED"},
	{event: "GUILD_CREATE", where: "guild", fields: with(docGuild, "joined_at", "large", "member_count", "voice_states",
		"members", "channels", "threads", "presences", "stage_instances", "guild_scheduled_events", "soundboard_sounds"),
		nested: map[string][]string{"members[]": with(docMember, "user"), "channels[]": {"id", "type", "name"}}},
	{event: "GUILD_MEMBER_ADD", where: "guild", fields: with(docMember, "user", "guild_id"), nested: map[string][]string{"user": docUser}},
	{event: "GUILD_MEMBER_UPDATE", where: "guild", fields: []string{"guild_id", "roles", "user", "avatar", "banner", "joined_at"},
		nested: map[string][]string{"user": docUser}},
	{event: "GUILD_MEMBER_REMOVE", where: "guild", fields: []string{"guild_id", "user"}, nested: map[string][]string{"user": docUser}},
	{event: "GUILD_MEMBERS_CHUNK", where: "guild", fields: []string{"guild_id", "members", "chunk_index", "chunk_count"},
		nested: map[string][]string{"members[]": with(docMember, "user")}},
	{event: "MESSAGE_CREATE", where: "guild", fields: with(docMessage, "guild_id", "member"),
		nested: map[string][]string{"author": docUser, "member": docMember}},
	{event: "MESSAGE_CREATE", where: "dm", fields: with(docMessage, "channel_type"), absent: []string{"guild_id", "member"},
		nested: map[string][]string{"author": docUser, "mentions[]": docUser}},
	{event: "MESSAGE_UPDATE", where: "guild", fields: with(docMessage, "guild_id", "member"),
		nested: map[string][]string{"author": docUser, "member": docMember}},
	{event: "MESSAGE_UPDATE", where: "dm", fields: with(docMessage, "channel_type"), absent: []string{"guild_id", "member"},
		nested: map[string][]string{"author": docUser}},
	{event: "MESSAGE_DELETE", where: "guild", fields: []string{"id", "channel_id", "guild_id"}},
	{event: "MESSAGE_DELETE", where: "dm", fields: []string{"id", "channel_id"}, absent: []string{"guild_id"}},
	{event: "CHANNEL_PINS_UPDATE", where: "guild", fields: []string{"guild_id", "channel_id", "last_pin_timestamp"}},
	{event: "CHANNEL_PINS_UPDATE", where: "dm", fields: []string{"channel_id", "last_pin_timestamp"}, absent: []string{"guild_id"}},
	{event: "INTERACTION_CREATE", where: "guild", fields: []string{"id", "application_id", "type", "data", "guild_id", "channel",
		"channel_id", "member", "token", "version", "app_permissions", "locale", "guild_locale", "entitlements",
		"authorizing_integration_owners", "context", "attachment_size_limit"},
		nested: map[string][]string{"member": with(docMember, "user", "permissions"), "data": {"id", "name", "type"}}},
	{event: "VOICE_STATE_UPDATE", where: "guild", fields: with(docVoiceState, "member")},
	{event: "VOICE_CHANNEL_START_TIME_UPDATE", where: "guild", fields: []string{"id", "guild_id", "voice_start_time"}},
	{event: "VOICE_CHANNEL_STATUS_UPDATE", where: "guild", fields: []string{"id", "guild_id", "status"}},
	{event: "RATE_LIMITED", fields: []string{"opcode", "retry_after", "meta"}, nested: map[string][]string{"meta": {"guild_id"}}},
}

// seenDispatch is a dispatch a session read.
type seenDispatch struct {
	event string
	d     json.RawMessage
}

// collector is a bot session that keeps every dispatch it reads.
type collector struct {
	*guildtest.Gateway
	seen      []seenDispatch
	seq       int64
	sessionID string
}

// drain reads up to the ACK of a heartbeat, keeping the dispatches before it.
func (c *collector) drain(t *testing.T) {
	t.Helper()
	c.Send(gwire.OpHeartbeat, nil)
	for {
		p := c.Next()
		if p.S != nil {
			c.seq = *p.S
		}
		if p.Op == gwire.OpHeartbeatACK {
			return
		}
		if p.Op == gwire.OpDispatch && p.T != nil {
			c.seen = append(c.seen, seenDispatch{*p.T, p.D})
			if *p.T == gwire.EventReady {
				var r struct {
					SessionID string `json:"session_id"`
				}
				require.NoError(t, json.Unmarshal(p.D, &r))
				c.sessionID = r.SessionID
			}
		}
	}
}

// Every dispatch the service sends a bot, made to happen in a guild and in a DM channel, has the
// fields the platform's gateway reference lists for it (dispatchShapes), and every dispatch of
// that table happened.
func TestDispatchFields(t *testing.T) {
	f := guildtest.NewBots(t, servertest.WithConfig(func(c *server.Config) { c.RateLimits.Disabled = true }))
	guildtest.EnableIntents(t, f.E, guildtest.BotIntents)
	bot := f.BotHeader()
	// A guild where the bot is an administrator, so that it may pin and set a voice status.
	g, err := f.E.Server.CreateGuild(wire.GuildSpec{Name: "Shapes", OwnerID: f.E.User("alice").ID,
		Roles:   []wire.RoleSpec{{Name: "ops", Permissions: wire.Permissions(1 << 3)}},
		Members: []wire.GuildMemberSpec{{ID: f.E.User("bob").ID}, {ID: f.BotID, Roles: []int{0}}},
		Channel: []wire.GuildChannelSpec{{Name: "general", Type: wire.ChannelGuildText}, {Name: "voice", Type: wire.ChannelGuildVoice, Position: 1}}})
	require.NoError(t, err)
	general, voice := g.Channels[0], g.Channels[1]
	c := &collector{Gateway: guildtest.Dial(t, f.E, "?v=10&encoding=json")}
	c.IdentifyOnly(f.E.App.BotToken, guildtest.AllGuildIntents|gwire.IntentDirectMessages|gwire.IntentGuildVoiceStates)
	c.drain(t)

	// Guild messages: create, edit, pin, delete.
	m := f.PostMessage(t, general.ID, map[string]any{"content": "hello <@" + f.BotID.String() + ">"}, guildtest.Bearer(f.Alice))
	guildtest.OK(t, guildtest.SendJSON(t, http.MethodPatch, f.MessagesURL(general.ID, m.ID), map[string]any{"content": "edited"},
		guildtest.Bearer(f.Alice)), nil)
	pin := guildtest.Do(t, http.MethodPut, f.API("/channels/"+general.ID.String()+"/messages/pins/"+m.ID.String()), nil, bot)
	require.Equal(t, http.StatusNoContent, pin.Status, "%s", pin.Body)
	require.Equal(t, http.StatusNoContent, guildtest.Do(t, http.MethodDelete, f.MessagesURL(general.ID, m.ID), nil, guildtest.Bearer(f.Alice)).Status)

	// DM messages: the bot opens a DM with bob, who writes, edits and deletes.
	var dm wire.DMChannel
	guildtest.OK(t, guildtest.SendJSON(t, http.MethodPost, f.API("/users/@me/channels"),
		map[string]any{"recipient_id": f.E.User("bob").ID.String()}, bot), &dm)
	var dmMsg wire.Message
	guildtest.OK(t, guildtest.SendJSON(t, http.MethodPost, f.API("/channels/"+dm.ID.String()+"/messages"),
		map[string]any{"content": "hi <@" + f.BotID.String() + ">"}, guildtest.Bearer(f.Bob)), &dmMsg)
	guildtest.OK(t, guildtest.SendJSON(t, http.MethodPatch, f.API("/channels/"+dm.ID.String()+"/messages/"+dmMsg.ID.String()),
		map[string]any{"content": "hi again"}, guildtest.Bearer(f.Bob)), nil)
	require.Equal(t, http.StatusNoContent, guildtest.Do(t, http.MethodPut,
		f.API("/channels/"+dm.ID.String()+"/messages/pins/"+dmMsg.ID.String()), nil, guildtest.Bearer(f.Bob)).Status)
	require.Equal(t, http.StatusNoContent, guildtest.Do(t, http.MethodDelete,
		f.API("/channels/"+dm.ID.String()+"/messages/"+dmMsg.ID.String()), nil, guildtest.Bearer(f.Bob)).Status)

	// Members: the bot renames itself, bob leaves and comes back through an invite.
	guildtest.OK(t, guildtest.SendJSON(t, http.MethodPatch, f.API("/guilds/"+g.ID.String()+"/members/@me"), map[string]any{"nick": "Robo"}, bot), nil)
	require.Equal(t, http.StatusNoContent, guildtest.Do(t, http.MethodDelete, f.API("/users/@me/guilds/"+g.ID.String()), nil,
		guildtest.Bearer(f.Bob)).Status)
	var inv wire.Invite
	guildtest.OK(t, guildtest.SendJSON(t, http.MethodPost, f.API("/channels/"+general.ID.String()+"/invites"), map[string]any{},
		guildtest.Bearer(f.Alice)), &inv)
	guildtest.OK(t, guildtest.Do(t, http.MethodPost, f.API("/invites/"+inv.Code), nil, guildtest.Bearer(f.Bob)), nil)
	c.drain(t)

	// Request Guild Members, twice: a chunk, then RATE_LIMITED (rule GW-2).
	ask := map[string]any{"guild_id": g.ID.String(), "query": "", "limit": 0}
	c.Send(gwire.OpRequestGuildMembers, ask)
	c.drain(t)
	c.Send(gwire.OpRequestGuildMembers, ask)
	c.drain(t)

	// Voice: the bot joins the voice channel and sets its status.
	c.Send(gwire.OpVoiceStateUpdate, map[string]any{"guild_id": g.ID.String(), "channel_id": voice.ID.String(),
		"self_mute": false, "self_deaf": false})
	c.drain(t)
	status := guildtest.SendJSON(t, http.MethodPut, f.API("/channels/"+voice.ID.String()+"/voice-status"), map[string]any{"status": "raid"}, bot)
	require.Equal(t, http.StatusNoContent, status.Status, "%s", status.Body)

	// An interaction: alice invokes the bot's command.
	var cmd wire.ApplicationCommand
	r := guildtest.SendJSON(t, http.MethodPost, f.API("/applications/"+f.E.App.ID.String()+"/guilds/"+g.ID.String()+"/commands"),
		map[string]any{"name": "hello", "description": "says hello"}, bot)
	require.Equal(t, http.StatusCreated, r.Status, "%s", r.Body)
	r.JSON(t, &cmd)
	r = guildtest.SendJSON(t, http.MethodPost, f.API("/interactions"), map[string]any{"type": 2, "application_id": f.E.App.ID,
		"guild_id": g.ID, "channel_id": general.ID, "data": map[string]any{"id": cmd.ID, "name": "hello", "type": 1}},
		guildtest.Bearer(f.Alice))
	require.Equal(t, http.StatusNoContent, r.Status, "%s", r.Body)
	c.drain(t)

	// RESUMED: the session resumes on a new connection.
	require.NoError(t, c.WS.CloseNow())
	resumed := &collector{Gateway: guildtest.Dial(t, f.E, "?v=10&encoding=json")}
	resumed.Send(gwire.OpResume, map[string]any{"token": f.E.App.BotToken, "session_id": c.sessionID, "seq": c.seq})
	resumed.drain(t)
	all := append(c.seen, resumed.seen...)

	// Every dispatch read has its row, and its fields.
	covered := map[[2]string]bool{}
	for _, sd := range all {
		var d map[string]json.RawMessage
		if string(sd.d) != "null" {
			require.NoError(t, json.Unmarshal(sd.d, &d), "%s %s", sd.event, sd.d)
		}
		where := ""
		if _, ok := d["guild_id"]; ok || sd.event == gwire.EventGuildCreate {
			where = "guild"
		} else if strings.HasPrefix(sd.event, "MESSAGE_") || sd.event == gwire.EventChannelPinsUpdate {
			where = "dm"
		}
		if sd.event == "RATE_LIMITED" || sd.event == "READY" {
			where = ""
		}
		i := slices.IndexFunc(dispatchShapes, func(s dispatchShape) bool { return s.event == sd.event && s.where == where })
		if !assert.GreaterOrEqual(t, i, 0, "%s (%s) has no row in the table: %s", sd.event, where, sd.d) {
			continue
		}
		shape := dispatchShapes[i]
		covered[[2]string{shape.event, shape.where}] = true
		checkFields(t, sd.event+" "+where, d, shape.fields, shape.absent)
		for path, fields := range shape.nested {
			for _, obj := range nestedObjects(t, d, path) {
				checkFields(t, sd.event+" "+where+" "+path, obj, fields, nil)
			}
		}
	}
	var missing []string
	for _, s := range dispatchShapes {
		if !covered[[2]string{s.event, s.where}] {
			missing = append(missing, s.event+" "+s.where)
		}
	}
	sort.Strings(missing)
	assert.Empty(t, missing, "dispatches of the table the scenario did not bring")
}

// checkFields checks that d has every field and none of absent.
func checkFields(t *testing.T, what string, d map[string]json.RawMessage, fields, absent []string) {
	t.Helper()
	var lacking, extra []string
	for _, k := range fields {
		if _, ok := d[k]; !ok {
			lacking = append(lacking, k)
		}
	}
	for _, k := range absent {
		if _, ok := d[k]; ok {
			extra = append(extra, k)
		}
	}
	assert.Empty(t, lacking, "%s lacks documented fields", what)
	assert.Empty(t, extra, "%s has fields it must not have", what)
}

// nestedObjects returns the objects at path in d: "x" the object d.x (none when null), "x[]"
// each object of the array d.x.
func nestedObjects(t *testing.T, d map[string]json.RawMessage, path string) []map[string]json.RawMessage {
	t.Helper()
	name, list := strings.CutSuffix(path, "[]")
	raw, ok := d[name]
	if !ok || string(raw) == "null" {
		return nil
	}
	if !list {
		var obj map[string]json.RawMessage
		require.NoError(t, json.Unmarshal(raw, &obj), "%s: %s", path, raw)
		return []map[string]json.RawMessage{obj}
	}
	var objs []map[string]json.RawMessage
	require.NoError(t, json.Unmarshal(raw, &objs), "%s: %s", path, raw)
	return objs
}
