package server_test

import (
	"context"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"testing"
	"time"

	"sdkpp/server/browser"
	"sdkpp/wire"
)

// inviteFixture is a lobby of alice, bob and carol linked to the text channel of a guild only
// alice is in, so that joining it by invite is visible in the members' guild lists.
type inviteFixture struct {
	*guildFixture
	guild    wire.DevGuild
	lobbyURL string
}

func newInviteFixture(t *testing.T) *inviteFixture {
	t.Helper()
	f := &inviteFixture{guildFixture: newGuildFixture(t)}
	api := f.e.APIURL
	var err error
	f.guild, err = f.e.Server.CreateGuild(wire.GuildSpec{Name: "Raid <Night>", OwnerID: f.e.User("alice").ID,
		Channel: []wire.GuildChannelSpec{{Name: "lobby-chat", Type: wire.ChannelGuildText}}})
	if err != nil {
		t.Fatal(err)
	}
	var lobby wire.Lobby
	for _, tok := range []string{f.alice, f.bob, f.carol} {
		if r := sendJSON(t, http.MethodPut, api+"/lobbies", map[string]any{"secret": "invite-page"}, bearer(tok)); r.Status != 200 {
			t.Fatalf("join lobby: %d %s", r.Status, r.Body)
		} else {
			r.json(t, &lobby)
		}
	}
	f.lobbyURL = api + "/lobbies/" + lobby.ID.String()
	if r := sendJSON(t, http.MethodPut, f.lobbyURL+"/members/"+f.e.User("alice").ID.String(), map[string]any{"flags": 1}, bot(f.e.App.BotToken)); r.Status != 200 {
		t.Fatalf("CanLinkLobby: %d %s", r.Status, r.Body)
	}
	if r := sendJSON(t, http.MethodPatch, f.lobbyURL+"/channel-linking", map[string]any{"channel_id": f.guild.Channels[0].ID}, bearer(f.alice)); r.Status != 200 {
		t.Fatalf("link: %d %s", r.Status, r.Body)
	}
	return f
}

// invite makes a lobby channel invite for the token's user (what JoinLinkedLobbyGuild asks for)
// and returns its page URL.
func (f *inviteFixture) invite(t *testing.T, tok string) string {
	t.Helper()
	r := sendJSON(t, http.MethodPost, f.lobbyURL+"/members/@me/invites", nil, bearer(tok))
	var c wire.InviteCode
	if r.json(t, &c); r.Status != 200 || c.Code == "" {
		t.Fatalf("invite: %d %s", r.Status, r.Body)
	}
	return f.e.URL + "/invite/" + c.Code
}

func (f *inviteFixture) inGuild(t *testing.T, tok string) bool {
	t.Helper()
	return slices.ContainsFunc(f.guilds(t, tok), func(g wire.PartialGuild) bool { return g.ID == f.guild.ID })
}

// apiInvite is GET /invites/{code} for a page URL.
func (f *inviteFixture) apiInvite(t *testing.T, pageURL string) resp {
	t.Helper()
	return do(t, http.MethodGet, f.e.APIURL+"/invites/"+pageURL[strings.LastIndex(pageURL, "/")+1:], nil, nil)
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
	if err != nil {
		t.Fatal(err)
	}
	if p.Status >= 500 {
		t.Errorf("%s %s: HTTP %d (never a 5xx): %s", method, u, p.Status, browser.PageMessage(p.Body))
	}
	return p
}

func mustURL(t *testing.T, s string) *url.URL {
	t.Helper()
	u, err := url.Parse(s)
	if err != nil {
		t.Fatal(err)
	}
	return u
}

// Rule LOB-5: the invite page of a lobby channel invite shows the guild and the inviter and a
// Join form with the login form; the member it was made for signs in and joins through it, and
// the guild then lists them; the invite is then used up (single use).
func TestInvitePageJoinsTheGuild(t *testing.T) {
	f := newInviteFixture(t)
	if f.inGuild(t, f.carol) {
		t.Fatal("carol is in the new guild before joining")
	}
	link := f.invite(t, f.carol)
	b := browser.New()
	p := page(t, b, http.MethodGet, link, nil)
	form, err := browser.ParseForm(p.Body)
	if err != nil {
		t.Fatal(err)
	}
	// The guild's name (HTML-escaped), the inviter's display name, a Join form with CSRF and login.
	if p.Status != 200 || !strings.Contains(p.Body, "Join Raid &lt;Night&gt;") || !strings.Contains(p.Body, "Carol invited you to #lobby-chat") ||
		!form.Login || form.Fields.Get("csrf_token") == "" || form.Action != mustURL(t, link).Path || form.Method != http.MethodPost {
		t.Fatalf("invite page: %d %+v\n%s", p.Status, form, p.Body)
	}
	carol := f.e.User("carol")
	msg, err := b.JoinInvite(context.Background(), link, browser.Choice{Username: carol.Username, Password: carol.Password})
	if err != nil || msg != "You joined Raid <Night>" {
		t.Fatalf("join: %q %v", msg, err)
	}
	if !f.inGuild(t, f.carol) {
		t.Fatal("the guild does not list carol after she joined by the page")
	}
	// Rule LOB-5: single use: the page and the API know the invite no more.
	if p := page(t, b, http.MethodGet, link, nil); p.Status != http.StatusNotFound || !strings.Contains(p.Body, "Invite not valid") {
		t.Errorf("used invite page: %d %s", p.Status, browser.PageMessage(p.Body))
	}
	expectAPIError(t, "used invite (LOB-5 single use)", f.apiInvite(t, link), 404, wire.CodeUnknownInvite)

	// The browser keeps its session: the next invite shows "Signed in as" and joins without a login.
	second := f.invite(t, f.carol)
	p = page(t, b, http.MethodGet, second, nil)
	if form, err := browser.ParseForm(p.Body); err != nil || form.Login || !strings.Contains(p.Body, "Signed in as <strong>carol</strong>") {
		t.Fatalf("signed-in invite page: %v %s", err, p.Body)
	}
	if msg, err := b.JoinInvite(context.Background(), second, browser.Choice{}); err != nil || msg != "You joined Raid <Night>" {
		t.Fatalf("join with the session: %q %v", msg, err)
	}
}

