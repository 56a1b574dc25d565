package server_test

import (
	"context"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"sdkpp/server/browser"
	"sdkpp/server/servertest/guildtest"
	"sdkpp/wire"
)

// inviteFixture is a lobby of alice, bob and carol linked to the text channel of a guild only
// alice is in, so that joining it by invite is visible in the members' guild lists.
type inviteFixture struct {
	*guildtest.Seeded
	guild    wire.DevGuild
	lobbyURL string
}

func newInviteFixture(t *testing.T) *inviteFixture {
	t.Helper()
	f := &inviteFixture{Seeded: guildtest.NewSeeded(t)}
	api := f.E.APIURL
	var err error
	f.guild, err = f.E.Server.CreateGuild(wire.GuildSpec{Name: "Raid <Night>", OwnerID: f.E.User("alice").ID,
		Channel: []wire.GuildChannelSpec{{Name: "lobby-chat", Type: wire.ChannelGuildText}}})
	require.NoError(t, err)
	var lobby wire.Lobby
	for _, tok := range []string{f.Alice, f.Bob, f.Carol} {
		r := guildtest.SendJSON(t, http.MethodPut, api+"/lobbies", map[string]any{"secret": "invite-page"}, guildtest.Bearer(tok))
		require.Equal(t, 200, r.Status, "join lobby: %d %s", r.Status, r.Body)
		r.JSON(t, &lobby)
	}
	f.lobbyURL = api + "/lobbies/" + lobby.ID.String()
	r := guildtest.SendJSON(t, http.MethodPut, f.lobbyURL+"/members/"+f.E.User("alice").ID.String(), map[string]any{"flags": 1}, guildtest.Bot(f.E.App.BotToken))
	require.Equal(t, 200, r.Status, "CanLinkLobby: %d %s", r.Status, r.Body)
	r = guildtest.SendJSON(t, http.MethodPatch, f.lobbyURL+"/channel-linking", map[string]any{"channel_id": f.guild.Channels[0].ID}, guildtest.Bearer(f.Alice))
	require.Equal(t, 200, r.Status, "link: %d %s", r.Status, r.Body)
	return f
}

// invite makes a lobby channel invite for the token's user (what JoinLinkedLobbyGuild asks for)
// and returns its page URL.
func (f *inviteFixture) invite(t *testing.T, tok string) string {
	t.Helper()
	r := guildtest.SendJSON(t, http.MethodPost, f.lobbyURL+"/members/@me/invites", nil, guildtest.Bearer(tok))
	var c wire.InviteCode
	r.JSON(t, &c)
	require.Equal(t, 200, r.Status, "invite: %d %s", r.Status, r.Body)
	require.NotEmpty(t, c.Code, "invite: %d %s", r.Status, r.Body)
	return f.E.URL + "/invite/" + c.Code
}

func (f *inviteFixture) inGuild(t *testing.T, tok string) bool {
	t.Helper()
	return slices.ContainsFunc(f.Guilds(t, tok), func(g wire.PartialGuild) bool { return g.ID == f.guild.ID })
}

// apiInvite is GET /invites/{code} for a page URL.
func (f *inviteFixture) apiInvite(t *testing.T, pageURL string) guildtest.Resp {
	t.Helper()
	return guildtest.Do(t, http.MethodGet, f.E.APIURL+"/invites/"+pageURL[strings.LastIndex(pageURL, "/")+1:], nil, nil)
}

func page(t *testing.T, b *browser.Browser, method, u string, form url.Values) *browser.Page {
	t.Helper()
	var p *browser.Page
	var err error
	if method == http.MethodGet {
		p, err = b.Get(context.Background(), u)
	} else {
		p, err = b.Submit(context.Background(), &browser.Page{URL: mustURL(t, u)}, &browser.Form{Action: u, Fields: url.Values{}}, form)
	}
	require.NoError(t, err)
	assert.Less(t, p.Status, 500, "%s %s: HTTP %d (never a 5xx): %s", method, u, p.Status, browser.PageMessage(p.Body))
	return p
}

func mustURL(t *testing.T, s string) *url.URL {
	t.Helper()
	u, err := url.Parse(s)
	require.NoError(t, err)
	return u
}

