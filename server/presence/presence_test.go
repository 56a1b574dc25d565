package presence_test

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"slices"
	"strconv"
	"sync"
	"testing"

	"sdkpp/server/servertest/apicheck"
	"sdkpp/server/servertest/world"
	gwire "sdkpp/wire/gateway"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"sdkpp/internal/clock"
	"sdkpp/server/devseed"
	"sdkpp/server/presence"
	"sdkpp/server/relationships"
	"sdkpp/server/store"
	"sdkpp/wire"
)

// hub records dispatches and says who is online.
type hub struct {
	mu     sync.Mutex
	online map[uint64]map[uint64]bool // user -> app -> connected
	sent   []sent
}

type sent struct {
	user  uint64
	app   uint64 // the application whose sessions it was for; 0 for every session
	event string
	data  []byte
}

func (h *hub) Dispatch(userID uint64, event string, data any) { h.DispatchApp(0, userID, event, data) }

func (h *hub) DispatchApp(appID, userID uint64, event string, data any) {
	raw, _ := json.Marshal(data)
	h.mu.Lock()
	h.sent = append(h.sent, sent{userID, appID, event, raw})
	h.mu.Unlock()
}

func (h *hub) DispatchAppMany(appID uint64, userIDs []uint64, event string, data any) {
	for _, id := range slices.Compact(slices.Sorted(slices.Values(userIDs))) {
		h.DispatchApp(appID, id, event, data)
	}
}

func (h *hub) Online(userID uint64) bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	for _, on := range h.online[userID] {
		if on {
			return true
		}
	}
	return false
}

func (h *hub) OnlineApp(appID, userID uint64) bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.online[userID][appID]
}

func (h *hub) connect(userID, appID uint64, on bool) {
	h.mu.Lock()
	if h.online == nil {
		h.online = map[uint64]map[uint64]bool{}
	}
	if h.online[userID] == nil {
		h.online[userID] = map[uint64]bool{}
	}
	h.online[userID][appID] = on
	h.mu.Unlock()
}

// last returns the last presence userID received about about, or nil.
func (h *hub) last(userID, about uint64) *wire.PresenceUpdate {
	h.mu.Lock()
	defer h.mu.Unlock()
	for i := len(h.sent) - 1; i >= 0; i-- {
		s := h.sent[i]
		if s.user != userID || s.event != gwire.EventPresenceUpdate {
			continue
		}
		var p wire.PresenceUpdate
		if json.Unmarshal(s.data, &p) == nil && uint64(p.User.ID) == about {
			return &p
		}
	}
	return nil
}

func (h *hub) events(userID uint64, event string) []wire.ActivityInvite {
	h.mu.Lock()
	defer h.mu.Unlock()
	var out []wire.ActivityInvite
	for _, s := range h.sent {
		if s.user == userID && s.event == event {
			var inv wire.ActivityInvite
			_ = json.Unmarshal(s.data, &inv)
			out = append(out, inv)
		}
	}
	return out
}

type env struct {
	t          *testing.T
	w          *world.World
	st         *store.DB
	clock      *clock.Fake
	hub        *hub
	svc        *presence.Service
	rel        *relationships.Service
	api        apicheck.Client
	app, child wire.DevApplication
}

type player struct {
	id   uint64
	auth string
}

func newEnv(t *testing.T) *env {
	w := world.New(t)
	e := &env{t: t, w: w, st: w.Store, clock: w.Clock, hub: &hub{}}
	e.app = w.App(devseed.AppSpec{Name: "Harbor"})
	e.child = w.App(devseed.AppSpec{Name: "Harbor Arena", ParentID: uint64(e.app.ID)})
	e.svc = &presence.Service{Store: w.Store, Clock: w.Clock, IDs: w.IDs, Logger: w.Log, Hub: e.hub}
	e.rel = &relationships.Service{Store: w.Store, Clock: w.Clock, Logger: w.Log}
	mux := http.NewServeMux()
	e.svc.Register(mux)
	e.rel.Register(mux)
	e.api = apicheck.Client{T: t, Handler: mux}
	return e
}

func (e *env) player(name string, app wire.DevApplication) player {
	e.t.Helper()
	id := e.w.User(name)
	return player{id: id, auth: e.token(id, app)}
}

