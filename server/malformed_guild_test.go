package server_test

import (
	"bytes"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"sdkpp/server"
	"sdkpp/server/guildaccess"
	"sdkpp/server/servertest"
	"sdkpp/server/servertest/guildtest"
	"sdkpp/wire"
)

// TestMalformedGuildInputNeverGives5xx drives every guild, channel, role, member, message,
// voice-status, invite, target-users (rules INVT-1, INVT-2, INVT-3, TU-1) and users-and-apps
// route with ids of a real guild the bot is in (its guild, channels, members, a message, an
// invite) and with malformed bodies (JSON, multipart and CSV; attachments, rules ATT-1, ATT-2,
// LIM-1), queries and ids: every answer is a 4xx or a success, never a 5xx (do fails the test on
// one), and every 4xx carries the platform's error body {code, message}. It runs in the fixture's guild, where the bot has few
// permissions, and in one where it is an administrator, so that every handler gets past its
// permission checks.
func TestMalformedGuildInputNeverGives5xx(t *testing.T) {
	f := guildtest.NewBots(t, servertest.WithConfig(func(c *server.Config) { c.RateLimits.Disabled = true }))
	admin, err := f.E.Server.CreateGuild(wire.GuildSpec{Name: "Admin", OwnerID: f.E.User("alice").ID,
		Roles:   []wire.RoleSpec{{Name: "admin", Permissions: wire.Permissions(guildaccess.PermAdministrator)}},
		Members: []wire.GuildMemberSpec{{ID: f.E.User("bob").ID}, {ID: f.BotID, Roles: []int{0}}},
		Channel: []wire.GuildChannelSpec{{Name: "general", Type: wire.ChannelGuildText}, {Name: "voice", Type: wire.ChannelGuildVoice}}})
	require.NoError(t, err)
	t.Run("few permissions", func(t *testing.T) { malformedGuildInput(t, f, f.Guild) })
	t.Run("administrator", func(t *testing.T) { malformedGuildInput(t, f, admin) })
}

