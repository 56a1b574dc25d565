package console

import (
	"context"
	"io"
	"log/slog"
	"net/http"
	"net/http/cookiejar"
	"net/http/httptest"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"sdkpp/internal/clock"
	"sdkpp/server/accounts"
	"sdkpp/server/gateway"
	"sdkpp/server/loginthrottle"
	"sdkpp/server/snowflake"
	"sdkpp/server/store"
)

const password = "a long operator password"

// fixture is a console on an in-memory store, with a player who authorized an application,
// a lobby with a moderated message, and a failed webhook delivery.
type fixture struct {
	t      *testing.T
	st     *store.DB
	clk    *clock.Fake
	srv    *httptest.Server
	player *store.User
	app    *store.Application
	lobby  *store.Lobby
	failed *store.WebhookDelivery

	mu    sync.Mutex
	ended []uint64 // users whose sessions EndSessions ended
	kicks int
}

func newFixture(t *testing.T) *fixture {
	t.Helper()
	ctx := context.Background()
	st, err := store.OpenSQLite(ctx, "")
	require.NoError(t, err)
	t.Cleanup(func() { st.Close() })
	f := &fixture{t: t, st: st, clk: clock.NewFake(time.Date(2026, 6, 1, 12, 0, 0, 0, time.UTC))}
	ids := snowflake.New(f.clk, 0)
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	for _, op := range []struct{ name, role string }{{"root", store.RoleAdmin}, {"mod", store.RoleModerator}, {"view", store.RoleViewer}} {
		_, err := AddOperator(ctx, st, ids, f.clk.Now(), op.name, op.role, password)
		require.NoError(t, err)
	}
	now := f.clk.Now()
	f.app = &store.Application{ID: ids.Next(), Name: "Game", ClientSecretHash: []byte{1}, BotTokenHash: []byte{2},
		WebhookKey: []byte{3}, WebhookURL: "https://game.example/hook", RedirectURIs: []string{"https://game.example/cb"}, CreatedAt: now}
	require.NoError(t, st.CreateApplication(ctx, f.app))
	f.player = &store.User{ID: ids.Next(), Username: "player1", CreatedAt: now}
	require.NoError(t, st.CreateUser(ctx, f.player))
	require.NoError(t, st.PutAuthorization(ctx, &store.Authorization{ID: ids.Next(), AppID: f.app.ID, UserID: f.player.ID,
		Scopes: []string{"identify"}, IntegrationType: -1, CreatedAt: now}))
	require.NoError(t, st.PutRelationship(ctx, &store.Relationship{UserID: f.player.ID, PeerID: 99, Type: store.RelFriend, CreatedAt: now}))
	f.lobby = &store.Lobby{ID: ids.Next(), AppID: f.app.ID, Metadata: map[string]string{"mode": "duel"}, LastActivityAt: now,
		ExpiresAt: now.Add(time.Hour), CreatedAt: now}
	require.NoError(t, st.CreateLobby(ctx, f.lobby))
	require.NoError(t, st.PutLobbyMember(ctx, &store.LobbyMember{LobbyID: f.lobby.ID, UserID: f.player.ID, JoinedAt: now}))
	require.NoError(t, st.InsertLobbyMessage(ctx, &store.LobbyMessage{ID: ids.Next(), LobbyID: f.lobby.ID, AppID: f.app.ID,
		AuthorID: f.player.ID, Content: "gg <b>all</b>", ModerationMetadata: map[string]string{"toxicity": "0.91"}, CreatedAt: now}))
	f.failed = &store.WebhookDelivery{ID: ids.Next(), AppID: f.app.ID, EventType: "APPLICATION_DEAUTHORIZED", Body: []byte("{}"),
		State: store.WebhookFailed, Attempts: 12, LastError: "503 Service Unavailable", CreatedAt: now}
	require.NoError(t, st.EnqueueWebhook(ctx, f.failed))

	acc := &accounts.Service{Store: st, Clock: f.clk, IDs: ids, Logger: log}
	h := &Handler{Store: st, Clock: f.clk, IDs: ids, Logger: log, Accounts: acc, Logins: &loginthrottle.Throttle{},
		PublicURL: "https://sdkpp.example", NodeID: 7,
		Sessions: func(userID uint64) []gateway.SessionInfo {
			if userID != f.player.ID {
				return nil
			}
			return []gateway.SessionInfo{{AppID: f.app.ID, Since: now.Add(-time.Minute), Connected: true}}
		},
		EndSessions: func(userID uint64) { f.mu.Lock(); f.ended = append(f.ended, userID); f.mu.Unlock() },
		Self: func() store.Node {
			return store.Node{ID: 7, Address: "https://sdkpp.example", StartedAt: now, Sessions: 3, Calls: 1, UpdatedAt: f.clk.Now()}
		},
		Kick: func() { f.mu.Lock(); f.kicks++; f.mu.Unlock() },
	}
	mux := http.NewServeMux()
	h.Register(mux)
	f.srv = httptest.NewServer(mux)
	t.Cleanup(f.srv.Close)
	return f
}

