package invites_test

import (
	"context"
	"net/http"
	"sort"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"sdkpp/server"
	"sdkpp/server/guildaccess"
	"sdkpp/server/servertest"
	"sdkpp/server/servertest/guildtest"
	"sdkpp/server/store"
	"sdkpp/wire"
	gwire "sdkpp/wire/gateway"
)

// jobEvent is a call of the service's target-users job hook.
type jobEvent struct {
	code   string
	status int
}

// jobWatch hooks the service's target-users jobs: it reports each start and end, and while hold
// is set keeps a job that starts in progress until release (or the service stops).
type jobWatch struct {
	events  chan jobEvent
	hold    atomic.Bool
	release chan struct{}
}

func newJobWatch() *jobWatch {
	return &jobWatch{events: make(chan jobEvent, 64), release: make(chan struct{}, 1)}
}

func (w *jobWatch) hook(ctx context.Context, code string, status int) {
	w.events <- jobEvent{code, status}
	if status == wire.TargetUsersJobProcessing && w.hold.Load() {
		select {
		case <-w.release:
		case <-ctx.Done():
		}
	}
}

// next returns the next job event (the timeout only guards against a hang).
func (w *jobWatch) next(t *testing.T) jobEvent {
	t.Helper()
	select {
	case ev := <-w.events:
		return ev
	case <-time.After(10 * time.Second):
		t.Fatal("no target-users job event")
		return jobEvent{}
	}
}

// expect requires the next job events to be the given statuses of code's job.
func (w *jobWatch) expect(t *testing.T, code string, statuses ...int) {
	t.Helper()
	for _, s := range statuses {
		assert.Equal(t, jobEvent{code, s}, w.next(t))
	}
}

// chanInviteFixture is a bot fixture with a guild "Invites" owned by alice where the bot and
// carol are members and bob is not. Roles by position: low (1), inviter (2:
// CREATE_INSTANT_INVITE, MANAGE_ROLES and MANAGE_CHANNELS; the bot has it), high (3), auditor
// (4: VIEW_AUDIT_LOG; carol has it). Channels: "welcome" (text) and "lobby" (a category). Its
// service reports its target-users jobs to jobs, on a clock frozen at t0.
type chanInviteFixture struct {
	*guildtest.Bots
	g                           wire.DevGuild
	low, inviter, high, auditor wire.Role
	jobs                        *jobWatch
	t0                          time.Time
}

func newChanInviteFixture(t *testing.T, opts ...servertest.Option) *chanInviteFixture {
	jobs := newJobWatch()
	t0 := time.Date(2026, 5, 4, 12, 0, 0, 0, time.UTC)
	opts = append([]servertest.Option{servertest.WithFrozenClock(t0),
		servertest.WithConfig(func(c *server.Config) { c.OnTargetUsersJob = jobs.hook })}, opts...)
	f := &chanInviteFixture{Bots: guildtest.NewBots(t, opts...), jobs: jobs, t0: t0}
	var err error
	f.g, err = f.E.Server.CreateGuild(wire.GuildSpec{Name: "Invites", OwnerID: f.E.User("alice").ID,
		Roles: []wire.RoleSpec{{Name: "low", Color: 0x111111}, {Name: "inviter",
			Permissions: wire.Permissions(wire.PermCreateInstantInvite | wire.PermManageRoles | guildaccess.PermManageChannels)},
			{Name: "high"}, {Name: "auditor", Permissions: wire.Permissions(wire.PermViewAuditLog)}},
		Members: []wire.GuildMemberSpec{{ID: f.BotID, Roles: []int{1}}, {ID: f.E.User("carol").ID, Roles: []int{3}}},
		Channel: []wire.GuildChannelSpec{{Name: "welcome", Type: wire.ChannelGuildText},
			{Name: "lobby", Type: wire.ChannelGuildCategory, Position: 1}}})
	require.NoError(t, err)
	var roles []wire.Role
	guildtest.OK(t, guildtest.Do(t, http.MethodGet, f.API("/guilds/"+f.g.ID.String()+"/roles"), nil, f.BotHeader()), &roles)
	require.Len(t, roles, 5)
	f.low, f.inviter, f.high, f.auditor = roles[1], roles[2], roles[3], roles[4]
	return f
}

func (f *chanInviteFixture) invitesPath() string {
	return "/channels/" + f.g.Channels[0].ID.String() + "/invites"
}

func (f *chanInviteFixture) targetsPath(code string, rest ...string) string {
	return "/invites/" + code + "/target-users" + strings.Join(rest, "")
}

// create makes an invite to "welcome" as the bot from a JSON body.
func (f *chanInviteFixture) create(t *testing.T, body any) wire.Invite {
	t.Helper()
	var inv wire.Invite
	guildtest.OK(t, guildtest.SendJSON(t, http.MethodPost, f.API(f.invitesPath()), body, f.BotHeader()), &inv)
	require.NotEmpty(t, inv.Code)
	return inv
}

// targets reads an invite's target users file as the bot.
func (f *chanInviteFixture) targets(t *testing.T, code string) string {
	t.Helper()
	r := guildtest.Do(t, http.MethodGet, f.API(f.targetsPath(code)), nil, f.BotHeader())
	require.Equal(t, http.StatusOK, r.Status, "%s", r.Body)
	assert.Equal(t, "text/csv", r.Header.Get("Content-Type"))
	return string(r.Body)
}

// jobStatus reads an invite's job status as the bot, raw and decoded.
func (f *chanInviteFixture) jobStatus(t *testing.T, code string) (wire.TargetUsersJobStatus, map[string]any) {
	t.Helper()
	r := guildtest.Do(t, http.MethodGet, f.API(f.targetsPath(code, "/job-status")), nil, f.BotHeader())
	var st wire.TargetUsersJobStatus
	guildtest.OK(t, r, &st)
	var raw map[string]any
	r.JSON(t, &raw)
	return st, raw
}

