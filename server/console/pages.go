package console

import (
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"sdkpp/server/gateway"
	"sdkpp/server/store"
)

// listLimit bounds the rows of every list a page shows.
const listLimit = 100

// ---- players

type linkedApp struct {
	Auth store.Authorization
	Name string
}

type liveSession struct {
	gateway.SessionInfo
	Node    int
	AppName string
}

type relCount struct {
	Type  string
	Count int
}

type playerData struct {
	Query         string
	User          *store.User
	Banned        bool
	Apps          []linkedApp
	Sessions      []liveSession
	Relationships []relCount
	CanModerate   bool
}

var relNames = map[int]string{store.RelFriend: "friends", store.RelBlocked: "blocked", store.RelPendingIncoming: "incoming requests",
	store.RelPendingOutgoing: "outgoing requests", store.RelImplicit: "implicit", store.RelSuggestion: "suggestions"}

// findUser finds a player by id or username.
func (h *Handler) findUser(r *http.Request, q string) (*store.User, error) {
	if id, err := strconv.ParseUint(q, 10, 64); err == nil {
		u, err := h.Store.GetUser(r.Context(), id)
		if err == nil || !errors.Is(err, store.ErrNotFound) {
			return u, err
		}
	}
	return h.Store.GetUserByUsername(r.Context(), q)
}

// namer returns a function that names ids by lookup, looking each up once; an id whose lookup
// fails (its row is gone) is named by its number.
func namer(lookup func(id uint64) (string, error)) func(id uint64) string {
	names := map[uint64]string{}
	return func(id uint64) string {
		if n, ok := names[id]; ok {
			return n
		}
		n, err := lookup(id)
		if err != nil {
			n = strconv.FormatUint(id, 10)
		}
		names[id] = n
		return n
	}
}

// appNames returns a function that names applications, each looked up once for the request.
func (h *Handler) appNames(r *http.Request) func(id uint64) string {
	return namer(func(id uint64) (string, error) {
		a, err := h.Store.GetApplication(r.Context(), id)
		if err != nil {
			return "", err
		}
		return a.Name, nil
	})
}

// usernames returns a function that names users by username, each looked up once for the
// request.
func (h *Handler) usernames(r *http.Request) func(id uint64) string {
	return namer(func(id uint64) (string, error) {
		u, err := h.Store.GetUser(r.Context(), id)
		if err != nil {
			return "", err
		}
		return u.Username, nil
	})
}

func (h *Handler) players(w http.ResponseWriter, r *http.Request, rq *request) (string, any, error) {
	d := playerData{Query: strings.TrimSpace(r.URL.Query().Get("q")), CanModerate: can(rq.op, store.RoleModerator)}
	if d.Query == "" {
		return "players", d, nil
	}
	u, err := h.findUser(r, d.Query)
	if errors.Is(err, store.ErrNotFound) {
		return "", nil, notFound("Player " + strconv.Quote(d.Query))
	}
	if err != nil {
		return "", nil, err
	}
	d.User, d.Banned = u, u.Banned(h.Clock.Now())
	appName := h.appNames(r)
	auths, err := h.Store.ListAuthorizationsByUser(r.Context(), u.ID)
	if err != nil {
		return "", nil, err
	}
	for _, a := range auths {
		d.Apps = append(d.Apps, linkedApp{Auth: a, Name: appName(a.AppID)})
	}
	for _, s := range h.Sessions(u.ID) {
		d.Sessions = append(d.Sessions, liveSession{SessionInfo: s, Node: h.NodeID, AppName: appName(s.AppID)})
	}
	counts, err := h.Store.CountRelationships(r.Context(), u.ID)
	if err != nil {
		return "", nil, err
	}
	for _, c := range counts {
		name, ok := relNames[c.Type]
		if !ok {
			name = "type " + strconv.Itoa(c.Type)
		}
		d.Relationships = append(d.Relationships, relCount{Type: name, Count: c.Count})
	}
	return "players", d, nil
}

// playerURL is the player page of id.
func playerURL(id uint64) string {
	return "/console/players?q=" + url.QueryEscape(strconv.FormatUint(id, 10))
}