// client is a browser-like client with its own cookies, not following redirects.
type client struct {
	t    *testing.T
	f    *fixture
	http *http.Client
}

func (f *fixture) client() *client {
	jar, err := cookiejar.New(nil)
	require.NoError(f.t, err)
	return &client{t: f.t, f: f, http: &http.Client{Jar: jar,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}}
}

// get fetches path and returns the response and its body.
func (c *client) get(path string) (*http.Response, string) {
	c.t.Helper()
	res, err := c.http.Get(c.f.srv.URL + path)
	require.NoError(c.t, err)
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	require.NoError(c.t, err)
	return res, string(b)
}

var csrfField = regexp.MustCompile(`name="csrf_token" value="([^"]+)"`)

// csrf returns the CSRF token of the sign-in page (setting its cookie).
func (c *client) csrf() string {
	c.t.Helper()
	_, body := c.get("/console/signin")
	m := csrfField.FindStringSubmatch(body)
	require.NotNil(c.t, m, "sign-in page without a CSRF field: %s", body)
	return m[1]
}

// post posts form to path with the CSRF token added (unless form has one).
func (c *client) post(path string, form url.Values) (*http.Response, string) {
	c.t.Helper()
	if !form.Has("csrf_token") {
		form.Set("csrf_token", c.csrf())
	}
	res, err := c.http.PostForm(c.f.srv.URL+path, form)
	require.NoError(c.t, err)
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	require.NoError(c.t, err)
	return res, string(b)
}

func (c *client) signIn(name string) {
	c.t.Helper()
	res, body := c.post("/console/signin", url.Values{"username": {name}, "password": {password}})
	require.Equal(c.t, http.StatusSeeOther, res.StatusCode, body)
}

func id(v uint64) string { return strconv.FormatUint(v, 10) }