// accept accepts an invite with a user's token.
func (f *chanInviteFixture) accept(t *testing.T, code, tok string) guildtest.Resp {
	t.Helper()
	return guildtest.Do(t, http.MethodPost, f.API("/invites/"+code), nil, guildtest.Bearer(tok))
}

// csvOf is a target users file of ids.
func csvOf(ids ...wire.Snowflake) string {
	return string(wire.AppendTargetUsersCSV(nil, ids))
}

func filePart(csv string) guildtest.Part {
	return guildtest.Part{Name: wire.TargetUsersFilePart, Filename: "users.csv", ContentType: "text/csv", Body: csv}
}

// upload sends a multipart request as the bot.
func (f *chanInviteFixture) upload(t *testing.T, method, path string, parts ...guildtest.Part) guildtest.Resp {
	t.Helper()
	body, ct := guildtest.MultipartBody(t, parts...)
	h := f.BotHeader()
	h.Set("Content-Type", ct)
	return guildtest.Do(t, method, f.API(path), body, h)
}

// makeUsers stores n users with ids from base and returns their ids.
func makeUsers(t *testing.T, e *servertest.Env, base uint64, n int) []wire.Snowflake {
	t.Helper()
	ids := make([]wire.Snowflake, n)
	err := e.Server.Store().WithTx(context.Background(), func(st store.Store) error {
		for i := range ids {
			id := base + uint64(i)
			ids[i] = wire.Snowflake(id)
			if err := st.CreateUser(context.Background(), &store.User{ID: id, Username: "target" + strconv.FormatUint(id, 10),
				CreatedAt: e.Clock.Now()}); err != nil {
				return err
			}
		}
		return nil
	})
	require.NoError(t, err)
	return ids
}

// INVT-1: Create Channel Invite with target_user_ids answers the invite with its metadata; only
// the target users may accept it, and Get Invite shows it to anyone. max_age 0 never expires;
// unique false answers an existing invite with the same settings.
func TestCreateChannelInviteWithTargetUsers(t *testing.T) {
	f := newChanInviteFixture(t)
	bob, carol := f.E.User("bob").ID, f.E.User("carol").ID
	inv := f.create(t, map[string]any{"target_user_ids": []string{bob.String()}, "max_age": 3600, "max_uses": 5,
		"temporary": true})
	assert.Equal(t, f.g.ID, inv.Guild.ID)
	assert.Equal(t, f.g.Channels[0].ID, inv.Channel.ID)
	assert.Equal(t, "welcome", inv.Channel.Name)
	require.NotNil(t, inv.Inviter)
	assert.Equal(t, f.BotID, inv.Inviter.ID)
	assert.Equal(t, 3600, inv.MaxAge)
	assert.Equal(t, 5, inv.MaxUses)
	assert.Zero(t, inv.Uses)
	assert.True(t, inv.Temporary)
	assert.Equal(t, f.t0.Format(time.RFC3339), inv.CreatedAt)
	require.NotNil(t, inv.ExpiresAt)
	assert.Equal(t, f.t0.Add(time.Hour).Format(time.RFC3339), *inv.ExpiresAt)
	assert.Empty(t, inv.Roles)
	assert.Equal(t, csvOf(bob), f.targets(t, inv.Code), "rule INVT-1")

	guildtest.ExpectAPIError(t, "INVT-1: carol is not a target user", f.accept(t, inv.Code, f.Carol), http.StatusForbidden, wire.CodeMissingAccess)
	var public wire.Invite
	guildtest.OK(t, guildtest.Do(t, http.MethodGet, f.API("/invites/"+inv.Code), nil, nil), &public)
	assert.Zero(t, public.Uses, "a refused acceptance does not use the invite")
	var joined wire.Invite
	guildtest.OK(t, f.accept(t, inv.Code, f.Bob), &joined)
	assert.Equal(t, 1, joined.Uses)
	guildtest.OK(t, guildtest.Do(t, http.MethodGet, f.API("/guilds/"+f.g.ID.String()+"/members/"+bob.String()), nil, f.BotHeader()), nil)

	// Defaults: 24 hours, unlimited uses; max_age 0 never expires (expires_at null).
	def := f.create(t, map[string]any{"unique": true})
	assert.Equal(t, wire.DefaultInviteAge, def.MaxAge)
	assert.Zero(t, def.MaxUses)
	require.NotNil(t, def.ExpiresAt)
	assert.Equal(t, f.t0.Add(24*time.Hour).Format(time.RFC3339), *def.ExpiresAt)
	r := guildtest.SendJSON(t, http.MethodPost, f.API(f.invitesPath()), map[string]any{"max_age": 0, "unique": true}, f.BotHeader())
	var raw map[string]any
	guildtest.OK(t, r, &raw)
	assert.Contains(t, raw, "expires_at")
	assert.Nil(t, raw["expires_at"], "never expires: %s", r.Body)
	assert.EqualValues(t, 0, raw["max_age"])
	forever := raw["code"].(string)
	f.E.Clock.Advance(30 * 24 * time.Hour) // past the longest max_age, and the tokens' lifetime
	carolTok := f.E.Token(t, "carol", "openid sdk.social_layer").AccessToken
	for range 4 {
		guildtest.OK(t, f.accept(t, forever, carolTok), nil) // open to anyone holding the code; max_uses 0: unlimited
	}

	// unique false (the default) answers the caller's invite with the same settings.
	a := f.create(t, map[string]any{"max_uses": 3})
	b := f.create(t, map[string]any{"max_uses": 3})
	c := f.create(t, map[string]any{"max_uses": 3, "unique": true})
	assert.Equal(t, a.Code, b.Code, "reused")
	assert.NotEqual(t, a.Code, c.Code, "unique")
	assert.NotEqual(t, a.Code, f.create(t, map[string]any{"max_uses": 4}).Code, "other settings")
	assert.NotEqual(t, a.Code, f.create(t, map[string]any{"max_uses": 3, "target_user_ids": []wire.Snowflake{carol}}).Code,
		"an invite with target users is never reused")
}

