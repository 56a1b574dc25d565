package e2e

import (
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"sdkpp/server/browser"
	"sdkpp/wire"
)

// userToken plays a player's earlier sign-in: the authorization code flow with PKCE for the
// seeded user username, approved in the service's login page. It returns the access token.
func (h *harness) userToken(username string) string {
	h.t.Helper()
	u := h.env.User(username)
	verifier := strings.Repeat("guilds-e2e-", 5)[:50]
	sum := sha256.Sum256([]byte(verifier))
	const redirect = "http://127.0.0.1:53124/authorize/callback"
	q := url.Values{"response_type": {"code"}, "client_id": {h.env.App.ID.String()}, "scope": {"openid sdk.social_layer"},
		"redirect_uri": {redirect}, "state": {"s"}, "code_challenge": {base64.RawURLEncoding.EncodeToString(sum[:])},
		"code_challenge_method": {"S256"}}
	loc := h.env.Approve(h.t, h.env.URL+"/oauth2/authorize?"+q.Encode(), u.Username, u.Password)
	l, err := url.Parse(loc)
	require.NoError(h.t, err, "redirect %q", loc)
	resp, err := http.PostForm(h.env.APIURL+"/oauth2/token", url.Values{"grant_type": {"authorization_code"},
		"code": {l.Query().Get("code")}, "client_id": {h.env.App.ID.String()}, "redirect_uri": {redirect},
		"code_verifier": {verifier}})
	require.NoError(h.t, err)
	defer resp.Body.Close()
	var tr wire.TokenResponse
	require.NoError(h.t, json.NewDecoder(resp.Body).Decode(&tr), "token for %s: HTTP %d", username, resp.StatusCode)
	require.Equal(h.t, http.StatusOK, resp.StatusCode, "token for %s: HTTP %d", username, resp.StatusCode)
	require.NotEmpty(h.t, tr.AccessToken, "token for %s: HTTP %d", username, resp.StatusCode)
	h.secret(tr.RefreshToken)
	return h.secret(tr.AccessToken)
}

// guilds runs the guilds phase with alice's and carol's tokens and a provisional player's. It
// answers the program's "canlink <lobby> <user>" line as the game's backend (PUT the member with
// flags 1, CanLinkLobby), checks the invite of its "invite <url>" line, the URL carol's
// JoinLinkedLobbyGuild answered with (rule LOB-5), and follows that URL as a browser would:
// bob is refused, carol signs in and joins.
func (h *harness) guilds() {
	h.t.Helper()
	wait, lines := h.start("guilds", "SDKPP_USER_TOKEN="+h.userToken("alice"), "SDKPP_USER_TOKEN2="+h.userToken("carol"),
		"SDKPP_BOT_ISSUED_TOKEN="+h.secret(h.botToken("guilds-"+h.prog.name)))
	deadline := time.After(60 * time.Second)
	link := ""
	for granted := false; !granted || link == ""; {
		select {
		case l := <-lines:
			var lobby, user uint64
			if n, _ := fmt.Sscanf(l, "canlink %d %d", &lobby, &user); n == 2 {
				req, _ := http.NewRequest(http.MethodPut, fmt.Sprintf("%s/lobbies/%d/members/%d", h.env.APIURL, lobby, user),
					strings.NewReader(`{"flags":1}`))
				req.Header.Set("Authorization", "Bot "+h.env.App.BotToken)
				req.Header.Set("Content-Type", "application/json")
				resp, err := http.DefaultClient.Do(req)
				if assert.NoError(h.t, err, "grant CanLinkLobby") {
					assert.Equal(h.t, http.StatusOK, resp.StatusCode, "grant CanLinkLobby")
					resp.Body.Close()
				}
				granted = true
			}
			if u, ok := strings.CutPrefix(l, "invite "); ok {
				link = u
			}
		case <-deadline:
			assert.Fail(h.t, "the guilds phase never asked for CanLinkLobby or printed its invite", "granted %v, invite %q", granted, link)
			granted, link = true, "-"
		}
	}
	wait()
	code, ok := strings.CutPrefix(link, h.env.URL+"/invite/")
	require.True(h.t, ok, "the invite URL %q is not the service's invite page", link)
	resp, err := http.Get(h.env.APIURL + "/invites/" + url.PathEscape(code))
	require.NoError(h.t, err)
	defer resp.Body.Close()
	var inv wire.Invite
	require.NoError(h.t, json.NewDecoder(resp.Body).Decode(&inv), "the program's invite %q: HTTP %d", code, resp.StatusCode)
	require.Equal(h.t, http.StatusOK, resp.StatusCode, "the program's invite %q: HTTP %d", code, resp.StatusCode)
	assert.Equal(h.t, 1, inv.MaxUses, "the invite is not a single-use, one-hour invite to the linked channel: %+v", inv)
	assert.Equal(h.t, 3600, inv.MaxAge, "the invite is not a single-use, one-hour invite to the linked channel: %+v", inv)
	assert.Equal(h.t, "Alice's Guild", inv.Guild.Name, "the invite is not a single-use, one-hour invite to the linked channel: %+v", inv)
	assert.Equal(h.t, "general", inv.Channel.Name, "the invite is not a single-use, one-hour invite to the linked channel: %+v", inv)
	assert.NotNil(h.t, inv.Lobby, "the invite is not a single-use, one-hour invite to the linked channel: %+v", inv)
	// The page: bound to carol (rule LOB-5), so bob is refused; carol signs in and joins.
	bob, carol := h.env.User("bob"), h.env.User("carol")
	ctx := context.Background()
	_, err = browser.New().JoinInvite(ctx, link, browser.Choice{Username: bob.Username, Password: bob.Password})
	assert.ErrorContains(h.t, err, "HTTP 403", "another player used carol's invite page")
	msg := h.env.JoinInvite(h.t, link, carol.Username, carol.Password)
	assert.Equal(h.t, "You joined Alice's Guild", msg, "carol's invite page: %q", msg)
	r, err := http.Get(h.env.APIURL + "/invites/" + url.PathEscape(code))
	if assert.NoError(h.t, err, "the invite after the join") {
		assert.Equal(h.t, http.StatusNotFound, r.StatusCode, "the invite is not used up after the join (single use)")
		r.Body.Close()
	}
}