// ban bans the player (duration: "" permanently, else a Go duration) and closes their gateway
// sessions at once.
func (h *Handler) ban(w http.ResponseWriter, r *http.Request, rq *request) (string, error) {
	id, err := pathID(r, "id")
	if err != nil {
		return "", err
	}
	var until time.Time
	detail := "permanent"
	if ds := strings.TrimSpace(r.PostForm.Get("duration")); ds != "" {
		d, err := time.ParseDuration(ds)
		if err != nil || d <= 0 {
			return "", badRequest("The duration " + strconv.Quote(ds) + " is not a positive duration such as 24h.")
		}
		until, detail = h.Clock.Now().Add(d), "until "+h.Clock.Now().Add(d).UTC().Format(time.RFC3339)
	}
	u, err := h.Store.GetUser(r.Context(), id)
	if errors.Is(err, store.ErrNotFound) {
		return "", notFound("Player")
	}
	if err != nil {
		return "", err
	}
	if u.Bot {
		return "", badRequest("A bot user cannot be banned.")
	}
	err = h.Accounts.Ban(r.Context(), id, until, h.audited(r.Context(), rq.op, "ban", userTarget(id), detail))
	if err != nil {
		return "", err
	}
	h.EndSessions(id)
	return playerURL(id), nil
}

func (h *Handler) unban(w http.ResponseWriter, r *http.Request, rq *request) (string, error) {
	id, err := pathID(r, "id")
	if err != nil {
		return "", err
	}
	err = h.Accounts.Unban(r.Context(), id, h.audited(r.Context(), rq.op, "unban", userTarget(id), ""))
	if errors.Is(err, store.ErrNotFound) {
		return "", notFound("Player")
	}
	if err != nil {
		return "", err
	}
	return playerURL(id), nil
}

// revoke revokes the player's authorization of one application with every token under it.
func (h *Handler) revoke(w http.ResponseWriter, r *http.Request, rq *request) (string, error) {
	id, err := pathID(r, "id")
	if err != nil {
		return "", err
	}
	appID, err := formID(r, "app_id")
	if err != nil {
		return "", err
	}
	a, err := h.Store.FindAuthorization(r.Context(), appID, id)
	if errors.Is(err, store.ErrNotFound) {
		return "", notFound("Authorization of that application")
	}
	if err != nil {
		return "", err
	}
	err = h.Accounts.Revoke(r.Context(), a.ID, h.audited(r.Context(), rq.op, "revoke", userTarget(id),
		"application "+strconv.FormatUint(appID, 10)))
	if err != nil {
		return "", err
	}
	return playerURL(id), nil
}

func userTarget(id uint64) string { return "user " + strconv.FormatUint(id, 10) }

// ---- lobbies

type lobbiesData struct {
	Lobbies []store.Lobby
}

func (h *Handler) lobbies(w http.ResponseWriter, r *http.Request, rq *request) (string, any, error) {
	if err := openByID(w, r, "lobby", "/console/lobbies/"); err != nil {
		return "", nil, err
	}
	ls, err := h.Store.ListLobbies(r.Context(), listLimit)
	return "lobbies", lobbiesData{Lobbies: ls}, err
}

type member struct {
	store.LobbyMember
	Username string
}

type message struct {
	store.LobbyMessage
	Author string
}

type lobbyData struct {
	Lobby    *store.Lobby
	AppName  string
	Members  []member
	Messages []message
}

func (h *Handler) lobby(w http.ResponseWriter, r *http.Request, rq *request) (string, any, error) {
	id, err := pathID(r, "id")
	if err != nil {
		return "", nil, err
	}
	l, err := h.Store.GetLobby(r.Context(), id)
	if errors.Is(err, store.ErrNotFound) {
		return "", nil, notFound("Lobby")
	}
	if err != nil {
		return "", nil, err
	}
	d := lobbyData{Lobby: l, AppName: h.appNames(r)(l.AppID)}
	username := h.usernames(r)
	ms, err := h.Store.ListLobbyMembers(r.Context(), id)
	if err != nil {
		return "", nil, err
	}
	for _, m := range ms {
		d.Members = append(d.Members, member{LobbyMember: m, Username: username(m.UserID)})
	}
	msgs, err := h.Store.ListLobbyMessages(r.Context(), id, time.Time{}, listLimit)
	if err != nil {
		return "", nil, err
	}
	for _, m := range msgs {
		d.Messages = append(d.Messages, message{LobbyMessage: m, Author: username(m.AuthorID)})
	}
	return "lobby", d, nil
}