// INVT-1, TU-1, INVT-2: Create Channel Invite as multipart/form-data, with payload_json and a
// target_users_file: the file is processed as a job; until it completes nobody may accept, then
// only its users.
func TestCreateChannelInviteWithTargetUsersFile(t *testing.T) {
	f := newChanInviteFixture(t, servertest.WithConfig(func(c *server.Config) { c.MetricsAddr = "127.0.0.1:0" }))
	bob := f.E.User("bob").ID
	f.jobs.hold.Store(true)
	r := f.upload(t, http.MethodPost, f.invitesPath(), guildtest.PayloadPart(map[string]any{"max_uses": 2}),
		filePart("user_id\r\n"+bob.String()+"\r\n"))
	var inv wire.Invite
	guildtest.OK(t, r, &inv)
	assert.Equal(t, 2, inv.MaxUses, "payload_json was read")
	f.jobs.expect(t, inv.Code, wire.TargetUsersJobProcessing)
	st, _ := f.jobStatus(t, inv.Code)
	assert.Equal(t, wire.TargetUsersJobStatus{Status: wire.TargetUsersJobProcessing, TotalUsers: 1, CreatedAt: ptr(f.t0.Format(time.RFC3339))}, st,
		"rule INVT-2")
	guildtest.ExpectAPIError(t, "INVT-1: the file's users are not in yet", f.accept(t, inv.Code, f.Bob), http.StatusForbidden, wire.CodeMissingAccess)
	f.jobs.release <- struct{}{}
	f.jobs.expect(t, inv.Code, wire.TargetUsersJobCompleted)

	assert.Equal(t, csvOf(bob), f.targets(t, inv.Code), "rule TU-1")
	guildtest.ExpectAPIError(t, "INVT-1: carol is not in the file", f.accept(t, inv.Code, f.Carol), http.StatusForbidden, wire.CodeMissingAccess)
	guildtest.OK(t, f.accept(t, inv.Code, f.Bob), nil)

	// The job's run is in the background jobs' metrics.
	require.Eventually(t, func() bool {
		r := guildtest.Do(t, http.MethodGet, f.E.Server.MetricsURL(), nil, nil)
		return strings.Contains(string(r.Body), `sdkpp_job_runs_total{job="invite_target_users",node="0"} 1`+"\n")
	}, 10*time.Second, 10*time.Millisecond, "one target-users job run")
}

func ptr[T any](v T) *T { return &v }