func malformedGuildInput(t *testing.T, f *guildtest.Bots, g wire.DevGuild) {
	e := f.E
	general, voice := g.Channels[0].ID.String(), g.Channels[len(g.Channels)-1].ID.String()
	var msg wire.Message
	guildtest.OK(t, guildtest.SendJSON(t, http.MethodPost, f.API("/channels/"+general+"/messages"), map[string]string{"content": "hi"}, f.BotHeader()), &msg)
	var inv wire.Invite // the owner's: the bot may lack CREATE_INSTANT_INVITE
	guildtest.OK(t, guildtest.SendJSON(t, http.MethodPost, f.API("/channels/"+general+"/invites"), map[string]any{"max_age": 0}, guildtest.Bearer(f.Alice)), &inv)
	guild, bob, message := g.ID.String(), e.User("bob").ID.String(), msg.ID.String()
	// The bot's DM with bob, and an interaction it deferred, for the DM and webhook routes.
	var dm wire.DMChannel
	guildtest.OK(t, guildtest.SendJSON(t, http.MethodPost, f.API("/users/@me/channels"), map[string]string{"recipient_id": bob}, f.BotHeader()), &dm)
	var dmMsg wire.Message
	guildtest.OK(t, guildtest.SendJSON(t, http.MethodPost, f.API("/channels/"+dm.ID.String()+"/messages"), map[string]string{"content": "hi"}, f.BotHeader()), &dmMsg)
	ix := deferredInteraction(t, f, g)
	ids := strings.NewReplacer("{guild}", guild, "{general}", general, "{voice}", voice, "{bob}", bob,
		"{message}", message, "{app}", e.App.ID.String(), "{invite}", inv.Code, "{dm}", dm.ID.String(),
		"{dmmessage}", dmMsg.ID.String(), "{token}", ix.Token)

	type route struct{ method, path string }
	routes := []route{
		{"GET", "/users/@me/guilds"}, {"GET", "/guilds/{guild}"}, {"GET", "/guilds/{guild}/channels"},
		{"GET", "/guilds/{guild}/roles"}, {"GET", "/guilds/{guild}/roles/member-counts"}, {"GET", "/guilds/{guild}/messages/search"}, {"GET", "/guilds/{guild}/members"}, {"GET", "/guilds/{guild}/members/{bob}"},
		{"PATCH", "/guilds/{guild}/members/@me"}, {"GET", "/channels/{general}"}, {"GET", "/channels/{voice}"},
		{"POST", "/channels/{general}/messages"}, {"GET", "/channels/{general}/messages"},
		{"GET", "/channels/{general}/messages/{message}"}, {"PATCH", "/channels/{general}/messages/{message}"},
		{"POST", "/channels/{voice}/messages"}, {"PUT", "/channels/{voice}/voice-status"},
		{"PUT", "/channels/{general}/voice-status"}, {"GET", "/guilds/{guild}/audit-logs"},
		{"GET", "/users/@me/connections"}, {"GET", "/applications/@me"}, {"PATCH", "/applications/@me"},
		{"GET", "/oauth2/applications/@me"}, {"GET", "/oauth2/applications/{app}"}, {"GET", "/oauth2/@me"},
		{"GET", "/skus/{app}/subscriptions"}, {"GET", "/skus/{app}/subscriptions/{app}"}, {"GET", "/gateway/bot"},
		{"POST", "/guilds"}, {"POST", "/guilds/templates/x"}, {"PATCH", "/channels/{general}"}, {"PATCH", "/channels/{voice}"},
		{"GET", "/guilds/{guild}/emojis"}, {"POST", "/guilds/{guild}/emojis"}, {"DELETE", "/guilds/{guild}/emojis/{message}"},
		{"GET", "/guilds/{guild}/scheduled-events"}, {"POST", "/guilds/{guild}/scheduled-events"},
		{"DELETE", "/guilds/{guild}/scheduled-events/{message}"}, {"POST", "/guilds/{guild}/unknown-action"},
		{"GET", "/guilds/{guild}/prune"}, {"POST", "/guilds/{guild}/prune"},
		{"GET", "/channels/{general}/messages/pins"}, {"PUT", "/channels/{general}/messages/pins/{message}"},
		{"GET", "/channels/{general}/pins"}, {"PUT", "/channels/{general}/pins/{message}"},
		{"DELETE", "/channels/{general}/messages/pins/{message}"}, {"DELETE", "/channels/{general}/pins/{message}"},
		{"POST", "/channels/{general}/invites"}, {"POST", "/channels/{voice}/invites"}, {"GET", "/channels/{general}/invites"},
		{"GET", "/invites/{invite}/target-users"}, {"PUT", "/invites/{invite}/target-users"},
		{"GET", "/invites/{invite}/target-users/job-status"}, {"PUT", "/invites/{invite}/target-users/{bob}"},
		{"DELETE", "/invites/{invite}/target-users/{bob}"}, {"POST", "/invites/{invite}/target-users/bulk-add"},
		{"POST", "/invites/{invite}/target-users/bulk-delete"},
		{"GET", "/applications/{app}/commands"}, {"POST", "/applications/{app}/commands"},
		{"PUT", "/applications/{app}/commands"}, {"GET", "/applications/{app}/commands/{bob}"},
		{"PATCH", "/applications/{app}/commands/{bob}"}, {"DELETE", "/applications/{app}/commands/{bob}"},
		{"POST", "/applications/{app}/guilds/{guild}/commands"}, {"PUT", "/applications/{app}/guilds/{guild}/commands"},
		{"PATCH", "/applications/{app}/guilds/{guild}/commands/x"}, {"POST", "/applications/x/commands"},
		{"POST", "/interactions"}, {"POST", "/interactions/{message}/x/callback"}, {"POST", "/interactions/x/x/callback"},
		{"POST", "/users/@me/channels"}, {"GET", "/channels/{dm}"}, {"GET", "/channels/{dm}/messages"},
		{"POST", "/channels/{dm}/messages"}, {"PATCH", "/channels/{dm}/messages/{dmmessage}"},
		{"GET", "/channels/{dm}/messages/pins"}, {"PUT", "/channels/{dm}/messages/pins/{dmmessage}"}, {"GET", "/channels/{dm}/pins"},
		{"DELETE", "/channels/{dm}/messages/pins/{dmmessage}"}, {"PUT", "/channels/{dm}/pins/{dmmessage}"}, {"DELETE", "/channels/{dm}/pins/{dmmessage}"},
		{"POST", "/webhooks/{app}/{token}"}, {"POST", "/webhooks/{app}/x"}, {"GET", "/webhooks/{app}/{token}/messages/@original"},
		{"PATCH", "/webhooks/{app}/{token}/messages/@original"}, {"GET", "/webhooks/{app}/{token}/messages/{message}"},
		{"PATCH", "/webhooks/{app}/{token}/messages/{message}"}, {"DELETE", "/webhooks/{app}/{token}/messages/{message}"},
		{"DELETE", "/webhooks/{app}/{token}/messages/@original"}, {"DELETE", "/channels/{dm}/messages/{dmmessage}"},
		// Last: these take the message, and the bot out of the guild.
		{"DELETE", "/invites/{invite}"}, {"DELETE", "/channels/{general}/messages/{message}"}, {"DELETE", "/users/@me/guilds/{guild}"},
	}
	long := strings.Repeat("x", 1<<16)
	bodies := []string{"", "{", "[]", "null", "0", `"x"`, "\xff\xfe\x00", `{"content": 5}`, `{"content": ["hi"]}`,
		`{"content": "` + long + `"}`, `{"content": "\ud800"}`, "{\"content\": \"\xff\"}", `{"nick": 5}`,
		`{"nick": "` + long + `"}`, `{"nick": "\udfff"}`, `{"avatar": "data:image/png;base64,%%"}`, `{"avatar": 1e999}`,
		`{"banner": []}`, `{"bio": {"a": 1}}`, `{"rate_limit_per_user": 1e999}`, `{"rate_limit_per_user": "5"}`, `{"topic": 5, "name": null}`, `{"days": 1e999}`, `{"days": 7, "include_roles": [5]}`, `{"compute_prune_count": "no"}`, `{"name": "ab", "image": 5}`, `{"name": "ab", "image": "data:image/gif;base64,R0lGODlh"}`,
		`{"name": "e", "privacy_level": 2, "entity_type": 3, "scheduled_start_time": "2999-01-01T00:00:00Z", "scheduled_end_time": 5}`,
		`{"name": "e", "privacy_level": 2, "entity_type": 2, "channel_id": "{voice}", "scheduled_start_time": "2999-01-01T00:00:00Z"}`,
		`{"name": "e", "privacy_level": 2, "entity_type": 3, "entity_metadata": [], "scheduled_start_time": "2999-01-01T00:00:00Z"}`, `{"status": 5}`, `{"status": "` + long + `"}`, `{"status": "\ud800"}`,
		`{"message_reference": {"message_id": "x"}}`, `{"message_reference": {"message_id": "{message}", "channel_id": 1e30}}`,
		`{"message_reference": 5}`, `{"content": "a", "message_reference": []}`, `{"content": "a", "message_reference": {}}`,
		`{"content": "a", "message_reference": {"message_id": "{message}", "type": 7}}`,
		`{"content": "a", "message_reference": {"message_id": "{message}", "type": "0"}}`,
		`{"message_reference": {"message_id": "{message}", "type": 1e400}}`,
		`{"content": "a", "message_reference": {"message_id": "{message}", "guild_id": -1}}`,
		`{"content": "a", "message_reference": {"message_id": "{message}", "fail_if_not_exists": "no"}}`,
		`{"content": "a", "message_reference": {"message_id": "{message}", "channel_id": "{voice}"}}`,
		`{"content": "a", "message_reference": {"message_id": "{message}", "channel_id": "{general}", "guild_id": "{guild}"}}`,
		`{"content": "a", "message_reference": {"message_id": "{bob}", "fail_if_not_exists": false}}`,
		`{"content": "a", "message_reference": {"message_id": "{message}", "type": 1}}`,
		`{"message_reference": {"message_id": "{message}", "type": 1}}`,
		`{"message_reference": {"message_id": "{message}", "type": 1, "channel_id": "{voice}"}}`,
		`{"message_reference": {"message_id": "{message}", "type": 1, "channel_id": "{bob}"}}`,
		`{"content": "a", "nonce": {"x": 1}}`, `{"content": "a", "nonce": 99999999999999999999999}`,
		`{"content": "a", "tts": "yes"}`, `{"content": "a", "flags": -1}`, `{"content": "a", "flags": 1e300}`,
		`{"content": "a", "allowed_mentions": {"parse": "everyone"}}`, `{"content": "a", "embeds": [{"title": 5}]}`,
		`{"content": "a", "sticker_ids": ["x"]}`, `{"description": 5}`, `{"flags": "x"}`, `{"flags": -1}`,
		`{"interactions_endpoint_url": "` + long + `"}`, `{"tags": [5]}`, `{"name": "` + long + `"}`,
		`{"content": ` + strings.Repeat("[", 5000) + `}`, strings.Repeat(`{"a":`, 5000),
		`{"name": "a", "description": "b", "type": 4}`, `{"name": "a", "description": "b", "options": [{"type": 1e99}]}`,
		`[{"name": "a", "description": "b"}, 5]`, `{"name": "a", "description": "b", "options": 5}`, `[null]`,
		`{"type": 2, "application_id": "{app}", "guild_id": "{guild}", "channel_id": "{general}", "data": {"id": "{bob}", "options": [{"name": "x", "value": {}}]}}`,
		`{"type": 5, "application_id": "{app}", "guild_id": "{guild}", "channel_id": "{general}", "data": {"id": "{message}", "components": [{"type": 18, "component": null}, {"type": 1}]}}`,
		`{"type": 2, "application_id": "{app}", "guild_id": "{guild}", "channel_id": "{voice}", "data": null}`,
		`{"type": 9, "data": {"custom_id": "m", "title": "t", "components": [{"type": 18}, {"type": 1, "components": [{}]}]}}`,
		`{"type": 4, "data": {"content": 5}}`, `{"type": 9, "data": []}`,
		mpPayload(`{"type": 5, "application_id": "{app}", "guild_id": "{guild}", "channel_id": "{general}", "data": {"id": "{message}", "components": [{"type": 19, "custom_id": "f", "values": ["0", "x", "99999999999999999999"]}]}}`), `{"recipient_id": "{bob}"}`, `{"recipient_id": []}`,
		`{"recipient_id": "{app}"}`, `{"content": "a", "flags": 64}`, `{"content": "a", "flags": "64"}`, `{"content": null, "flags": 1e99}`,
		`{"type": 8, "data": {"choices": [{"name": 5, "value": {}}]}}`, `{"type": 6}`, `{"type": 5, "data": {"flags": -1}}`,
		`{"type": 4, "application_id": "{app}", "guild_id": "{guild}", "channel_id": "{general}", "data": {"id": "{bob}", "options": [{"name": "x", "focused": true, "options": [{}]}]}}`,
		`{"name": "a", "description": "b", "options": [{"type": 2, "name": "g", "description": "d", "options": [{"type": 1, "name": "s", "description": "d", "options": [{"type": 3, "name": "v", "description": "d", "choices": [{"name": "n", "value": []}]}]}]}]}`,
		`{"name": "a", "description": "b", "options": [{"type": 1, "name": "s", "description": "d", "options": ` + strings.Repeat("[", 3000) + `}]}`,
	}
	// The invite routes also take these bodies, and multipart and CSV uploads.
	inviteBodies := []string{`{"max_age": "x"}`, `{"max_age": -1, "max_uses": 1e999}`, `{"temporary": "yes", "unique": []}`,
		`{"target_user_ids": "{bob}"}`, `{"target_user_ids": [1e999, null, -1]}`, `{"target_user_ids": ["9223372036854775808"]}`,
		`{"role_ids": [{}]}`, `{"role_ids": ["{guild}"]}`, `{"role_ids": ["{bob}"]}`, `{"user_ids": null}`, `{"user_ids": [-1]}`,
		`{"user_ids": {"a": 1}}`, `{"user_ids": ["{bob}", "0"]}`, "user_id\n{bob}\n", "user_id\n\xff\n", "--x\r\n\r\n--x--",
	}
	// The message routes also take attachments (rules ATT-1, ATT-2, LIM-1), in JSON and in
	// multipart bodies (boundary x).
	mp := func(parts ...string) string { return "--x\r\n" + strings.Join(parts, "\r\n--x\r\n") + "\r\n--x--\r\n" }
	filePart := func(name, filename, body string) string {
		return `Content-Disposition: form-data; name="` + name + `"; filename="` + filename + "\"\r\n\r\n" + body
	}
	payload := func(json string) string {
		return "Content-Disposition: form-data; name=\"payload_json\"\r\n\r\n" + json
	}
	messageBodies := []string{`{"attachments": 5}`, `{"attachments": [5]}`, `{"attachments": {"id": 0}}`,
		`{"attachments": [{"id": "x"}]}`, `{"attachments": [{"id": -1}]}`, `{"attachments": [{"id": 1e999}]}`,
		`{"attachments": [{"id": "18446744073709551616"}]}`, `{"attachments": [{"id": 0, "is_spoiler": "yes"}]}`,
		`{"attachments": [{"id": 0, "is_spoiler": null, "description": 5}]}`, `{"attachments": [{"id": 0, "flags": -1}]}`,
		`{"attachments": [{"id": 0, "filename": ["a"]}]}`, `{"attachments": [{"id": 0}, {"id": "0"}]}`,
		`{"attachments": [{}]}`, `{"content": "a", "attachments": [{"id": "{message}"}]}`, `{"content": "", "attachments": []}`,
		`{"attachments": [{"id": 0, "description": "` + long + `"}]}`,
		`{"attachments": [` + strings.TrimSuffix(strings.Repeat(`{"id": 0},`, 11), ",") + `]}`,
		mp(filePart("files[0]", "a\xff.txt", "abc")), mp(filePart("files[0]", "../../a\\b", "abc")),
		mp(filePart("files[0]", "", "")), mp(filePart("files[-1]", "a", "a")), mp(filePart("files[]", "a", "a")),
		mp(filePart("files[99999999999999999999]", "a", "a")), mp(filePart("files[0", "a", "a")), mp(filePart("file", "a", "a")),
		mp(payload(`{"attachments": [{"id": 0, "is_spoiler": "x"}]}`), filePart("files[0]", "a.txt", "abc")),
		mp(payload(`{"attachments": [{"id": 1}]}`), filePart("files[0]", "a.txt", "abc")),
		mp(payload(`{"attachments": [{"id": "{message}"}]}`), filePart("files[0]", "a.txt", "abc")),
		mp(payload("{"), filePart("files[0]", "a.txt", "abc")), mp(payload("{}"), payload("{}")),
		mp(payload(`{"message_reference": {"message_id": "{message}", "type": 1}}`), filePart("files[0]", "a.txt", "abc")),
		mp(filePart("files[0]", "a", "a"), filePart("files[0]", "b", "b")), mp(payload(`{"content": "\ud800"}`)),
		mp(strings.Repeat(filePart("files[0]", "a", "a"), 2)), "--x\r\nContent-Disposition: form-data; name=\"files[0]\"\r\n\r\nabc",
	}
	for i := range 11 {
		messageBodies = append(messageBodies, mp(strings.Repeat(filePart("files["+strconv.Itoa(i)+"]", "a", "a")+"\r\n--x\r\n", i)+filePart("files[99]", "b", "b")))
	}
	headers := []http.Header{
		{"Content-Type": {"application/json"}, "Authorization": {"Bot " + e.App.BotToken}},
		{"Content-Type": {"application/json"}, "Authorization": {"Bearer " + f.Alice}},
		{"Content-Type": {"text/plain"}, "Authorization": {"Bot " + e.App.BotToken}},
		{"Content-Type": {"application/json"}},
	}
	uploadHeaders := []http.Header{
		{"Content-Type": {"multipart/form-data; boundary=x"}, "Authorization": {"Bot " + e.App.BotToken}},
		{"Content-Type": {"multipart/form-data"}, "Authorization": {"Bot " + e.App.BotToken}},
		{"Content-Type": {"text/csv"}, "Authorization": {"Bot " + e.App.BotToken}},
	}
	queries := []string{"?limit=-1", "?limit=0", "?limit=99999999999999999999", "?limit=x", "?limit=1.5",
		"?before=x&after=-1", "?around=18446744073709551616", "?before=0&after=0&around=0", "?after=9223372036854775808",
		"?with_counts=2", "?shard=-1", "?shard=99999999999999999999", "?user_id=x", "?action_type=-5", "?action_type=1e9",
		"?limit=1&limit=2", "?days=0", "?days=31", "?days=1e9", "?include_roles=,", "?include_roles={bob},x", "?%zz", "?limit=%ff", "?query=\xff"}
	badIDs := []string{"0", "-1", "x", "1e3", "18446744073709551616", "9223372036854775808", "%ff", "@me", strings.Repeat("9", 500)}

	send := func(method, path, body string, h http.Header) {
		t.Helper()
		r := guildtest.Do(t, method, e.APIURL+ids.Replace(path), bytes.NewReader([]byte(ids.Replace(body))), h)
		if r.Status >= 400 && r.Status != http.StatusMethodNotAllowed {
			var apiErr struct {
				Code    *int    `json:"code"`
				Message *string `json:"message"`
			}
			r.JSON(t, &apiErr)
			assert.True(t, apiErr.Code != nil && apiErr.Message != nil, "%s %s %.80q: HTTP %d without the platform's body: %s",
				method, path, body, r.Status, r.Body)
		}
	}
	// The attachments' files, at the web base: unknown ids and names are 404s.
	for _, id := range append(badIDs, general, message) {
		for _, path := range []string{"/attachments/" + id + "/" + message + "/a.txt", "/attachments/" + general + "/" + id + "/a.txt",
			"/attachments/" + general + "/" + message + "/" + id, "/attachments/" + general + "/" + id + "/%ff"} {
			r := guildtest.Do(t, http.MethodGet, e.URL+path, nil, nil)
			assert.Contains(t, []int{http.StatusNotFound, http.StatusBadRequest, http.StatusMovedPermanently}, r.Status, "GET %s", path)
		}
	}
	for _, r := range routes {
		for _, q := range queries {
			send(r.method, r.path+q, "", headers[0])
		}
		for _, id := range badIDs { // each real id of the path in turn replaced by a malformed one
			for _, param := range []string{"{guild}", "{general}", "{voice}", "{bob}", "{message}", "{app}", "{invite}", "{dm}", "{dmmessage}"} {
				if strings.Contains(r.path, param) {
					send(r.method, strings.Replace(r.path, param, id, 1), `{"content":"hi"}`, headers[0])
				}
			}
		}
		hs, bs := headers, bodies
		if strings.Contains(r.path, "/invites") {
			hs, bs = append(slices.Clip(headers), uploadHeaders...), append(slices.Clip(bodies), inviteBodies...)
		}
		if strings.Contains(r.path, "/messages") || r.path == "/interactions" { // a modal submission uploads files too
			hs, bs = append(slices.Clip(headers), uploadHeaders[:2]...), append(slices.Clip(bodies), messageBodies...)
		}
		for _, h := range hs {
			for _, b := range bs {
				send(r.method, r.path, b, h)
			}
		}
	}
}