func (e *env) token(userID uint64, app wire.DevApplication) string {
	e.t.Helper()
	return e.w.Token(userID, app, world.SocialScopes())
}

// do sends a request and requires a status below 500.
func (e *env) do(method, path, auth string, body any) (int, []byte) {
	e.t.Helper()
	r := e.api.Do(method, path, auth, body)
	return r.Status, r.Body
}

func (e *env) must(status int, method, path, auth string, body any) []byte {
	e.t.Helper()
	code, raw := e.do(method, path, auth, body)
	require.Equal(e.t, status, code, "%s %s: HTTP %d, want %d: %s", method, path, code, status, raw)
	return raw
}

// fails requires an error with status and code; for 50035, field must be named in errors.
func (e *env) fails(status, code int, field, method, path, auth string, body any) {
	e.t.Helper()
	got, raw := e.do(method, path, auth, body)
	var ae wire.APIError
	require.Equal(e.t, status, got, "%s %s: HTTP %d %s, want %d code %d", method, path, got, raw, status, code)
	require.NoError(e.t, json.Unmarshal(raw, &ae), "%s %s: HTTP %d %s, want %d code %d", method, path, got, raw, status, code)
	require.Equal(e.t, code, ae.Code, "%s %s: HTTP %d %s, want %d code %d", method, path, got, raw, status, code)
	if field != "" {
		require.Contains(e.t, string(raw), `"`+field+`"`, "%s %s: errors do not name %q", method, path, field)
	}
}

func id(p player) string { return strconv.FormatUint(p.id, 10) }

// friends makes a and b friends: platform ones, or game ones of a's application.
func (e *env) friends(a, b player, game bool) {
	path := "/users/@me/relationships/"
	if game {
		path = "/users/@me/game-relationships/"
	}
	e.must(204, "PUT", path+id(b), a.auth, map[string]any{})
	e.must(204, "PUT", path+id(a), b.auth, map[string]any{})
}

func (e *env) setPresence(p player, app wire.DevApplication, presence string) {
	e.t.Helper()
	e.hub.connect(p.id, uint64(app.ID), true)
	e.svc.OnSession(p.id, uint64(app.ID))
	e.svc.OnPresence(p.id, uint64(app.ID), json.RawMessage(presence))
}

func str(s *string) string {
	if s == nil {
		return "<nil>"
	}
	return *s
}

// rule GW-5: the custom status is visible by privacy setting, friendship and guild size.
func TestCustomStatusVisible(t *testing.T) {
	for _, c := range []struct {
		privacy  int
		friend   bool
		guild    int
		visible  bool
		scenario string
	}{
		{store.PrivacyEveryone, false, 5000, true, "everyone"},
		{store.PrivacyFriendsOnly, true, 0, true, "friends only, a friend"},
		{store.PrivacyFriendsOnly, false, 10, false, "friends only, not a friend"},
		{store.PrivacyFriendsAndSmallServers, false, 200, true, "small server of 200"},
		{store.PrivacyFriendsAndSmallServers, false, 201, false, "guild of more than 200"},
		{store.PrivacyFriendsAndSmallServers, true, 5000, true, "a friend in a large guild"},
	} {
		// rule GW-5
		assert.Equal(t, c.visible, presence.CustomStatusVisible(c.privacy, c.friend, c.guild), "%s: visible", c.scenario)
	}
}