// INVT-1, TU-1: bad input to Create Channel Invite gets a clear 4xx naming what is wrong, and
// makes no invite; so do callers without the permissions.
func TestCreateChannelInviteBadInput(t *testing.T) {
	f := newChanInviteFixture(t)
	bob := f.E.User("bob").ID.String()
	path := f.invitesPath()
	jsonCases := []struct {
		name  string
		body  string
		field string // "" with code: a non-form error
		want  string // the form error's code
		code  int
	}{
		{"malformed JSON", `{"max_age":`, "", "", wire.CodeInvalidJSON},
		{"not an object", `[1]`, "", "DICT_TYPE_CONVERT", 0},
		{"max_age a string", `{"max_age": "x"}`, "max_age", "NUMBER_TYPE_COERCE", 0},
		{"max_age a fraction", `{"max_age": 1.5}`, "max_age", "NUMBER_TYPE_COERCE", 0},
		{"max_age above 7 days", `{"max_age": 604801}`, "max_age", "NUMBER_TYPE_MAX", 0},
		{"max_age negative", `{"max_age": -1}`, "max_age", "NUMBER_TYPE_MAX", 0},
		{"max_uses above 100", `{"max_uses": 101}`, "max_uses", "NUMBER_TYPE_MAX", 0},
		{"max_uses huge", `{"max_uses": 1e999}`, "max_uses", "NUMBER_TYPE_COERCE", 0},
		{"temporary a string", `{"temporary": "yes"}`, "temporary", "BOOLEAN_TYPE_COERCE", 0},
		{"unique a number", `{"unique": 1}`, "unique", "BOOLEAN_TYPE_COERCE", 0},
		{"target_user_ids not an array", `{"target_user_ids": "` + bob + `"}`, "target_user_ids", "LIST_TYPE_CONVERT", 0},
		{"target_user_ids with a bad id", `{"target_user_ids": ["` + bob + `", "abc"]}`, "target_user_ids.1", "NUMBER_TYPE_COERCE", 0},
		{"target_user_ids with zero", `{"target_user_ids": ["0"]}`, "target_user_ids.0", "NUMBER_TYPE_COERCE", 0},
		{"target_user_ids with an id out of range", `{"target_user_ids": ["9223372036854775808"]}`, "target_user_ids.0", "NUMBER_TYPE_COERCE", 0},
		{"target_user_ids with an unknown user", `{"target_user_ids": ["` + bob + `", "12345"]}`, "target_user_ids.1", "USER_UNKNOWN", 0},
		{"role_ids with an object", `{"role_ids": [{}]}`, "role_ids.0", "NUMBER_TYPE_COERCE", 0},
		{"role_ids with an unknown role", `{"role_ids": ["12345"]}`, "role_ids.0", "ROLE_UNKNOWN", 0},
		{"role_ids with @everyone", `{"role_ids": ["` + f.g.ID.String() + `"]}`, "role_ids.0", "ROLE_UNKNOWN", 0},
		{"role_ids with another guild's role", `{"role_ids": ["` + f.Mod.ID.String() + `"]}`, "role_ids.0", "ROLE_UNKNOWN", 0},
	}
	for _, tc := range jsonCases {
		t.Run(tc.name, func(t *testing.T) {
			r := guildtest.Do(t, http.MethodPost, f.API(path), strings.NewReader(tc.body),
				http.Header{"Content-Type": {"application/json"}, "Authorization": {"Bot " + f.E.App.BotToken}})
			if tc.want == "" {
				guildtest.ExpectAPIError(t, tc.name, r, http.StatusBadRequest, tc.code)
				return
			}
			assert.Equal(t, tc.want, guildtest.FormError(t, r, tc.field), "%s", r.Body)
		})
	}
	t.Run("too many target users", func(t *testing.T) {
		ids := make([]string, wire.MaxTargetUsers+1)
		for i := range ids {
			ids[i] = strconv.Itoa(1000 + i)
		}
		r := guildtest.SendJSON(t, http.MethodPost, f.API(path), map[string]any{"target_user_ids": ids}, f.BotHeader())
		assert.Equal(t, "BASE_TYPE_MAX_LENGTH", guildtest.FormError(t, r, "target_user_ids"))
	})

	// Multipart uploads: a bad file (rule TU-1), bad framing, oversized parts and bodies.
	good := filePart(csvOf(f.E.User("bob").ID))
	multipartCases := []struct {
		name   string
		parts  []guildtest.Part
		field  string
		want   string
		status int
	}{
		{"wrong header", []guildtest.Part{filePart("id\n" + bob + "\n")}, wire.TargetUsersFilePart, "CSV_HEADER_INVALID", 400},
		{"bad id", []guildtest.Part{filePart("user_id\n" + bob + "\nnobody\n")}, wire.TargetUsersFilePart, "CSV_ROW_INVALID", 400},
		{"two columns", []guildtest.Part{filePart("user_id\n" + bob + ",x\n")}, wire.TargetUsersFilePart, "CSV_ROW_INVALID", 400},
		{"invalid UTF-8", []guildtest.Part{filePart("user_id\n\xff\xfe\n")}, wire.TargetUsersFilePart, "CSV_INVALID_UTF8", 400},
		{"empty file", []guildtest.Part{filePart("")}, wire.TargetUsersFilePart, "CSV_EMPTY", 400},
		{"header only", []guildtest.Part{filePart("user_id\n")}, wire.TargetUsersFilePart, "CSV_EMPTY", 400},
		{"file too large", []guildtest.Part{filePart("user_id\n" + strings.Repeat("1\n", wire.MaxTargetUsersFileBytes))},
			wire.TargetUsersFilePart, "BINARY_TYPE_MAX_SIZE", 400},
		{"two files", []guildtest.Part{good, good}, wire.TargetUsersFilePart, "MULTIPART_DUPLICATE", 400},
		{"payload_json not JSON", []guildtest.Part{{Name: wire.PayloadJSONPart, Body: "{"}}, "", "", 400},
		{"payload_json of a wrong type", []guildtest.Part{guildtest.PayloadPart(map[string]any{"max_uses": "x"})}, "max_uses", "NUMBER_TYPE_COERCE", 400},
		{"target_user_ids and a file", []guildtest.Part{guildtest.PayloadPart(map[string]any{"target_user_ids": []string{bob}}), good},
			"target_user_ids", "TARGET_USERS_EXCLUSIVE", 400},
		{"body too large", []guildtest.Part{{Name: "padding", Body: strings.Repeat("x", wire.MaxInviteUploadBytes)}, good}, "", "", 413},
	}
	for _, tc := range multipartCases {
		t.Run(tc.name, func(t *testing.T) {
			r := f.upload(t, http.MethodPost, path, tc.parts...)
			switch {
			case tc.status == 413:
				guildtest.ExpectAPIError(t, tc.name, r, http.StatusRequestEntityTooLarge, wire.CodeRequestTooLarge)
			case tc.want == "":
				guildtest.ExpectAPIError(t, tc.name, r, http.StatusBadRequest, wire.CodeInvalidJSON)
			default:
				assert.Equal(t, tc.want, guildtest.FormError(t, r, tc.field), "rule TU-1: %s", r.Body)
			}
		})
	}
	t.Run("broken framing", func(t *testing.T) {
		for _, body := range []struct{ ct, body string }{
			{"multipart/form-data", "--x\r\n"}, // no boundary
			{"multipart/form-data; boundary=x", "--x\r\nContent-Disposition: form-data; name=\"target_users_file\"\r\n\r\nuser_id\n1"}, // truncated
			{"multipart/form-data; boundary=x", "garbage"},
		} {
			h := f.BotHeader()
			h.Set("Content-Type", body.ct)
			r := guildtest.Do(t, http.MethodPost, f.API(path), strings.NewReader(body.body), h)
			assert.Equal(t, "MULTIPART_INVALID", guildtest.FormError(t, r, ""), "%q", body.body)
		}
		h := f.BotHeader()
		h.Set("Content-Type", "text/plain")
		guildtest.ExpectAPIError(t, "another content type", guildtest.Do(t, http.MethodPost, f.API(path), strings.NewReader("{}"), h),
			http.StatusUnsupportedMediaType, wire.CodeInvalidJSON)
	})

	// Who may create: CREATE_INSTANT_INVITE in the channel; roles only below one's highest with
	// MANAGE_ROLES (the owner any); not in a category.
	guildtest.ExpectAPIError(t, "carol lacks CREATE_INSTANT_INVITE", guildtest.SendJSON(t, http.MethodPost, f.API(path), map[string]any{}, guildtest.Bearer(f.Carol)),
		http.StatusForbidden, wire.CodeMissingPermissions)
	guildtest.ExpectAPIError(t, "bob is not a member", guildtest.SendJSON(t, http.MethodPost, f.API(path), map[string]any{}, guildtest.Bearer(f.Bob)),
		http.StatusForbidden, wire.CodeMissingAccess)
	guildtest.ExpectAPIError(t, "no token", guildtest.SendJSON(t, http.MethodPost, f.API(path), map[string]any{}, nil), http.StatusUnauthorized, 0)
	for _, role := range []wire.Role{f.inviter, f.high} {
		guildtest.ExpectAPIError(t, "INVT-1: a role not below the bot's highest: "+role.Name,
			guildtest.SendJSON(t, http.MethodPost, f.API(path), map[string]any{"role_ids": []wire.Snowflake{role.ID}}, f.BotHeader()),
			http.StatusForbidden, wire.CodeMissingPermissions)
	}
	guildtest.ExpectAPIError(t, "a category", guildtest.SendJSON(t, http.MethodPost, f.API("/channels/"+f.g.Channels[1].ID.String()+"/invites"),
		map[string]any{}, f.BotHeader()), http.StatusBadRequest, wire.CodeInvalidChannelType)
	guildtest.ExpectAPIError(t, "unknown channel", guildtest.SendJSON(t, http.MethodPost, f.API("/channels/12345/invites"), map[string]any{}, f.BotHeader()),
		http.StatusNotFound, wire.CodeUnknownChannel)

	var list []wire.Invite
	guildtest.OK(t, guildtest.Do(t, http.MethodGet, f.API(path), nil, f.BotHeader()), &list)
	assert.Empty(t, list, "no bad request made an invite")
	select {
	case ev := <-f.jobs.events:
		t.Fatalf("a bad request started a job: %+v", ev)
	default: // the jobs of a request start before it is answered: none did
	}
}