// Signed out, every page leads to the sign-in page; the sign-in sets a session cookie that is
// HttpOnly, SameSite=Strict and Secure (the public URL is https); pages are not framable.
func TestSignInAndPages(t *testing.T) {
	f := newFixture(t)
	c := f.client()
	res, _ := c.get("/console/players")
	require.Equal(t, http.StatusSeeOther, res.StatusCode)
	require.Equal(t, "/console/signin", res.Header.Get("Location"))

	res, body := c.get("/console/signin")
	require.Equal(t, http.StatusOK, res.StatusCode)
	assert.Equal(t, "DENY", res.Header.Get("X-Frame-Options"))
	assert.Contains(t, res.Header.Get("Content-Security-Policy"), "frame-ancestors 'none'")
	assert.Contains(t, body, `name="password"`)

	res, _ = c.post("/console/signin", url.Values{"username": {"root"}, "password": {password}})
	require.Equal(t, http.StatusSeeOther, res.StatusCode)
	var session *http.Cookie
	for _, ck := range res.Cookies() {
		if ck.Name == SessionCookie {
			session = ck
		}
	}
	require.NotNil(t, session, "a session cookie")
	assert.True(t, session.HttpOnly)
	assert.True(t, session.Secure)
	assert.Equal(t, http.SameSiteStrictMode, session.SameSite)
	assert.Equal(t, "/console", session.Path)

	for path, want := range map[string][]string{
		"/console/players?q=player1":            {"player1", "Game", "identify", "friends", "connected", ">7<"},
		"/console/players?q=" + id(f.player.ID): {"player1"},
		"/console/lobbies":                      {id(f.lobby.ID), "mode=duel"},
		"/console/lobbies/" + id(f.lobby.ID):    {"gg &lt;b&gt;all&lt;/b&gt;", "toxicity=0.91", "player1"},
		"/console/apps":                         {"Game", "https://game.example/hook"},
		"/console/apps/" + id(f.app.ID):         {"https://game.example/cb", "503 Service Unavailable", "Retry"},
		"/console/nodes":                        {"(this node)", "https://sdkpp.example"},
		"/console/audit":                        {"sign_in", "root"},
	} {
		res, body := c.get(path)
		require.Equal(t, http.StatusOK, res.StatusCode, "%s: %s", path, body)
		assert.Equal(t, "DENY", res.Header.Get("X-Frame-Options"), path)
		for _, w := range want {
			assert.Contains(t, body, w, path)
		}
	}
	res, _ = c.get("/console")
	require.Equal(t, http.StatusSeeOther, res.StatusCode)
	require.Equal(t, "/console/players", res.Header.Get("Location"), "signed in, the console opens on the players page")
	res, _ = c.get("/console/players?q=nobody")
	assert.Equal(t, http.StatusNotFound, res.StatusCode)

	res, _ = c.post("/console/signout", url.Values{})
	require.Equal(t, http.StatusSeeOther, res.StatusCode)
	res, _ = c.get("/console/players")
	assert.Equal(t, http.StatusSeeOther, res.StatusCode, "signed out")
}

