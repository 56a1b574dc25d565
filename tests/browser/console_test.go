package browser_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/gobwas/ws"
	"github.com/gobwas/ws/wsutil"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"sdkpp/server/console"
	"sdkpp/server/servertest"
	"sdkpp/server/snowflake"
	"sdkpp/server/store"
	gwire "sdkpp/wire/gateway"
)

const operatorPassword = "operator password for the test"

// The operator console in Chromium: a moderator signs in, finds bob (connected to the gateway
// with a raw client), bans him and sees his connection end with 4004; reads a lobby's messages
// with their moderation metadata and a guild's members and messages; sees the cluster's nodes;
// an admin retries a failed webhook delivery, which reaches the
// application's endpoint; a viewer's attempt to ban gets 403. Each console page is saved as a PNG
// in the screenshot directory (see the package comment).
func TestConsoleInChromium(t *testing.T) {
	chromium := findChromium(t)
	ctx, cancel := context.WithTimeout(t.Context(), 2*testTimeout)
	defer cancel()

	env := servertest.Start(t)
	st := env.Server.Store()
	recv := servertest.NewReceiver(t, env.App.PublicKey)
	require.NoError(t, env.Server.SetWebhookURL(uint64(env.App.ID), recv.URL))
	shots := screenshotDir(t)
	floor, err := st.MaxID(ctx)
	require.NoError(t, err)
	ids := snowflake.New(env.Clock, floor)
	for name, role := range map[string]string{"root": store.RoleAdmin, "mod": store.RoleModerator, "view": store.RoleViewer} {
		_, err := console.AddOperator(ctx, st, ids, env.Clock.Now(), name, role, operatorPassword)
		require.NoError(t, err)
	}

	// bob plays: linked to the game and connected to the gateway; he is in a lobby with a
	// moderated message; the game's endpoint once failed a delivery.
	bob := env.User("bob")
	bobID := uint64(bob.ID)
	tok := env.Token(t, "bob", "openid sdk.social_layer")
	gw := dialGateway(t, ctx, env.URL, tok.AccessToken)
	now := env.Clock.Now()
	lobby := &store.Lobby{ID: ids.Next(), AppID: uint64(env.App.ID), Metadata: map[string]string{"map": "harbor"}, IdleTimeout: time.Hour,
		LastActivityAt: now, ExpiresAt: now.Add(time.Hour), CreatedAt: now}
	require.NoError(t, st.CreateLobby(ctx, lobby))
	require.NoError(t, st.PutLobbyMember(ctx, &store.LobbyMember{LobbyID: lobby.ID, UserID: bobID, JoinedAt: now}))
	require.NoError(t, st.InsertLobbyMessage(ctx, &store.LobbyMessage{ID: ids.Next(), LobbyID: lobby.ID,
		AppID: uint64(env.App.ID), AuthorID: bobID, Content: "meet at the harbor",
		ModerationMetadata: map[string]string{"classifier": "clean", "score": "0.02"}, CreatedAt: now}))
	// bob is in a guild too, whose text channel is linked to the lobby; he wrote there,
	// mentioning carol, and a voice channel status set is in its audit log.
	carolID := uint64(env.User("carol").ID)
	guild := &store.Guild{ID: ids.Next(), Name: "Harbor Crew", OwnerID: carolID, CreatedAt: now}
	require.NoError(t, st.CreateGuild(ctx, guild))
	channel := &store.GuildChannel{ID: ids.Next(), GuildID: guild.ID, Name: "harbor-chat", CreatedAt: now}
	require.NoError(t, st.CreateGuildChannel(ctx, channel))
	require.NoError(t, st.PutLobbyLink(ctx, &store.LobbyLink{LobbyID: lobby.ID, ChannelID: channel.ID, AppID: uint64(env.App.ID),
		LinkedBy: bobID, LinkedAt: now}))
	for _, uid := range []uint64{carolID, bobID} {
		require.NoError(t, st.PutGuildMember(ctx, &store.GuildMember{GuildID: guild.ID, UserID: uid, JoinedAt: now}))
	}
	require.NoError(t, st.InsertGuildMessage(ctx, &store.GuildMessage{ID: ids.Next(), ChannelID: channel.ID, GuildID: guild.ID,
		AuthorID: bobID, Content: "carol, bring the boat", Mentions: []uint64{carolID}, CreatedAt: now}))
	require.NoError(t, st.InsertAuditEntry(ctx, &store.AuditEntry{ID: ids.Next(), GuildID: guild.ID, UserID: carolID,
		TargetID: channel.ID, ActionType: 192, Options: []byte(`{"status":"sailing"}`), CreatedAt: now}))
	failedBody := fmt.Sprintf(`{"version":1,"application_id":"%s","type":0}`, env.App.ID)
	failed := &store.WebhookDelivery{ID: ids.Next(), AppID: uint64(env.App.ID), EventType: "PING", Body: []byte(failedBody),
		State: store.WebhookFailed, Attempts: 12, LastError: "connection refused", CreatedAt: now.Add(-time.Hour)}
	require.NoError(t, st.EnqueueWebhook(ctx, failed))

	shot := func(b context.Context, name string) {
		t.Helper()
		png, err := chromedp.Run(b, chromedp.FullScreenshot(100))
		require.NoError(t, err, "screenshot %s", name)
		path := filepath.Join(shots, "console-"+name+".png")
		require.NoError(t, os.WriteFile(path, png, 0o644))
		t.Logf("console screenshot: %s", path)
	}
	text := func(b context.Context, sel string) string {
		t.Helper()
		s, err := chromedp.Run(b, chromedp.Text(chromedp.CSS(sel), chromedp.NodeVisible))
		require.NoError(t, err, "text of %s", sel)
		return s
	}
	open := func(b context.Context, path string) {
		t.Helper()
		resp, err := chromedp.Run(b, chromedp.NavigateResponse(env.URL+path))
		require.NoError(t, err, "load %s", path)
		require.Equal(t, int64(http.StatusOK), resp.Status, "%s: HTTP %d", path, resp.Status)
	}
	signIn := func(b context.Context, name string) {
		t.Helper()
		open(b, "/console")
		require.NoError(t, chromedp.Do(b,
			chromedp.SendKeys(chromedp.CSS("#username"), name, chromedp.NodeVisible),
			chromedp.SendKeys(chromedp.CSS("#password"), operatorPassword, chromedp.NodeVisible),
		))
		if name == "mod" {
			shot(b, "signin")
		}
		_, err := chromedp.RunResponse(b, chromedp.Click(chromedp.CSS("#signin"), chromedp.NodeVisible))
		require.NoError(t, err, "sign in as %s", name)
		assert.Contains(t, text(b, "#operator"), name)
	}

	// The moderator finds bob, sees his live session, and bans him: his connection ends.
	mod := startBrowser(t, ctx, chromium)
	signIn(mod, "mod")
	require.NoError(t, chromedp.Do(mod, chromedp.SendKeys(chromedp.CSS("#q"), "bob", chromedp.NodeVisible)))
	_, err = chromedp.RunResponse(mod, chromedp.Click(chromedp.CSS("#find"), chromedp.NodeVisible))
	require.NoError(t, err)
	assert.Contains(t, text(mod, "#player"), "bob")
	assert.Contains(t, text(mod, "#sessions"), "connected", "bob's live gateway session is listed")
	assert.Contains(t, text(mod, "#apps"), env.App.Name)
	shot(mod, "player")
	_, err = chromedp.RunResponse(mod, chromedp.Click(chromedp.CSS("#ban"), chromedp.NodeVisible))
	require.NoError(t, err, "ban")
	assert.Contains(t, text(mod, "#status"), "banned permanently")
	assert.Contains(t, text(mod, "#no-sessions"), "None")
	shot(mod, "player-banned")
	assert.Equal(t, gwire.CloseAuthenticationFailed, waitClose(t, gw), "bob's gateway connection ends with 4004")

	// The moderator reads the lobby's messages with their moderation metadata.
	open(mod, "/console/lobbies")
	shot(mod, "lobbies")
	open(mod, "/console/lobbies/"+strconv.FormatUint(lobby.ID, 10))
	msgs := text(mod, "#messages")
	assert.Contains(t, msgs, "meet at the harbor")
	assert.Contains(t, msgs, "classifier=clean, score=0.02")
	assert.Contains(t, text(mod, "#members"), "bob")
	shot(mod, "lobby")

	// The moderator reads the guild: its members, its channel linked to the lobby, bob's message
	// with its mention, and its audit log.
	open(mod, "/console/guilds")
	assert.Contains(t, text(mod, "#guilds"), "Harbor Crew")
	shot(mod, "guilds")
	open(mod, "/console/guilds/"+strconv.FormatUint(guild.ID, 10))
	assert.Contains(t, text(mod, "#guild-name"), "Harbor Crew")
	members := text(mod, "#members")
	assert.Contains(t, members, "bob")
	assert.Contains(t, members, "carol")
	assert.Contains(t, text(mod, "#channels"), strconv.FormatUint(lobby.ID, 10), "the channel's linked lobby")
	gmsgs := text(mod, "#messages")
	assert.Contains(t, gmsgs, "carol, bring the boat")
	assert.Contains(t, text(mod, "#messages .mentions"), "carol")
	assert.Contains(t, text(mod, "#guild-audit"), "sailing")
	shot(mod, "guild")

	open(mod, "/console/nodes")
	assert.Contains(t, text(mod, "#nodes"), "(this node)")
	assert.Contains(t, text(mod, "#nodes .state"), "up")
	shot(mod, "nodes")

	// The admin retries the failed delivery; the game's endpoint gets it.
	admin := startBrowser(t, ctx, chromium)
	signIn(admin, "root")
	open(admin, "/console/apps")
	shot(admin, "apps")
	appPath := "/console/apps/" + env.App.ID.String()
	open(admin, appPath)
	row := fmt.Sprintf("#delivery-%d", failed.ID)
	assert.Contains(t, text(admin, row), "connection refused")
	shot(admin, "app")
	_, err = chromedp.RunResponse(admin, chromedp.Click(chromedp.CSS(row+" button.retry"), chromedp.NodeVisible))
	require.NoError(t, err, "retry")
	for {
		got := recv.Next(t, 10*time.Second)
		if string(got.Body) == failedBody {
			assert.True(t, got.SignatureOK)
			break
		}
	}
	env.SettleWebhooks(t)
	open(admin, appPath)
	assert.Contains(t, text(admin, row+" .state"), "delivered")
	shot(admin, "app-retried")
	open(admin, "/console/audit")
	audit := text(admin, "#audit")
	assert.Contains(t, audit, "retry_webhook")
	assert.Contains(t, audit, "ban")
	shot(admin, "audit")

	// A viewer reads bob's page without the moderation buttons, and a ban posted anyway (with
	// a valid CSRF token) is refused: 403, and carol stays unbanned.
	viewer := startBrowser(t, ctx, chromium)
	signIn(viewer, "view")
	carol := env.User("carol")
	open(viewer, "/console/players?q=carol")
	n, err := chromedp.Run(viewer, chromedp.Evaluate[int](`document.querySelectorAll("#ban, #unban").length`))
	require.NoError(t, err)
	assert.Zero(t, n, "a viewer is offered no ban button")
	resp, err := chromedp.RunResponse(viewer, chromedp.Evaluate[chromedp.Void](`(() => {
		const f = document.createElement("form");
		f.method = "post";
		f.action = "/console/players/`+carol.ID.String()+`/ban";
		const c = document.createElement("input");
		c.name = "csrf_token";
		c.value = document.querySelector('input[name="csrf_token"]').value;
		f.appendChild(c);
		document.body.appendChild(f);
		f.submit();
		return {};
	})()`))
	require.NoError(t, err, "viewer's ban")
	assert.Equal(t, int64(http.StatusForbidden), resp.Status)
	assert.Contains(t, text(viewer, "#error"), "viewer")
	shot(viewer, "viewer-ban-403")
	u, err := st.GetUser(ctx, uint64(carol.ID))
	require.NoError(t, err)
	assert.False(t, u.Banned(env.Clock.Now()), "the viewer's ban did nothing")
}