// INVT-1, ROLE-2: role_ids are given to whoever accepts (a new member, or a member already in
// the guild); the invite shows them as partial roles. The guild's bots learn of it by
// GUILD_MEMBER_ADD and GUILD_MEMBER_UPDATE.
func TestInviteRolesGivenOnAcceptance(t *testing.T) {
	f := newChanInviteFixture(t)
	guildtest.EnableIntents(t, f.E, wire.AppFlagGatewayGuildMembersLimited) // the owner turns the intent on (rule LIM-4)
	g := guildtest.Dial(t, f.E, "")
	g.Identify(f.E.App.BotToken, gwire.IntentGuildMembers)
	r := guildtest.SendJSON(t, http.MethodPost, f.API(f.invitesPath()), map[string]any{"role_ids": []wire.Snowflake{f.low.ID}}, f.BotHeader())
	var inv wire.Invite
	guildtest.OK(t, r, &inv)
	require.Len(t, inv.Roles, 1)
	assert.Equal(t, wire.InviteRole{ID: f.low.ID, Name: "low", Position: 1, Color: 0x111111,
		Colors: wire.RoleColors{PrimaryColor: 0x111111}}, inv.Roles[0], "rule ROLE-2")
	var raw struct {
		Roles []map[string]any `json:"roles"`
	}
	r.JSON(t, &raw)
	assert.ElementsMatch(t, []string{"id", "name", "position", "color", "colors", "icon", "unicode_emoji"}, keys(raw.Roles[0]), "rule ROLE-2")

	var joined wire.Invite
	guildtest.OK(t, f.accept(t, inv.Code, f.Bob), &joined)
	var m wire.Member
	guildtest.OK(t, guildtest.Do(t, http.MethodGet, f.API("/guilds/"+f.g.ID.String()+"/members/"+f.E.User("bob").ID.String()), nil, f.BotHeader()), &m)
	assert.Equal(t, []wire.Snowflake{f.low.ID}, m.Roles, "rule INVT-1: the new member has the invite's roles")
	var add wire.Member
	g.Expect(gwire.OpDispatch, gwire.EventGuildMemberAdd, &add)
	assert.Equal(t, f.E.User("bob").ID, add.User.ID)
	assert.Equal(t, []wire.Snowflake{f.low.ID}, add.Roles)

	// The owner may give any role; a member already in the guild gets it too.
	var high wire.Invite
	guildtest.OK(t, guildtest.SendJSON(t, http.MethodPost, f.API(f.invitesPath()), map[string]any{"role_ids": []wire.Snowflake{f.high.ID, f.low.ID, f.high.ID}},
		guildtest.Bearer(f.Alice)), &high)
	require.Len(t, high.Roles, 2, "each role once")
	guildtest.OK(t, f.accept(t, high.Code, f.Carol), nil)
	guildtest.OK(t, guildtest.Do(t, http.MethodGet, f.API("/guilds/"+f.g.ID.String()+"/members/"+f.E.User("carol").ID.String()), nil, f.BotHeader()), &m)
	assert.ElementsMatch(t, []wire.Snowflake{f.auditor.ID, f.high.ID, f.low.ID}, m.Roles, "rule INVT-1")
	var upd wire.Member
	g.Expect(gwire.OpDispatch, gwire.EventGuildMemberUpdate, &upd)
	assert.Equal(t, f.E.User("carol").ID, upd.User.ID)
	assert.ElementsMatch(t, m.Roles, upd.Roles)
	guildtest.OK(t, f.accept(t, high.Code, f.Carol), nil) // has the roles already: no update
	g.Sync()
}

func keys(m map[string]any) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	return out
}

// ROLE-2: Get Channel Invites lists the channel's usable invites with their metadata; their
// roles carry only id, name, position, color, colors, icon and unicode_emoji. It needs
// MANAGE_CHANNELS.
func TestGetChannelInvites(t *testing.T) {
	f := newChanInviteFixture(t)
	withRoles := f.create(t, map[string]any{"role_ids": []wire.Snowflake{f.low.ID}, "max_uses": 10, "temporary": true})
	f.E.Clock.Advance(time.Second)
	single := f.create(t, map[string]any{"max_uses": 1, "max_age": 60})
	f.E.Clock.Advance(time.Second)
	plain := f.create(t, map[string]any{})

	r := guildtest.Do(t, http.MethodGet, f.API(f.invitesPath()), nil, f.BotHeader())
	var list []wire.Invite
	guildtest.OK(t, r, &list)
	require.Len(t, list, 3)
	assert.Equal(t, []string{withRoles.Code, single.Code, plain.Code}, []string{list[0].Code, list[1].Code, list[2].Code}, "oldest first")
	assert.Equal(t, withRoles, list[0], "the metadata of Create")
	var raw []struct {
		Roles []map[string]any `json:"roles"`
	}
	r.JSON(t, &raw)
	require.Len(t, raw[0].Roles, 1)
	assert.ElementsMatch(t, []string{"id", "name", "position", "color", "colors", "icon", "unicode_emoji"}, keys(raw[0].Roles[0]),
		"rule ROLE-2: %s", r.Body)
	assert.Empty(t, raw[1].Roles)

	guildtest.OK(t, f.accept(t, single.Code, f.Bob), nil) // used up
	f.E.Clock.Advance(2 * 24 * time.Hour)                 // plain expired (24 h); withRoles too
	guildtest.OK(t, guildtest.Do(t, http.MethodGet, f.API(f.invitesPath()), nil, f.BotHeader()), &list)
	assert.Empty(t, list, "used up and expired invites are gone")

	guildtest.ExpectAPIError(t, "carol lacks MANAGE_CHANNELS", guildtest.Do(t, http.MethodGet, f.API(f.invitesPath()), nil, guildtest.Bearer(f.Carol)),
		http.StatusForbidden, wire.CodeMissingPermissions)
	guildtest.ExpectAPIError(t, "bob in the Bots guild, without MANAGE_CHANNELS", guildtest.Do(t, http.MethodGet, f.API("/channels/"+f.Channel("general").ID.String()+"/invites"), nil,
		guildtest.Bearer(f.Bob)), http.StatusForbidden, wire.CodeMissingPermissions)
	guildtest.ExpectAPIError(t, "unknown channel", guildtest.Do(t, http.MethodGet, f.API("/channels/12345/invites"), nil, f.BotHeader()),
		http.StatusNotFound, wire.CodeUnknownChannel)
}