// Roles: a viewer reads but may not ban (403, nothing changes); a moderator bans, unbans and
// revokes but may not retry webhooks; an admin retries. Each action is in the audit log.
func TestRolesAndAudit(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	banURL := "/console/players/" + id(f.player.ID) + "/ban"
	retryURL := "/console/apps/" + id(f.app.ID) + "/webhooks/" + id(f.failed.ID) + "/retry"

	viewer := f.client()
	viewer.signIn("view")
	_, body := viewer.get("/console/players?q=player1")
	assert.NotContains(t, body, `id="ban"`, "a viewer is not offered the ban button")
	res, body := viewer.post(banURL, url.Values{})
	require.Equal(t, http.StatusForbidden, res.StatusCode, body)
	u, err := f.st.GetUser(ctx, f.player.ID)
	require.NoError(t, err)
	require.False(t, u.Banned(f.clk.Now()), "the viewer's ban did nothing")
	res, _ = viewer.post(retryURL, url.Values{})
	require.Equal(t, http.StatusForbidden, res.StatusCode)

	mod := f.client()
	mod.signIn("mod")
	res, _ = mod.post(retryURL, url.Values{})
	require.Equal(t, http.StatusForbidden, res.StatusCode, "a moderator may not retry webhooks")
	require.NoError(t, f.st.CreateUser(ctx, &store.User{ID: 5150, Username: "robot", Bot: true}))
	res, _ = mod.post("/console/players/5150/ban", url.Values{})
	require.Equal(t, http.StatusBadRequest, res.StatusCode, "a bot is not banned")
	res, _ = mod.post("/console/players/5151/ban", url.Values{})
	require.Equal(t, http.StatusNotFound, res.StatusCode)
	res, _ = mod.post(banURL, url.Values{"duration": {"-1h"}})
	require.Equal(t, http.StatusBadRequest, res.StatusCode)
	res, body = mod.post(banURL, url.Values{"duration": {"24h"}})
	require.Equal(t, http.StatusSeeOther, res.StatusCode, body)
	u, err = f.st.GetUser(ctx, f.player.ID)
	require.NoError(t, err)
	require.True(t, u.Banned(f.clk.Now()))
	require.Equal(t, f.clk.Now().Add(24*time.Hour), u.BannedUntil)
	f.mu.Lock()
	require.Equal(t, []uint64{f.player.ID}, f.ended, "the banned player's sessions end")
	f.mu.Unlock()
	_, err = f.st.FindAuthorization(ctx, f.app.ID, f.player.ID)
	require.ErrorIs(t, err, store.ErrNotFound, "a ban revokes the player's authorizations")
	res, _ = mod.post("/console/players/"+id(f.player.ID)+"/unban", url.Values{})
	require.Equal(t, http.StatusSeeOther, res.StatusCode)
	u, err = f.st.GetUser(ctx, f.player.ID)
	require.NoError(t, err)
	require.False(t, u.Banned(f.clk.Now()))

	require.NoError(t, f.st.PutAuthorization(ctx, &store.Authorization{ID: 424242, AppID: f.app.ID, UserID: f.player.ID,
		Scopes: []string{"identify"}, CreatedAt: f.clk.Now()}))
	res, _ = mod.post("/console/players/"+id(f.player.ID)+"/revoke", url.Values{"app_id": {id(f.app.ID)}})
	require.Equal(t, http.StatusSeeOther, res.StatusCode)
	_, err = f.st.FindAuthorization(ctx, f.app.ID, f.player.ID)
	require.ErrorIs(t, err, store.ErrNotFound, "revoked")

	admin := f.client()
	admin.signIn("root")
	res, body = admin.post(retryURL, url.Values{})
	require.Equal(t, http.StatusSeeOther, res.StatusCode, body)
	d, err := f.st.GetWebhook(ctx, f.failed.ID)
	require.NoError(t, err)
	require.Equal(t, store.WebhookPending, d.State)
	require.Equal(t, 0, d.Attempts)
	require.Equal(t, f.clk.Now(), d.NextAttemptAt)
	f.mu.Lock()
	require.Equal(t, 1, f.kicks, "the dispatcher is woken")
	f.mu.Unlock()
	res, _ = admin.post(retryURL, url.Values{})
	require.Equal(t, http.StatusConflict, res.StatusCode, "a pending delivery is not retried")

	acts, err := f.st.ListOperatorActions(ctx, 100)
	require.NoError(t, err)
	var got []string
	for _, a := range acts {
		if a.Action != "sign_in" {
			got = append(got, a.Operator+" "+a.Action+" "+a.Target)
		}
	}
	require.Equal(t, []string{
		"root retry_webhook webhook delivery " + id(f.failed.ID),
		"mod revoke user " + id(f.player.ID),
		"mod unban user " + id(f.player.ID),
		"mod ban user " + id(f.player.ID),
	}, got, "the audit log, newest first: refused actions are not in it")
}

// A form without the CSRF cookie's token is refused with 403 and does nothing, signed in or not.
func TestCSRF(t *testing.T) {
	f := newFixture(t)
	c := f.client()
	res, _ := c.post("/console/signin", url.Values{"username": {"root"}, "password": {password}, "csrf_token": {"forged"}})
	require.Equal(t, http.StatusForbidden, res.StatusCode)
	c.signIn("mod")
	res, _ = c.post("/console/players/"+id(f.player.ID)+"/ban", url.Values{"csrf_token": {strings.Repeat("x", 32)}})
	require.Equal(t, http.StatusForbidden, res.StatusCode)
	u, err := f.st.GetUser(context.Background(), f.player.ID)
	require.NoError(t, err)
	require.False(t, u.Banned(f.clk.Now()))
}

// Sign-ins are throttled as the consent page's logins: after MaxLoginFailures wrong passwords
// even the right one is refused with 429 and Retry-After until the lockout passes.
func TestSignInThrottle(t *testing.T) {
	f := newFixture(t)
	c := f.client()
	for range loginthrottle.MaxLoginFailures {
		res, body := c.post("/console/signin", url.Values{"username": {"root"}, "password": {"wrong password!"}})
		require.Equal(t, http.StatusUnauthorized, res.StatusCode)
		require.Contains(t, body, "Wrong username or password.")
		require.NotContains(t, body, "wrong password!", "the password is not echoed")
	}
	res, body := c.post("/console/signin", url.Values{"username": {"root"}, "password": {password}})
	require.Equal(t, http.StatusTooManyRequests, res.StatusCode)
	require.Equal(t, "900", res.Header.Get("Retry-After"))
	require.Contains(t, body, "Too many failed sign-in attempts")
	f.clk.Advance(loginthrottle.Lockout)
	c.signIn("root")
	res, _ = c.post("/console/signin", url.Values{"username": {"nobody"}, "password": {password}})
	require.Equal(t, http.StatusUnauthorized, res.StatusCode, "an unknown operator is a wrong password")
}