// rules GW-5, ACT-1: a Presence Update leaves the custom status (type 4) out for a game friend
// when the user's privacy is Friends Only; a platform friend and the user's own sessions see it.
func TestPresenceUpdateCustomStatusPrivacy(t *testing.T) {
	e := newEnv(t)
	alice, bob, carol := e.player("alice", e.app), e.player("bob", e.app), e.player("carol", e.app)
	e.friends(alice, bob, true)    // game friends only
	e.friends(alice, carol, false) // platform friends
	e.must(200, "PATCH", "/users/@me/settings", alice.auth, map[string]any{"custom_status_privacy": 1})
	e.setPresence(alice, e.app, `{"status":"online","activities":[
		{"type":4,"name":"","state":"brb, walking the dog"},
		{"type":0,"details":"Capture the flag"}]}`)

	self, game, platform := e.hub.last(alice.id, alice.id), e.hub.last(bob.id, alice.id), e.hub.last(carol.id, alice.id)
	require.NotNil(t, self, "presences: self %v, game friend %v, platform friend %v", self, game, platform)
	require.NotNil(t, game, "presences: self %v, game friend %v, platform friend %v", self, game, platform)
	require.NotNil(t, platform, "presences: self %v, game friend %v, platform friend %v", self, game, platform)
	count := func(p *wire.PresenceUpdate, typ int) int {
		n := 0
		for _, a := range p.Activities {
			if a.Type == typ {
				n++
			}
		}
		return n
	}
	// rule GW-5
	require.Equal(t, 0, count(game, wire.ActivityCustomStatus), "a game friend sees %+v", game.Activities)
	require.Equal(t, 1, count(game, wire.ActivityPlaying), "a game friend sees %+v", game.Activities)
	require.Equal(t, 1, count(platform, wire.ActivityCustomStatus), "platform friend %+v, self %+v", platform.Activities, self.Activities)
	require.Equal(t, 1, count(self, wire.ActivityCustomStatus), "platform friend %+v, self %+v", platform.Activities, self.Activities)
	for _, a := range platform.Activities {
		// rule ACT-1
		if a.Type == wire.ActivityCustomStatus {
			require.Nil(t, a.ApplicationID, "custom status %+v", a)
			require.Equal(t, "brb, walking the dog", str(a.State), "custom status %+v", a)
		}
	}
	// With privacy Everyone the game friend sees it too.
	e.must(200, "PATCH", "/users/@me/settings", alice.auth, map[string]any{"custom_status_privacy": 0})
	e.svc.OnPresence(alice.id, uint64(e.app.ID), json.RawMessage(`{"status":"online","activities":[{"type":4,"state":"back"}]}`))
	require.Equal(t, 1, count(e.hub.last(bob.id, alice.id), wire.ActivityCustomStatus), "privacy Everyone still hides the custom status")
	// Bad settings.
	e.fails(400, wire.CodeInvalidFormBody, "custom_status_privacy", "PATCH", "/users/@me/settings", alice.auth, map[string]any{"custom_status_privacy": 7})
	e.fails(400, wire.CodeInvalidJSON, "", "PATCH", "/users/@me/settings", alice.auth, "{")
}