// dialGateway connects a raw gateway client and identifies with token; it returns once READY
// has come.
func dialGateway(t *testing.T, ctx context.Context, baseURL, token string) net.Conn {
	t.Helper()
	raw, br, _, err := ws.Dial(ctx, "ws"+strings.TrimPrefix(baseURL, "http")+"/gateway?v=10&encoding=json")
	require.NoError(t, err, "dial the gateway")
	t.Cleanup(func() { raw.Close() })
	var conn net.Conn = raw
	if br != nil { // frames the server sent with its handshake answer
		conn = bufferedConn{Conn: raw, r: br}
	}
	require.NoError(t, conn.SetDeadline(time.Now().Add(testTimeout)))
	_, err = wsutil.ReadServerText(conn) // HELLO
	require.NoError(t, err)
	intents := int64(0)
	d, err := json.Marshal(gwire.Identify{Token: token, Intents: &intents})
	require.NoError(t, err)
	p, err := json.Marshal(gwire.Payload{Op: gwire.OpIdentify, D: d})
	require.NoError(t, err)
	require.NoError(t, wsutil.WriteClientText(conn, p))
	for {
		raw, err := wsutil.ReadServerText(conn)
		require.NoError(t, err, "waiting for READY")
		var got gwire.Payload
		require.NoError(t, json.Unmarshal(raw, &got))
		if got.T != nil && *got.T == "READY" {
			return conn
		}
	}
}

// bufferedConn reads what the dialer buffered before the connection.
type bufferedConn struct {
	net.Conn
	r io.Reader
}

func (c bufferedConn) Read(p []byte) (int, error) { return c.r.Read(p) }

// waitClose reads until the server closes the connection and returns the close code.
func waitClose(t *testing.T, conn net.Conn) int {
	t.Helper()
	for {
		_, _, err := wsutil.ReadServerData(conn)
		var closed wsutil.ClosedError
		if errors.As(err, &closed) {
			return int(closed.Code)
		}
		require.NoError(t, err, "waiting for the close frame")
	}
}