// An expired session is signed out.
func TestSessionExpires(t *testing.T) {
	f := newFixture(t)
	c := f.client()
	c.signIn("view")
	res, _ := c.get("/console/nodes")
	require.Equal(t, http.StatusOK, res.StatusCode)
	f.clk.Advance(SessionTTL)
	res, _ = c.get("/console/nodes")
	require.Equal(t, http.StatusSeeOther, res.StatusCode)
}

// The cluster page lists every node of the registry, this node with its live numbers; a node
// whose heartbeat is older than NodeDownAfter is down. Nothing on it is a form a viewer may
// post, and it carries the console's protections.
func TestClusterPage(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	now := f.clk.Now()
	for _, n := range []store.Node{
		{ID: 7, Address: "https://sdkpp.example", StartedAt: now.Add(-time.Hour), Sessions: 1, UpdatedAt: now.Add(-time.Hour)},
		{ID: 3, Address: "https://n3.example", StartedAt: now.Add(-time.Hour), Sessions: 12, Calls: 2, UpdatedAt: now.Add(-29 * time.Second)},
		{ID: 9, Address: "https://n9.example", StartedAt: now.Add(-time.Hour), Sessions: 4, UpdatedAt: now.Add(-DefaultNodeDownAfter)},
	} {
		require.NoError(t, f.st.PutNode(ctx, &n))
	}
	c := f.client()
	c.signIn("view")
	res, body := c.get("/console/nodes")
	require.Equal(t, http.StatusOK, res.StatusCode)
	assert.Equal(t, "DENY", res.Header.Get("X-Frame-Options"))
	rows := regexp.MustCompile(`(?s)<tr id="node-(\d+)">(.*?)</tr>`).FindAllStringSubmatch(body, -1)
	require.Len(t, rows, 3)
	got := map[string]string{}
	var order []string
	for _, r := range rows {
		order = append(order, r[1])
		got[r[1]] = regexp.MustCompile(`<[^>]+>`).ReplaceAllString(r[2], "|")
	}
	require.Equal(t, []string{"3", "7", "9"}, order, "by node id")
	assert.Contains(t, got["7"], "7 (this node)")
	assert.Contains(t, got["7"], "|3|", "this node's live sessions, not its stale row")
	assert.Contains(t, got["7"], "|up|")
	assert.Contains(t, got["3"], "https://n3.example")
	assert.Contains(t, got["3"], "|12|")
	assert.Contains(t, got["3"], "|up|")
	assert.Contains(t, got["9"], "|down|", "its last heartbeat is DefaultNodeDownAfter old")
}

// PruneSessions deletes expired console sessions and keeps live ones.
func TestPruneSessions(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	f.client().signIn("view")
	f.clk.Advance(time.Hour)
	f.client().signIn("mod")
	n, err := PruneSessions(ctx, f.st, f.clk.Now())
	require.NoError(t, err)
	require.Zero(t, n)
	f.clk.Advance(SessionTTL - time.Hour)
	n, err = PruneSessions(ctx, f.st, f.clk.Now())
	require.NoError(t, err)
	require.Equal(t, 1, n, "the first sign-in has expired, the second not yet")
}