// rules ACT-2, ACT-4: the URLs reach friends as sent, a name overrides the application's, no
// name shows the application's, secrets never leave; invalid activities are dropped whole.
func TestRichPresenceFields(t *testing.T) {
	e := newEnv(t)
	alice, bob := e.player("alice", e.app), e.player("bob", e.app)
	e.friends(alice, bob, false)
	e.setPresence(alice, e.app, `{"activities":[{"type":0,"name":"Harbor: Night Raid","state":"In a match",
		"state_url":"https://h.example/s","details":"Sniping","details_url":"https://h.example/d",
		"assets":{"large_image":"map","large_url":"https://h.example/l","small_image":"cls","small_url":"https://h.example/sm"},
		"party":{"id":"p1","size":[1,4]},"secrets":{"join":"sekrit"},
		"buttons":[{"label":"Watch","url":"https://h.example/w"}]}]}`)
	p := e.hub.last(bob.id, alice.id)
	require.NotNil(t, p, "presence %+v", p)
	require.Len(t, p.Activities, 1, "presence %+v", p)
	a := p.Activities[0]
	// ACT-4, ACT-2
	require.Equal(t, "Harbor: Night Raid", a.Name, "activity %+v", a)
	require.Equal(t, "https://h.example/s", str(a.StateURL), "activity %+v", a)
	require.Equal(t, "https://h.example/d", str(a.DetailsURL), "activity %+v", a)
	require.Equal(t, "https://h.example/l", str(a.Assets.LargeURL), "activity %+v", a)
	require.Equal(t, "https://h.example/sm", str(a.Assets.SmallURL), "activity %+v", a)
	require.NotNil(t, a.ApplicationID, "activity %+v", a)
	require.Equal(t, uint64(e.app.ID), uint64(*a.ApplicationID), "activity %+v", a)
	require.Len(t, a.Buttons, 1, "activity %+v", a)
	require.Nil(t, a.Secrets, "activity %+v", a)
	e.svc.OnPresence(alice.id, uint64(e.app.ID), json.RawMessage(`{"activities":[{"type":0,"details":"Idle"}]}`))
	// rule ACT-4
	got := e.hub.last(bob.id, alice.id).Activities[0].Name
	require.Equal(t, "Harbor", got, "name %q, want the application's", got)
	for field, bad := range map[string]string{
		"activities.0.state_url":        `{"type":0,"state_url":"ftp://x"}`,
		"activities.0.assets.large_url": `{"type":0,"assets":{"large_url":""}}`,
		"activities.0.buttons":          `{"type":0,"buttons":[{"label":"a","url":"https://a.b"},{"label":"b","url":"https://a.b"},{"label":"c","url":"https://a.b"}]}`,
		"activities.0.party.size":       `{"type":0,"party":{"id":"pp","size":[5,4]}}`,
		"activities.0.type":             `{"type":9}`,
		"activities.0.details":          `{"type":0,"details":"x"}`,
	} {
		var pr wire.Presence
		require.NoError(t, json.Unmarshal([]byte(`{"activities":[`+bad+`]}`), &pr))
		err := e.svc.Set(context.Background(), alice.id, uint64(e.app.ID), &pr)
		raw, _ := json.Marshal(err)
		ae, ok := err.(*wire.APIError)
		if assert.True(t, ok, "%s: %v", field, err) && assert.Equal(t, wire.CodeInvalidFormBody, ae.Code, "%s: %v", field, err) {
			assert.Contains(t, string(raw), `"`+lastPart(field)+`"`, "%s: error does not name it", field)
		}
	}
	require.NotNil(t, e.hub.last(bob.id, alice.id).Activities[0].Details, "an invalid presence replaced the valid one")
	// The last session of the game ends: its activities go; the last session at all: offline.
	e.hub.connect(alice.id, uint64(e.app.ID), false)
	e.svc.OnSession(alice.id, uint64(e.app.ID))
	p = e.hub.last(bob.id, alice.id)
	require.Equal(t, "offline", p.Status, "after the last session: %+v", p)
	require.Empty(t, p.Activities, "after the last session: %+v", p)
}

func lastPart(path string) string {
	for i := len(path) - 1; i >= 0; i-- {
		if path[i] == '.' {
			return path[i+1:]
		}
	}
	return path
}