// Rule LOB-5: a lobby channel invite is for the member it was made for: anyone else holding the
// code is refused by the API (403 50001) and by the page (403, the login form again), and the
// invite stays usable by its member.
func TestInviteBoundToItsMember(t *testing.T) {
	f := newInviteFixture(t)
	link := f.invite(t, f.carol)
	code := link[strings.LastIndex(link, "/")+1:]

	expectAPIError(t, "accept by another user", do(t, http.MethodPost, f.e.APIURL+"/invites/"+code, nil, bearer(f.bob)), 403, wire.CodeMissingAccess)

	bob := f.e.User("bob")
	b := browser.New()
	_, err := b.JoinInvite(context.Background(), link, browser.Choice{Username: bob.Username, Password: bob.Password})
	if err == nil || !strings.Contains(err.Error(), "HTTP 403") || !strings.Contains(err.Error(), "another account") {
		t.Fatalf("join by another user through the page: %v", err)
	}
	// bob's browser has a session now: the page does not offer to join as bob.
	p := page(t, b, http.MethodGet, link, nil)
	if form, err := browser.ParseForm(p.Body); err != nil || !form.Login || !strings.Contains(p.Body, "another account") {
		t.Fatalf("invite page in another user's session: %v %s", err, p.Body)
	}
	if f.inGuild(t, f.bob) {
		t.Error("bob joined with carol's invite")
	}
	var inv wire.Invite
	r := f.apiInvite(t, link)
	if r.json(t, &inv); r.Status != 200 || inv.Uses != 0 || inv.Inviter == nil || inv.Inviter.ID != f.e.User("carol").ID {
		t.Fatalf("refused attempts used the invite, or the inviter is missing: %d %s", r.Status, r.Body)
	}
	// Its member still joins by the API.
	if r := do(t, http.MethodPost, f.e.APIURL+"/invites/"+code, nil, bearer(f.carol)); r.Status != 200 || !f.inGuild(t, f.carol) {
		t.Fatalf("accept by its member: %d %s", r.Status, r.Body)
	}
	// Rule LOB-5: an invite the backend makes for a member (Bot route) is bound to that member too.
	r = sendJSON(t, http.MethodPost, f.lobbyURL+"/members/"+bob.ID.String()+"/invites", nil, bot(f.e.App.BotToken))
	var c wire.InviteCode
	if r.json(t, &c); r.Status != 200 {
		t.Fatalf("bot invite: %d %s", r.Status, r.Body)
	}
	expectAPIError(t, "accept a bot-made invite by another user", do(t, http.MethodPost, f.e.APIURL+"/invites/"+c.Code, nil, bearer(f.carol)), 403, wire.CodeMissingAccess)
	if msg := f.e.JoinInvite(t, f.e.URL+"/invite/"+c.Code, bob.Username, bob.Password); msg != "You joined Raid <Night>" || !f.inGuild(t, f.bob) {
		t.Fatalf("bob joins with his invite: %q", msg)
	}
}