// openByID redirects a list page's "open by id" form (query parameter id) to base+id; it
// returns errRedirected when it did, nil when there is no id to open.
func openByID(w http.ResponseWriter, r *http.Request, what, base string) error {
	q := strings.TrimSpace(r.URL.Query().Get("id"))
	if q == "" {
		return nil
	}
	if _, err := strconv.ParseUint(q, 10, 64); err != nil {
		return badRequest(strconv.Quote(q) + " is not a " + what + " id.")
	}
	http.Redirect(w, r, base+q, http.StatusSeeOther)
	return errRedirected
}

// errRedirected tells page that the page function has answered with a redirect.
var errRedirected = errors.New("console: redirected")

// ---- applications

type appsData struct {
	Apps []store.Application
}

func (h *Handler) apps(w http.ResponseWriter, r *http.Request, rq *request) (string, any, error) {
	as, err := h.Store.ListApplications(r.Context(), listLimit)
	return "apps", appsData{Apps: as}, err
}

type appData struct {
	App        *store.Application
	Deliveries []store.WebhookDelivery
	CanRetry   bool
}

func (h *Handler) app(w http.ResponseWriter, r *http.Request, rq *request) (string, any, error) {
	id, err := pathID(r, "id")
	if err != nil {
		return "", nil, err
	}
	a, err := h.Store.GetApplication(r.Context(), id)
	if errors.Is(err, store.ErrNotFound) {
		return "", nil, notFound("Application")
	}
	if err != nil {
		return "", nil, err
	}
	ds, err := h.Store.ListAppWebhooks(r.Context(), id, listLimit)
	return "app", appData{App: a, Deliveries: ds, CanRetry: can(rq.op, store.RoleAdmin)}, err
}

// retryWebhook queues a failed delivery again, due now, and wakes the dispatcher.
func (h *Handler) retryWebhook(w http.ResponseWriter, r *http.Request, rq *request) (string, error) {
	appID, err := pathID(r, "id")
	if err != nil {
		return "", err
	}
	id, err := pathID(r, "delivery")
	if err != nil {
		return "", err
	}
	err = h.Store.WithTx(r.Context(), func(st store.Store) error {
		d, err := st.GetWebhook(r.Context(), id)
		if errors.Is(err, store.ErrNotFound) || (err == nil && d.AppID != appID) {
			return notFound("Webhook delivery")
		}
		if err != nil {
			return err
		}
		if d.State != store.WebhookFailed {
			return &statusError{http.StatusConflict, "Only a failed delivery can be retried; this one is " + d.State + "."}
		}
		d.State, d.Attempts, d.NextAttemptAt = store.WebhookPending, 0, h.Clock.Now()
		if err := st.UpdateWebhook(r.Context(), d); err != nil {
			return err
		}
		return h.record(r.Context(), st, rq.op, "retry_webhook", fmt.Sprintf("webhook delivery %d", id),
			fmt.Sprintf("application %d, %s", appID, d.EventType))
	})
	if err != nil {
		return "", err
	}
	h.Kick()
	return "/console/apps/" + strconv.FormatUint(appID, 10), nil
}

// ---- nodes and audit

type nodesData struct {
	Nodes     []Node
	DownAfter time.Duration
}

// nodes lists the node registry's rows, this node's with its live numbers, each up or down.
func (h *Handler) nodes(w http.ResponseWriter, r *http.Request, rq *request) (string, any, error) {
	rows, err := h.Store.ListNodes(r.Context())
	if err != nil {
		return "", nil, err
	}
	self := h.Self()
	if i := slices.IndexFunc(rows, func(n store.Node) bool { return n.ID == self.ID }); i >= 0 {
		rows[i] = self
	} else {
		rows = append(rows, self)
		slices.SortFunc(rows, func(a, b store.Node) int { return a.ID - b.ID })
	}
	d := nodesData{DownAfter: h.NodeDownAfter}
	if d.DownAfter <= 0 {
		d.DownAfter = DefaultNodeDownAfter
	}
	now := h.Clock.Now()
	for _, n := range rows {
		isSelf := n.ID == self.ID
		d.Nodes = append(d.Nodes, Node{Node: n, Self: isSelf, Up: isSelf || now.Sub(n.UpdatedAt) < d.DownAfter})
	}
	return "nodes", d, nil
}

type auditData struct {
	Actions []store.OperatorAction
}

func (h *Handler) audit(w http.ResponseWriter, r *http.Request, rq *request) (string, any, error) {
	as, err := h.Store.ListOperatorActions(r.Context(), listLimit)
	return "audit", auditData{Actions: as}, err
}