// deferredInteraction registers a command in g, has alice invoke it, reads the interaction on a
// bot session and defers its response (type 5), so that its webhook routes answer.
func deferredInteraction(t *testing.T, f *guildtest.Bots, g wire.DevGuild) wire.Interaction {
	t.Helper()
	var cmd wire.ApplicationCommand
	guildtest.OK(t, guildtest.SendJSON(t, http.MethodPut, f.API("/applications/"+f.E.App.ID.String()+"/guilds/"+g.ID.String()+"/commands"),
		[]map[string]string{{"name": "sweep", "description": "d"}}, f.BotHeader()), &[]*wire.ApplicationCommand{&cmd})
	gw := guildtest.Dial(t, f.E, "")
	gw.Identify(f.E.App.BotToken, 0)
	r := guildtest.SendJSON(t, http.MethodPost, f.API("/interactions"), map[string]any{"type": 2, "application_id": f.E.App.ID,
		"guild_id": g.ID, "channel_id": g.Channels[0].ID, "data": map[string]any{"id": cmd.ID, "name": "sweep", "type": 1}}, guildtest.Bearer(f.Alice))
	require.Equal(t, http.StatusNoContent, r.Status, "%s", r.Body)
	var ix wire.Interaction
	gw.Until("INTERACTION_CREATE", &ix)
	r = guildtest.SendJSON(t, http.MethodPost, f.API("/interactions/"+ix.ID.String()+"/"+ix.Token+"/callback"), map[string]any{"type": 5}, nil)
	require.Equal(t, http.StatusNoContent, r.Status, "%s", r.Body)
	return ix
}

// mpPayload is a multipart body (boundary x) of a payload_json part and one file, files[0].
func mpPayload(json string) string {
	return "--x\r\nContent-Disposition: form-data; name=\"payload_json\"\r\n\r\n" + json +
		"\r\n--x\r\nContent-Disposition: form-data; name=\"files[0]\"; filename=\"a.txt\"\r\n\r\nabc\r\n--x--\r\n"
}