// Rule LOB-5: bad input on the invite page: unknown, expired and used-up codes are 404 pages, a
// post without the CSRF token, with a wrong password or without a form body is refused, and
// nothing is joined or used; never a 5xx.
func TestInvitePageBadInput(t *testing.T) {
	f := newInviteFixture(t)
	link := f.invite(t, f.carol)
	carol := f.e.User("carol")
	b := browser.New()
	for _, u := range []string{f.e.URL + "/invite/nope", f.e.URL + "/invite/" + strings.Repeat("x", 3000), f.e.URL + "/invite/%00%ff"} {
		if p := page(t, b, http.MethodGet, u, nil); p.Status != http.StatusNotFound || !strings.Contains(p.Body, "Invite not valid") {
			t.Errorf("GET %.60s: %d %s", u, p.Status, browser.PageMessage(p.Body))
		}
	}
	login := url.Values{"username": {carol.Username}, "password": {carol.Password}, "action": {"approve"}}
	if p := page(t, b, http.MethodPost, f.e.URL+"/invite/nope", login); p.Status != http.StatusNotFound {
		t.Errorf("POST unknown code: %d", p.Status)
	}

	// Missing CSRF: the browser has no CSRF cookie and the form no token.
	if p := page(t, b, http.MethodPost, link, login); p.Status != http.StatusForbidden || !strings.Contains(p.Body, "The form expired") {
		t.Errorf("POST without CSRF: %d %s", p.Status, browser.PageMessage(p.Body))
	}
	// A CSRF token that is not the cookie's.
	p := page(t, b, http.MethodGet, link, nil) // sets the cookie
	form, err := browser.ParseForm(p.Body)
	if err != nil {
		t.Fatal(err)
	}
	wrong := url.Values{"csrf_token": {strings.Repeat("A", 32)}}
	for k, v := range login {
		wrong[k] = v
	}
	if p := page(t, b, http.MethodPost, link, wrong); p.Status != http.StatusForbidden {
		t.Errorf("POST with a wrong CSRF token: %d", p.Status)
	}
	bad := url.Values{"csrf_token": {form.Fields.Get("csrf_token")}, "username": {carol.Username}, "password": {"wrong"}, "action": {"approve"}}
	if p := page(t, b, http.MethodPost, link, bad); p.Status != http.StatusUnauthorized || !strings.Contains(p.Body, "Wrong username or password") {
		t.Errorf("POST with a wrong password: %d %s", p.Status, browser.PageMessage(p.Body))
	}
	noLogin := url.Values{"csrf_token": {form.Fields.Get("csrf_token")}, "action": {"approve"}}
	if p := page(t, b, http.MethodPost, link, noLogin); p.Status != http.StatusUnauthorized {
		t.Errorf("POST without a session or login: %d", p.Status)
	}
	if r := do(t, http.MethodPost, link, strings.NewReader(`{"username":"carol"}`), http.Header{"Content-Type": {"application/json"}}); r.Status != http.StatusBadRequest {
		t.Errorf("POST with a JSON body: %d", r.Status)
	}
	if f.inGuild(t, f.carol) {
		t.Fatal("a refused post joined the guild")
	}
	if r := f.apiInvite(t, link); r.Status != 200 {
		t.Fatalf("a refused post used the invite: %d %s", r.Status, r.Body)
	}

	// Rule LOB-5: valid one hour, by the service's clock; the page says so with a 404.
	f.e.Clock.Advance(time.Hour)
	if p := page(t, b, http.MethodGet, link, nil); p.Status != http.StatusNotFound || !strings.Contains(p.Body, "Invite not valid") {
		t.Errorf("expired invite page: %d %s", p.Status, browser.PageMessage(p.Body))
	}
	withToken := url.Values{"csrf_token": {form.Fields.Get("csrf_token")}}
	for k, v := range login {
		withToken[k] = v
	}
	if p := page(t, b, http.MethodPost, link, withToken); p.Status != http.StatusNotFound || f.inGuild(t, f.carol) {
		t.Errorf("join with an expired invite: %d", p.Status)
	}
}

// The invite page's No thanks declines without a login and changes nothing: the player is not in
// the guild, and the invite stays usable by its member until it expires.
func TestInvitePageDecline(t *testing.T) {
	f := newInviteFixture(t)
	link := f.invite(t, f.carol)
	b := browser.New()
	p := page(t, b, http.MethodGet, link, nil)
	form, err := browser.ParseForm(p.Body)
	if err != nil || !strings.Contains(p.Body, `value="deny" formnovalidate>No thanks</button>`) {
		t.Fatalf("invite page without a decline button: %v\n%s", err, p.Body)
	}
	p = page(t, b, http.MethodPost, link, url.Values{"csrf_token": {form.Fields.Get("csrf_token")}, "action": {"deny"}})
	if p.Status != 200 || !strings.Contains(p.Body, "Invite declined") || !strings.Contains(p.Body, "You did not join Raid &lt;Night&gt;") {
		t.Fatalf("decline: %d %s", p.Status, browser.PageMessage(p.Body))
	}
	if f.inGuild(t, f.carol) {
		t.Fatal("declining joined the guild")
	}
	if r := f.apiInvite(t, link); r.Status != 200 {
		t.Fatalf("the declined invite is gone: %d %s", r.Status, r.Body)
	}
	// A decline without the form's CSRF token is refused like any other post.
	if p := page(t, b, http.MethodPost, link, url.Values{"action": {"deny"}}); p.Status != http.StatusForbidden {
		t.Fatalf("decline without CSRF: %d", p.Status)
	}
	carol := f.e.User("carol")
	if msg, err := b.JoinInvite(context.Background(), link, browser.Choice{Username: carol.Username, Password: carol.Password}); err != nil || msg != "You joined Raid <Night>" {
		t.Fatalf("join after declining: %q %v", msg, err)
	}
}