// INVT-2, INVT-3, TU-1: Update Target Users replaces the whole list from a CSV as a job, which
// Get Target Users Job Status follows from processing to completed; an upload naming an unknown
// user fails its job and leaves the list; Get Target Users answers the list as CSV.
func TestUpdateTargetUsersJob(t *testing.T) {
	f := newChanInviteFixture(t)
	bob, carol := f.E.User("bob").ID, f.E.User("carol").ID
	inv := f.create(t, map[string]any{"target_user_ids": []wire.Snowflake{bob}})
	st, raw := f.jobStatus(t, inv.Code)
	assert.Equal(t, wire.TargetUsersJobStatus{}, st, "no upload yet: unspecified")
	for _, k := range []string{"created_at", "completed_at", "error_message"} {
		assert.Contains(t, raw, k)
		assert.Nil(t, raw[k], k)
	}

	// More users than one step of the job checks, and carol.
	users := append(makeUsers(t, f.E, 7<<60, 2500), carol)
	f.jobs.hold.Store(true)
	f.E.Clock.Advance(time.Minute)
	r := f.upload(t, http.MethodPut, f.targetsPath(inv.Code), filePart(csvOf(users...)))
	require.Equal(t, http.StatusNoContent, r.Status, "%s", r.Body)
	f.jobs.expect(t, inv.Code, wire.TargetUsersJobProcessing)
	started := f.E.Clock.Now().Format(time.RFC3339)
	st, _ = f.jobStatus(t, inv.Code)
	assert.Equal(t, wire.TargetUsersJobStatus{Status: wire.TargetUsersJobProcessing, TotalUsers: len(users), CreatedAt: &started}, st,
		"rule INVT-2: processing")
	assert.Equal(t, csvOf(bob), f.targets(t, inv.Code), "the list changes when the job completes")
	f.E.Clock.Advance(time.Second)
	f.jobs.release <- struct{}{}
	f.jobs.expect(t, inv.Code, wire.TargetUsersJobCompleted)
	st, _ = f.jobStatus(t, inv.Code)
	done := f.E.Clock.Now().Format(time.RFC3339)
	assert.Equal(t, wire.TargetUsersJobStatus{Status: wire.TargetUsersJobCompleted, TotalUsers: len(users), ProcessedUsers: len(users),
		CreatedAt: &started, CompletedAt: &done}, st, "rule INVT-2: completed")
	sorted := append([]wire.Snowflake(nil), users...)
	sort.Slice(sorted, func(i, j int) bool { return sorted[i] < sorted[j] })
	assert.Equal(t, csvOf(sorted...), f.targets(t, inv.Code), "rule INVT-3: the whole list replaced, as CSV (TU-1)")
	guildtest.ExpectAPIError(t, "bob was replaced", f.accept(t, inv.Code, f.Bob), http.StatusForbidden, wire.CodeMissingAccess)

	// An unknown user: the job fails, the list stays.
	f.jobs.hold.Store(false)
	r = f.upload(t, http.MethodPut, f.targetsPath(inv.Code), filePart(csvOf(bob, 12345, carol)))
	require.Equal(t, http.StatusNoContent, r.Status, "%s", r.Body)
	f.jobs.expect(t, inv.Code, wire.TargetUsersJobProcessing, wire.TargetUsersJobFailed)
	st, _ = f.jobStatus(t, inv.Code)
	assert.Equal(t, wire.TargetUsersJobFailed, st.Status, "rule INVT-2: failed")
	assert.Equal(t, 3, st.TotalUsers)
	assert.Nil(t, st.CompletedAt)
	require.NotNil(t, st.ErrorMessage)
	assert.Contains(t, *st.ErrorMessage, "12345")
	assert.Equal(t, csvOf(sorted...), f.targets(t, inv.Code), "a failed job leaves the list")

	// A file that is not a target-users file is refused at once (rule TU-1): no job.
	for _, bad := range []string{"id\n1\n", "user_id\nx\n", "", "user_id\n\xff\n"} {
		r = f.upload(t, http.MethodPut, f.targetsPath(inv.Code), filePart(bad))
		guildtest.FormError(t, r, wire.TargetUsersFilePart)
	}
	r = f.upload(t, http.MethodPut, f.targetsPath(inv.Code), guildtest.PayloadPart(map[string]any{}))
	assert.Equal(t, "BASE_TYPE_REQUIRED", guildtest.FormError(t, r, wire.TargetUsersFilePart), "no file part")
	guildtest.ExpectAPIError(t, "JSON is not an upload", guildtest.SendJSON(t, http.MethodPut, f.API(f.targetsPath(inv.Code)), map[string]any{}, f.BotHeader()),
		http.StatusUnsupportedMediaType, wire.CodeInvalidFormBody)

	// A text/csv body is the file itself.
	h := f.BotHeader()
	h.Set("Content-Type", "text/csv")
	r = guildtest.Do(t, http.MethodPut, f.API(f.targetsPath(inv.Code)), strings.NewReader(csvOf(bob)), h)
	require.Equal(t, http.StatusNoContent, r.Status, "%s", r.Body)
	f.jobs.expect(t, inv.Code, wire.TargetUsersJobProcessing, wire.TargetUsersJobCompleted)
	assert.Equal(t, csvOf(bob), f.targets(t, inv.Code))
	guildtest.OK(t, f.accept(t, inv.Code, f.Bob), nil)
	select {
	case ev := <-f.jobs.events:
		t.Fatalf("a refused upload started a job: %+v", ev)
	default:
	}
}