// rules ACT-3, INV-1: an invite names its application (a sibling's too) and carries the
// activity's invite cover image, else the application's rich-presence cover image.
func TestInviteCoverAndSiblingApplication(t *testing.T) {
	e := newEnv(t)
	host, guest := e.player("host", e.child), e.player("guest", e.app)
	e.friends(host, guest, false)
	e.setPresence(host, e.child, `{"activities":[{"type":0,"party":{"id":"p1","size":[1,4]},"secrets":{"join":"s1"}}]}`)

	// No cover anywhere: empty.
	raw := e.must(200, "POST", "/users/"+id(guest)+"/activity-invites", host.auth, map[string]any{"type": 1, "content": "join"})
	var inv wire.ActivityInvite
	_ = json.Unmarshal(raw, &inv)
	// rule INV-1
	require.Empty(t, inv.CoverImage, "invite %s", raw)
	require.Equal(t, uint64(e.child.ID), uint64(inv.ApplicationID), "invite %s", raw)
	require.NotNil(t, inv.ParentApplicationID, "invite %s", raw)
	require.Equal(t, uint64(e.app.ID), uint64(*inv.ParentApplicationID), "invite %s", raw)
	got := e.hub.events(guest.id, gwire.EventActivityInviteCreate)
	require.Len(t, got, 1, "the guest (in the sibling application) got %+v", got)
	require.Equal(t, uint64(e.child.ID), uint64(got[0].ApplicationID), "the guest (in the sibling application) got %+v", got)
	// The application's cover is the fallback (rule ACT-3).
	e.must(200, "PUT", "/applications/"+e.child.ID.String()+"/rich-presence", "Bot "+e.child.BotToken, map[string]any{"cover_image": "https://cdn.example/app-cover.png"})
	raw = e.must(200, "POST", "/users/"+id(guest)+"/activity-invites", host.auth, map[string]any{"type": 1})
	_ = json.Unmarshal(raw, &inv)
	require.Equal(t, "https://cdn.example/app-cover.png", inv.CoverImage, "cover %q, want the application's", inv.CoverImage)
	// The activity's own cover wins, and may differ per invite (rule ACT-3).
	e.svc.OnPresence(host.id, uint64(e.child.ID), json.RawMessage(`{"activities":[{"type":0,"party":{"id":"p1","size":[1,4]},
		"secrets":{"join":"s1"},"assets":{"invite_cover_image":"night_cover"}}]}`))
	raw = e.must(200, "POST", "/users/"+id(guest)+"/activity-invites", host.auth, map[string]any{"type": 1})
	_ = json.Unmarshal(raw, &inv)
	require.Equal(t, "night_cover", inv.CoverImage, "cover %q, want the activity's", inv.CoverImage)

	// Accepting: the secret, and the acceptance goes to every session of the guest (rule EVT-1).
	raw = e.must(200, "POST", "/activity-invites/"+inv.ID.String()+"/accept", guest.auth, map[string]any{})
	var acc wire.ActivityInviteAccepted
	_ = json.Unmarshal(raw, &acc)
	require.Equal(t, "s1", acc.JoinSecret, "accept %s", raw)
	require.True(t, acc.Invite.Accepted, "accept %s", raw)
	got = e.hub.events(guest.id, gwire.EventActivityInviteUpdate)
	require.Len(t, got, 1, "acceptance events %+v", got)
	require.True(t, got[0].Accepted, "acceptance events %+v", got)

	// Bad input: never a 5xx, the platform's error bodies.
	stranger := e.player("stranger", e.app)
	e.fails(403, wire.CodeCannotSendToUser, "", "POST", "/users/"+id(stranger)+"/activity-invites", host.auth, map[string]any{"type": 1})
	e.fails(400, wire.CodeInvalidFormBody, "type", "POST", "/users/"+id(guest)+"/activity-invites", host.auth, map[string]any{"type": 3})
	e.fails(400, wire.CodeInvalidFormBody, "content", "POST", "/users/"+id(guest)+"/activity-invites", host.auth,
		map[string]any{"type": 1, "content": string(bytes.Repeat([]byte("x"), 1025))})
	e.fails(400, wire.CodeInvalidFormBody, "user_id", "POST", "/users/"+id(host)+"/activity-invites", host.auth, map[string]any{"type": 1})
	e.fails(400, wire.CodeInvalidFormBody, "user_id", "POST", "/users/abc/activity-invites", host.auth, map[string]any{"type": 1})
	e.fails(404, wire.CodeUnknownUser, "", "POST", "/users/12345/activity-invites", host.auth, map[string]any{"type": 1})
	e.fails(400, wire.CodeInvalidJSON, "", "POST", "/users/"+id(guest)+"/activity-invites", host.auth, "[1,")
	e.fails(400, wire.CodeInvalidFormBody, "type", "POST", "/users/"+id(guest)+"/activity-invites", host.auth, map[string]any{"type": "join"})
	e.fails(400, wire.CodeInvalidFormBody, "activity", "POST", "/users/"+id(host)+"/activity-invites", guest.auth, map[string]any{"type": 1})
	e.fails(404, wire.CodeUnknownInvite, "", "POST", "/activity-invites/99/accept", guest.auth, nil)
	e.fails(404, wire.CodeUnknownInvite, "", "POST", "/activity-invites/"+inv.ID.String()+"/accept", stranger.auth, nil)
	e.fails(401, 0, "", "POST", "/activity-invites/"+inv.ID.String()+"/accept", "", nil)
	e.fails(403, wire.CodeMissingAccess, "", "PUT", "/applications/"+e.app.ID.String()+"/rich-presence", "Bot "+e.child.BotToken, map[string]any{"cover_image": "x"})
	e.fails(400, wire.CodeInvalidFormBody, "cover_image", "PUT", "/applications/"+e.child.ID.String()+"/rich-presence", "Bot "+e.child.BotToken, map[string]any{})

	// Invites expire after six hours.
	e.clock.Advance(presence.InviteLifetime)
	e.fails(400, wire.CodeUnknownInvite, "", "POST", "/activity-invites/"+inv.ID.String()+"/accept", guest.auth, nil)
}