// Rule LOB-5: the invite page of a lobby channel invite shows the guild and the inviter and a
// Join form with the login form; the member it was made for signs in and joins through it, and
// the guild then lists them; the invite is then used up (single use).
func TestInvitePageJoinsTheGuild(t *testing.T) {
	f := newInviteFixture(t)
	require.False(t, f.inGuild(t, f.Carol), "carol is in the new guild before joining")
	link := f.invite(t, f.Carol)
	b := browser.New()
	p := page(t, b, http.MethodGet, link, nil)
	form, err := browser.ParseForm(p.Body)
	require.NoError(t, err)
	// The guild's name (HTML-escaped), the inviter's display name, a Join form with CSRF and login.
	require.Equal(t, 200, p.Status, "invite page: %d %+v\n%s", p.Status, form, p.Body)
	require.Contains(t, p.Body, "Join Raid &lt;Night&gt;", "invite page: %d %+v\n%s", p.Status, form, p.Body)
	require.Contains(t, p.Body, "Carol invited you to #lobby-chat", "invite page: %d %+v\n%s", p.Status, form, p.Body)
	require.True(t, form.Login, "invite page: %d %+v\n%s", p.Status, form, p.Body)
	require.NotEmpty(t, form.Fields.Get("csrf_token"), "invite page: %d %+v\n%s", p.Status, form, p.Body)
	require.Equal(t, mustURL(t, link).Path, form.Action, "invite page: %d %+v\n%s", p.Status, form, p.Body)
	require.Equal(t, http.MethodPost, form.Method, "invite page: %d %+v\n%s", p.Status, form, p.Body)
	carol := f.E.User("carol")
	msg, err := b.JoinInvite(context.Background(), link, browser.Choice{Username: carol.Username, Password: carol.Password})
	require.NoError(t, err, "join: %q", msg)
	require.Equal(t, "You joined Raid <Night>", msg, "join: %q", msg)
	require.True(t, f.inGuild(t, f.Carol), "the guild does not list carol after she joined by the page")
	// Rule LOB-5: single use: the page and the API know the invite no more.
	p = page(t, b, http.MethodGet, link, nil)
	assert.Equal(t, http.StatusNotFound, p.Status, "used invite page: %d %s", p.Status, browser.PageMessage(p.Body))
	assert.Contains(t, p.Body, "Invite not valid", "used invite page: %d %s", p.Status, browser.PageMessage(p.Body))
	guildtest.ExpectAPIError(t, "used invite (LOB-5 single use)", f.apiInvite(t, link), 404, wire.CodeUnknownInvite)

	// The browser keeps its session: the next invite shows "Signed in as" and joins without a login.
	second := f.invite(t, f.Carol)
	p = page(t, b, http.MethodGet, second, nil)
	form, err = browser.ParseForm(p.Body)
	require.NoError(t, err, "signed-in invite page: %v %s", err, p.Body)
	require.False(t, form.Login, "signed-in invite page: %v %s", err, p.Body)
	require.Contains(t, p.Body, "Signed in as <strong>carol</strong>", "signed-in invite page: %v %s", err, p.Body)
	msg, err = b.JoinInvite(context.Background(), second, browser.Choice{})
	require.NoError(t, err, "join with the session: %q", msg)
	require.Equal(t, "You joined Raid <Night>", msg, "join with the session: %q", msg)
}