// INVT-2: a job the service stops in the middle stays processing and is taken up again when the
// service starts on the same data: the job goroutine is stopped by Close, never left running.
func TestTargetUsersJobSurvivesRestart(t *testing.T) {
	f := newChanInviteFixture(t, servertest.WithDataDir(t.TempDir()))
	bob, carol := f.E.User("bob").ID, f.E.User("carol").ID
	inv := f.create(t, map[string]any{"target_user_ids": []wire.Snowflake{bob}})
	f.jobs.hold.Store(true)
	r := f.upload(t, http.MethodPut, f.targetsPath(inv.Code), filePart(csvOf(carol)))
	require.Equal(t, http.StatusNoContent, r.Status, "%s", r.Body)
	f.jobs.expect(t, inv.Code, wire.TargetUsersJobProcessing)

	f.jobs.hold.Store(false)
	f.E = f.E.Restart(t) // Close stops the held job; the new service resumes it
	f.jobs.expect(t, inv.Code, wire.TargetUsersJobProcessing, wire.TargetUsersJobCompleted)
	st, _ := f.jobStatus(t, inv.Code)
	assert.Equal(t, wire.TargetUsersJobCompleted, st.Status, "rule INVT-2")
	assert.Equal(t, csvOf(carol), f.targets(t, inv.Code))
}

// INVT-3: Add and Remove Target User change one user, Bulk-Add and Bulk-Delete take user_ids;
// an emptied list lets nobody in; bad input gets a clear 4xx; an invite holds at most
// wire.MaxTargetUsers target users.
func TestTargetUsersAddRemoveBulk(t *testing.T) {
	f := newChanInviteFixture(t)
	alice, bob, carol := f.E.User("alice").ID, f.E.User("bob").ID, f.E.User("carol").ID
	inv := f.create(t, map[string]any{"target_user_ids": []wire.Snowflake{bob}})
	send := func(method, path string, body any) guildtest.Resp {
		t.Helper()
		if body == nil {
			return guildtest.Do(t, method, f.API(path), nil, f.BotHeader())
		}
		return guildtest.SendJSON(t, method, f.API(path), body, f.BotHeader())
	}
	noContent := func(method, path string, body any) {
		t.Helper()
		r := send(method, path, body)
		require.Equal(t, http.StatusNoContent, r.Status, "%s %s: %s", method, path, r.Body)
	}
	one := func(id wire.Snowflake) string { return f.targetsPath(inv.Code, "/", id.String()) }
	ids := func(list ...wire.Snowflake) map[string]any {
		return map[string]any{"user_ids": append([]wire.Snowflake{}, list...)}
	}

	noContent(http.MethodPut, one(carol), nil)
	noContent(http.MethodPut, one(carol), nil) // once
	assert.Equal(t, csvOf(bob, carol), f.targets(t, inv.Code), "rule INVT-3: add")
	noContent(http.MethodDelete, one(bob), nil)
	noContent(http.MethodDelete, one(bob), nil) // not there any more: still 204
	assert.Equal(t, csvOf(carol), f.targets(t, inv.Code), "rule INVT-3: remove")
	guildtest.ExpectAPIError(t, "bob was removed", f.accept(t, inv.Code, f.Bob), http.StatusForbidden, wire.CodeMissingAccess)
	noContent(http.MethodPost, f.targetsPath(inv.Code, "/bulk-add"), ids(bob, alice, bob))
	assert.Equal(t, csvOf(sortIDs(alice, bob, carol)...), f.targets(t, inv.Code), "rule INVT-3: bulk-add")
	noContent(http.MethodPost, f.targetsPath(inv.Code, "/bulk-delete"), ids(alice, carol, 12345))
	assert.Equal(t, csvOf(bob), f.targets(t, inv.Code), "rule INVT-3: bulk-delete")
	noContent(http.MethodPost, f.targetsPath(inv.Code, "/bulk-delete"), ids(bob))
	assert.Equal(t, csvOf(), f.targets(t, inv.Code), "no target users: the header alone")
	guildtest.ExpectAPIError(t, "an emptied list lets nobody in", f.accept(t, inv.Code, f.Bob), http.StatusForbidden, wire.CodeMissingAccess)

	// Bad input.
	guildtest.ExpectAPIError(t, "unknown user", send(http.MethodPut, one(12345), nil), http.StatusNotFound, wire.CodeUnknownUser)
	assert.Equal(t, "NUMBER_TYPE_COERCE", guildtest.FormError(t, send(http.MethodPut, f.targetsPath(inv.Code, "/abc"), nil), "user_id"))
	assert.Equal(t, "NUMBER_TYPE_COERCE", guildtest.FormError(t, send(http.MethodDelete, f.targetsPath(inv.Code, "/-1"), nil), "user_id"))
	for _, route := range []string{"/bulk-add", "/bulk-delete"} {
		p := f.targetsPath(inv.Code, route)
		assert.Equal(t, "BASE_TYPE_REQUIRED", guildtest.FormError(t, send(http.MethodPost, p, map[string]any{}), "user_ids"), route)
		assert.Equal(t, "BASE_TYPE_BAD_LENGTH", guildtest.FormError(t, send(http.MethodPost, p, ids()), "user_ids"), route)
		assert.Equal(t, "LIST_TYPE_CONVERT", guildtest.FormError(t, send(http.MethodPost, p, map[string]any{"user_ids": bob}), "user_ids"), route)
		assert.Equal(t, "NUMBER_TYPE_COERCE", guildtest.FormError(t, send(http.MethodPost, p, map[string]any{"user_ids": []any{bob, true}}),
			"user_ids.1"), route)
		assert.Equal(t, "DICT_TYPE_CONVERT", guildtest.FormError(t, send(http.MethodPost, p, []int{1}), ""), route)
		guildtest.ExpectAPIError(t, route+": malformed JSON", guildtest.Do(t, http.MethodPost, f.API(p), strings.NewReader("{"),
			http.Header{"Content-Type": {"application/json"}, "Authorization": {"Bot " + f.E.App.BotToken}}), http.StatusBadRequest, wire.CodeInvalidJSON)
		many := make([]wire.Snowflake, wire.MaxTargetUsers+1)
		for i := range many {
			many[i] = wire.Snowflake(1000 + i)
		}
		assert.Equal(t, "BASE_TYPE_MAX_LENGTH", guildtest.FormError(t, send(http.MethodPost, p, ids(many...)), "user_ids"), route)
	}
	assert.Equal(t, "USER_UNKNOWN", guildtest.FormError(t, send(http.MethodPost, f.targetsPath(inv.Code, "/bulk-add"), ids(bob, 12345)), "user_ids.1"))
	assert.Equal(t, csvOf(), f.targets(t, inv.Code), "refused calls change nothing")

	// The most target users an invite holds.
	users := makeUsers(t, f.E, 6<<60, wire.MaxTargetUsers)
	noContent(http.MethodPost, f.targetsPath(inv.Code, "/bulk-add"), ids(users...))
	assert.Equal(t, "TARGET_USERS_MAX", guildtest.FormError(t, send(http.MethodPut, one(bob), nil), "user_id"))
	assert.Equal(t, "TARGET_USERS_MAX", guildtest.FormError(t, send(http.MethodPost, f.targetsPath(inv.Code, "/bulk-add"), ids(bob)), "user_ids"))
	noContent(http.MethodPut, one(users[0]), nil) // there already: the list does not grow
}