// The guild pages: the newest guilds, and a guild's metadata, channels with their linked
// lobby, members, recent messages of every channel (escaped, with mentions and replies) and its
// audit log; signed out they lead to the sign-in page, and they keep the console's headers.
func TestGuildPages(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	now := f.clk.Now()
	owner := &store.User{ID: 900, Username: "owner", CreatedAt: now}
	require.NoError(t, f.st.CreateUser(ctx, owner))
	g := &store.Guild{ID: 901, Name: "Clan <Red>", OwnerID: owner.ID, CreatedAt: now}
	require.NoError(t, f.st.CreateGuild(ctx, g))
	for _, c := range []store.GuildChannel{{ID: 902, GuildID: g.ID, Name: "general"}, {ID: 903, GuildID: g.ID, Name: "squad", Type: 2}} {
		c.CreatedAt = now
		require.NoError(t, f.st.CreateGuildChannel(ctx, &c))
	}
	require.NoError(t, f.st.PutLobbyLink(ctx, &store.LobbyLink{LobbyID: f.lobby.ID, ChannelID: 902, AppID: f.app.ID,
		LinkedBy: owner.ID, LinkedAt: now}))
	for _, uid := range []uint64{owner.ID, f.player.ID} {
		require.NoError(t, f.st.PutGuildMember(ctx, &store.GuildMember{GuildID: g.ID, UserID: uid, JoinedAt: now, Nick: "nick" + id(uid)}))
	}
	require.NoError(t, f.st.InsertGuildMessage(ctx, &store.GuildMessage{ID: 910, ChannelID: 902, GuildID: g.ID, AuthorID: owner.ID,
		Content: "welcome", CreatedAt: now}))
	require.NoError(t, f.st.InsertGuildMessage(ctx, &store.GuildMessage{ID: 911, ChannelID: 903, GuildID: g.ID, AuthorID: f.player.ID,
		Content: "<script>x</script> @owner", Mentions: []uint64{owner.ID}, CreatedAt: now.Add(time.Second),
		Reference: &store.MessageReference{Type: store.ReferenceReply, MessageID: 910, ChannelID: 902, GuildID: g.ID}}))
	require.NoError(t, f.st.InsertAuditEntry(ctx, &store.AuditEntry{ID: 920, GuildID: g.ID, UserID: owner.ID, TargetID: 903,
		ActionType: 192, Options: []byte(`{"status":"raid"}`), CreatedAt: now}))

	c := f.client()
	res, _ := c.get("/console/guilds/" + id(g.ID))
	require.Equal(t, http.StatusSeeOther, res.StatusCode, "signed out")
	c.signIn("view")
	res, body := c.get("/console/guilds")
	require.Equal(t, http.StatusOK, res.StatusCode)
	assert.Contains(t, body, "Clan &lt;Red&gt;")
	res, _ = c.get("/console/guilds?id=" + id(g.ID))
	require.Equal(t, http.StatusSeeOther, res.StatusCode)
	require.Equal(t, "/console/guilds/"+id(g.ID), res.Header.Get("Location"))
	res, _ = c.get("/console/guilds?id=abc")
	require.Equal(t, http.StatusBadRequest, res.StatusCode)
	res, _ = c.get("/console/guilds/12345")
	require.Equal(t, http.StatusNotFound, res.StatusCode)

	res, body = c.get("/console/guilds/" + id(g.ID))
	require.Equal(t, http.StatusOK, res.StatusCode)
	assert.Equal(t, "DENY", res.Header.Get("X-Frame-Options"))
	assert.Contains(t, res.Header.Get("Content-Security-Policy"), "frame-ancestors 'none'")
	section := func(table string) string {
		m := regexp.MustCompile(`(?s)<table id="` + table + `">(.*?)</table>`).FindStringSubmatch(body)
		require.NotNil(t, m, "table %s", table)
		return m[1]
	}
	assert.Contains(t, section("channels"), `<a href="/console/lobbies/`+id(f.lobby.ID)+`">`, "the linked lobby")
	assert.Contains(t, section("channels"), "voice")
	assert.Contains(t, section("members"), "nick"+id(f.player.ID))
	msgs := section("messages")
	assert.Less(t, strings.Index(msgs, "&lt;script&gt;"), strings.Index(msgs, "welcome"), "newest first, escaped")
	assert.NotContains(t, body, "<script>")
	assert.Contains(t, msgs, `<td class="mentions">owner</td>`)
	assert.Contains(t, msgs, "reply to <code>910</code>")
	assert.Contains(t, msgs, "#squad")
	assert.Contains(t, section("guild-audit"), "192")
	assert.Contains(t, section("guild-audit"), "raid")
}