// Rule LOB-5: a lobby channel invite is for the member it was made for: anyone else holding the
// code is refused by the API (403 50001) and by the page (403, the login form again), and the
// invite stays usable by its member.
func TestInviteBoundToItsMember(t *testing.T) {
	f := newInviteFixture(t)
	link := f.invite(t, f.Carol)
	code := link[strings.LastIndex(link, "/")+1:]

	guildtest.ExpectAPIError(t, "accept by another user", guildtest.Do(t, http.MethodPost, f.E.APIURL+"/invites/"+code, nil, guildtest.Bearer(f.Bob)), 403, wire.CodeMissingAccess)

	bob := f.E.User("bob")
	b := browser.New()
	_, err := b.JoinInvite(context.Background(), link, browser.Choice{Username: bob.Username, Password: bob.Password})
	require.ErrorContains(t, err, "HTTP 403", "join by another user through the page")
	require.Contains(t, err.Error(), "another account", "join by another user through the page")
	// bob's browser has a session now: the page does not offer to join as bob.
	p := page(t, b, http.MethodGet, link, nil)
	form, err := browser.ParseForm(p.Body)
	require.NoError(t, err, "invite page in another user's session: %v %s", err, p.Body)
	require.True(t, form.Login, "invite page in another user's session: %v %s", err, p.Body)
	require.Contains(t, p.Body, "another account", "invite page in another user's session: %v %s", err, p.Body)
	assert.False(t, f.inGuild(t, f.Bob), "bob joined with carol's invite")
	var inv wire.Invite
	r := f.apiInvite(t, link)
	r.JSON(t, &inv)
	require.Equal(t, 200, r.Status, "refused attempts used the invite, or the inviter is missing: %d %s", r.Status, r.Body)
	require.Equal(t, 0, inv.Uses, "refused attempts used the invite, or the inviter is missing: %d %s", r.Status, r.Body)
	require.NotNil(t, inv.Inviter, "refused attempts used the invite, or the inviter is missing: %d %s", r.Status, r.Body)
	require.Equal(t, f.E.User("carol").ID, inv.Inviter.ID, "refused attempts used the invite, or the inviter is missing: %d %s", r.Status, r.Body)
	// Its member still joins by the API.
	r = guildtest.Do(t, http.MethodPost, f.E.APIURL+"/invites/"+code, nil, guildtest.Bearer(f.Carol))
	require.Equal(t, 200, r.Status, "accept by its member: %d %s", r.Status, r.Body)
	require.True(t, f.inGuild(t, f.Carol), "accept by its member: %d %s", r.Status, r.Body)
	// Rule LOB-5: an invite the backend makes for a member (Bot route) is bound to that member too.
	r = guildtest.SendJSON(t, http.MethodPost, f.lobbyURL+"/members/"+bob.ID.String()+"/invites", nil, guildtest.Bot(f.E.App.BotToken))
	var c wire.InviteCode
	r.JSON(t, &c)
	require.Equal(t, 200, r.Status, "bot invite: %d %s", r.Status, r.Body)
	guildtest.ExpectAPIError(t, "accept a bot-made invite by another user", guildtest.Do(t, http.MethodPost, f.E.APIURL+"/invites/"+c.Code, nil, guildtest.Bearer(f.Carol)), 403, wire.CodeMissingAccess)
	msg := f.E.JoinInvite(t, f.E.URL+"/invite/"+c.Code, bob.Username, bob.Password)
	require.Equal(t, "You joined Raid <Night>", msg, "bob joins with his invite: %q", msg)
	require.True(t, f.inGuild(t, f.Bob), "bob joins with his invite: %q", msg)
}