func sortIDs(ids ...wire.Snowflake) []wire.Snowflake {
	sort.Slice(ids, func(i, j int) bool { return ids[i] < ids[j] })
	return ids
}

// INVT-2, INVT-3: an invite's target users are managed by its inviter and by members with
// MANAGE_GUILD; members with VIEW_AUDIT_LOG may read them; others get 50013, non-members 50001;
// an unknown, used-up or expired invite is 10006.
func TestTargetUsersPermissions(t *testing.T) {
	f := newChanInviteFixture(t)
	bob, carol := f.E.User("bob").ID, f.E.User("carol").ID
	inv := f.create(t, map[string]any{"target_user_ids": []wire.Snowflake{bob}, "max_age": 3600})
	type call struct {
		method, path string
		body         any
		write        bool
	}
	calls := []call{
		{http.MethodGet, f.targetsPath(inv.Code), nil, false},
		{http.MethodGet, f.targetsPath(inv.Code, "/job-status"), nil, false},
		{http.MethodPut, f.targetsPath(inv.Code, "/", carol.String()), nil, true},
		{http.MethodDelete, f.targetsPath(inv.Code, "/", carol.String()), nil, true},
		{http.MethodPost, f.targetsPath(inv.Code, "/bulk-add"), map[string]any{"user_ids": []wire.Snowflake{carol}}, true},
		{http.MethodPost, f.targetsPath(inv.Code, "/bulk-delete"), map[string]any{"user_ids": []wire.Snowflake{carol}}, true},
		{http.MethodPut, f.targetsPath(inv.Code), "upload", true},
	}
	send := func(c call, h http.Header) guildtest.Resp {
		t.Helper()
		switch c.body {
		case nil:
			return guildtest.Do(t, c.method, f.API(c.path), nil, h)
		case "upload":
			body, ct := guildtest.MultipartBody(t, filePart(csvOf(bob)))
			h = h.Clone()
			if h == nil {
				h = http.Header{}
			}
			h.Set("Content-Type", ct)
			return guildtest.Do(t, c.method, f.API(c.path), body, h)
		default:
			return guildtest.SendJSON(t, c.method, f.API(c.path), c.body, h)
		}
	}
	for _, c := range calls {
		what := c.method + " " + c.path
		for _, who := range []struct {
			name string
			h    http.Header
		}{{"the inviter (the bot)", f.BotHeader()}, {"the owner (MANAGE_GUILD)", guildtest.Bearer(f.Alice)}} {
			r := send(c, who.h)
			assert.Less(t, r.Status, 300, "%s by %s: %s", what, who.name, r.Body)
			if c.body == "upload" && r.Status < 300 { // the job ends before the next upload
				f.jobs.expect(t, inv.Code, wire.TargetUsersJobProcessing, wire.TargetUsersJobCompleted)
			}
		}
		r := send(c, guildtest.Bearer(f.Carol))
		if c.write {
			guildtest.ExpectAPIError(t, what+" by carol (VIEW_AUDIT_LOG only)", r, http.StatusForbidden, wire.CodeMissingPermissions)
		} else {
			assert.Equal(t, http.StatusOK, r.Status, "%s by carol (VIEW_AUDIT_LOG): %s", what, r.Body)
		}
		guildtest.ExpectAPIError(t, what+" by bob (not a member)", send(c, guildtest.Bearer(f.Bob)), http.StatusForbidden, wire.CodeMissingAccess)
		guildtest.ExpectAPIError(t, what+" without a token", send(c, nil), http.StatusUnauthorized, 0)
		unknown := c
		unknown.path = strings.Replace(c.path, inv.Code, "nope", 1)
		guildtest.ExpectAPIError(t, what+" of an unknown invite", send(unknown, f.BotHeader()), http.StatusNotFound, wire.CodeUnknownInvite)
	}
	f.E.Clock.Advance(time.Hour)
	for _, c := range calls {
		guildtest.ExpectAPIError(t, c.method+" "+c.path+" of an expired invite", send(c, f.BotHeader()), http.StatusNotFound, wire.CodeUnknownInvite)
	}
}