// Rule LOB-5: bad input on the invite page: unknown, expired and used-up codes are 404 pages, a
// post without the CSRF token, with a wrong password or without a form body is refused, and
// nothing is joined or used; never a 5xx.
func TestInvitePageBadInput(t *testing.T) {
	f := newInviteFixture(t)
	link := f.invite(t, f.Carol)
	carol := f.E.User("carol")
	b := browser.New()
	for _, u := range []string{f.E.URL + "/invite/nope", f.E.URL + "/invite/" + strings.Repeat("x", 3000), f.E.URL + "/invite/%00%ff"} {
		p := page(t, b, http.MethodGet, u, nil)
		assert.Equal(t, http.StatusNotFound, p.Status, "GET %.60s: %d %s", u, p.Status, browser.PageMessage(p.Body))
		assert.Contains(t, p.Body, "Invite not valid", "GET %.60s: %d %s", u, p.Status, browser.PageMessage(p.Body))
	}
	login := url.Values{"username": {carol.Username}, "password": {carol.Password}, "action": {"approve"}}
	p := page(t, b, http.MethodPost, f.E.URL+"/invite/nope", login)
	assert.Equal(t, http.StatusNotFound, p.Status, "POST unknown code: %d", p.Status)

	// Missing CSRF: the browser has no CSRF cookie and the form no token.
	p = page(t, b, http.MethodPost, link, login)
	assert.Equal(t, http.StatusForbidden, p.Status, "POST without CSRF: %d %s", p.Status, browser.PageMessage(p.Body))
	assert.Contains(t, p.Body, "The form expired", "POST without CSRF: %d %s", p.Status, browser.PageMessage(p.Body))
	// A CSRF token that is not the cookie's.
	p = page(t, b, http.MethodGet, link, nil) // sets the cookie
	form, err := browser.ParseForm(p.Body)
	require.NoError(t, err)
	wrong := url.Values{"csrf_token": {strings.Repeat("A", 32)}}
	for k, v := range login {
		wrong[k] = v
	}
	p = page(t, b, http.MethodPost, link, wrong)
	assert.Equal(t, http.StatusForbidden, p.Status, "POST with a wrong CSRF token: %d", p.Status)
	bad := url.Values{"csrf_token": {form.Fields.Get("csrf_token")}, "username": {carol.Username}, "password": {"wrong"}, "action": {"approve"}}
	p = page(t, b, http.MethodPost, link, bad)
	assert.Equal(t, http.StatusUnauthorized, p.Status, "POST with a wrong password: %d %s", p.Status, browser.PageMessage(p.Body))
	assert.Contains(t, p.Body, "Wrong username or password", "POST with a wrong password: %d %s", p.Status, browser.PageMessage(p.Body))
	noLogin := url.Values{"csrf_token": {form.Fields.Get("csrf_token")}, "action": {"approve"}}
	p = page(t, b, http.MethodPost, link, noLogin)
	assert.Equal(t, http.StatusUnauthorized, p.Status, "POST without a session or login: %d", p.Status)
	r := guildtest.Do(t, http.MethodPost, link, strings.NewReader(`{"username":"carol"}`), http.Header{"Content-Type": {"application/json"}})
	assert.Equal(t, http.StatusBadRequest, r.Status, "POST with a JSON body: %d", r.Status)
	require.False(t, f.inGuild(t, f.Carol), "a refused post joined the guild")
	r = f.apiInvite(t, link)
	require.Equal(t, 200, r.Status, "a refused post used the invite: %d %s", r.Status, r.Body)

	// Rule LOB-5: valid one hour, by the service's clock; the page says so with a 404.
	f.E.Clock.Advance(time.Hour)
	p = page(t, b, http.MethodGet, link, nil)
	assert.Equal(t, http.StatusNotFound, p.Status, "expired invite page: %d %s", p.Status, browser.PageMessage(p.Body))
	assert.Contains(t, p.Body, "Invite not valid", "expired invite page: %d %s", p.Status, browser.PageMessage(p.Body))
	withToken := url.Values{"csrf_token": {form.Fields.Get("csrf_token")}}
	for k, v := range login {
		withToken[k] = v
	}
	p = page(t, b, http.MethodPost, link, withToken)
	assert.Equal(t, http.StatusNotFound, p.Status, "join with an expired invite: %d", p.Status)
	assert.False(t, f.inGuild(t, f.Carol), "join with an expired invite: %d", p.Status)
}

// The invite page's No thanks declines without a login and changes nothing: the player is not in
// the guild, and the invite stays usable by its member until it expires.
func TestInvitePageDecline(t *testing.T) {
	f := newInviteFixture(t)
	link := f.invite(t, f.Carol)
	b := browser.New()
	p := page(t, b, http.MethodGet, link, nil)
	form, err := browser.ParseForm(p.Body)
	require.NoError(t, err, "invite page without a decline button: %v\n%s", err, p.Body)
	require.Contains(t, p.Body, `value="deny" formnovalidate>No thanks</button>`, "invite page without a decline button: %v\n%s", err, p.Body)
	p = page(t, b, http.MethodPost, link, url.Values{"csrf_token": {form.Fields.Get("csrf_token")}, "action": {"deny"}})
	require.Equal(t, 200, p.Status, "decline: %d %s", p.Status, browser.PageMessage(p.Body))
	require.Contains(t, p.Body, "Invite declined", "decline: %d %s", p.Status, browser.PageMessage(p.Body))
	require.Contains(t, p.Body, "You did not join Raid &lt;Night&gt;", "decline: %d %s", p.Status, browser.PageMessage(p.Body))
	require.False(t, f.inGuild(t, f.Carol), "declining joined the guild")
	r := f.apiInvite(t, link)
	require.Equal(t, 200, r.Status, "the declined invite is gone: %d %s", r.Status, r.Body)
	// A decline without the form's CSRF token is refused like any other post.
	p = page(t, b, http.MethodPost, link, url.Values{"action": {"deny"}})
	require.Equal(t, http.StatusForbidden, p.Status, "decline without CSRF: %d", p.Status)
	carol := f.E.User("carol")
	msg, err := b.JoinInvite(context.Background(), link, browser.Choice{Username: carol.Username, Password: carol.Password})
	require.NoError(t, err, "join after declining: %q", msg)
	require.Equal(t, "You joined Raid <Night>", msg, "join after declining: %q", msg)
}
