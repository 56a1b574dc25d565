// Package console serves the operator console at /console: the service's staff sign in with
// operator accounts (separate from players', each with a role) to look players, lobbies,
// guilds, applications and nodes up, to ban and unban players, revoke their tokens and retry webhook
// deliveries, every action written to an audit log.
//
// The pages are plain server-rendered HTML with the consent page's protections: a CSRF
// double-submit token on every form, no framing (X-Frame-Options DENY, CSP frame-ancestors
// 'none'), and sign-ins throttled per username and address (package loginthrottle). The session
// cookie is HttpOnly, SameSite=Strict, and Secure when the public URL is https.
//
// Roles are enforced here, server side: a viewer reads; a moderator may also ban, unban and
// revoke; an admin may also retry webhook deliveries. A refused action is a 403.
//
// Routes (all below /console):
//
//	GET  /console                       the players page (sign-in page when signed out)
//	GET  /console/signin, POST /console/signin, POST /console/signout
//	GET  /console/players?q=ID|USERNAME  a player: applications, live sessions, relationships
//	POST /console/players/{id}/ban      duration ("" permanent, or a Go duration such as 24h)
//	POST /console/players/{id}/unban
//	POST /console/players/{id}/revoke   app_id: revoke the player's tokens for that application
//	GET  /console/lobbies, /console/lobbies/{id}  members, metadata, recent messages
//	GET  /console/guilds, /console/guilds/{id}    members, channels and linked lobbies, recent
//	                                    messages (author, mentions, edits, replies), audit log
//	GET  /console/apps, /console/apps/{id}        redirect URIs, webhook URL and deliveries
//	POST /console/apps/{id}/webhooks/{delivery_id}/retry
//	GET  /console/nodes                 the cluster: every node with its sessions and calls, up or down
//	GET  /console/audit                 the audit log
package console

import (
	"context"
	"crypto/subtle"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"strconv"
	"strings"
	"time"

	"sdkpp/internal/clock"
	"sdkpp/server/accounts"
	"sdkpp/server/gateway"
	"sdkpp/server/loginthrottle"
	"sdkpp/server/secret"
	"sdkpp/server/snowflake"
	"sdkpp/server/store"
)

// Cookie names; both have Path /console.
const (
	SessionCookie = "sdkpp_console"
	CSRFCookie    = "sdkpp_console_csrf"
)

// SessionTTL is how long a console sign-in lasts.
const SessionTTL = 12 * time.Hour

// Node is one node of the cluster as the cluster page shows it: its row in the store's node
// registry, and whether it is up.
type Node struct {
	store.Node
	Self bool // the node serving the page
	Up   bool // this node, or one whose last heartbeat is younger than NodeDownAfter
}

// DefaultNodeDownAfter is Handler.NodeDownAfter when it is zero.
const DefaultNodeDownAfter = 30 * time.Second

// Handler serves the console. Every field but Logins must be set; Register adds its routes.
type Handler struct {
	Store    store.Store
	Clock    clock.Clock
	IDs      *snowflake.Generator
	Logger   *slog.Logger
	Accounts *accounts.Service
	// Logins throttles sign-ins; nil throttles nothing.
	Logins *loginthrottle.Throttle
	// PublicURL is the service's base URL; https makes the cookies Secure.
	PublicURL string
	// NodeID is this node's id, shown beside its sessions.
	NodeID int
	// Sessions describes a user's gateway sessions on this node; EndSessions closes them.
	Sessions    func(userID uint64) []gateway.SessionInfo
	EndSessions func(userID uint64)
	// Self returns this node's registry row as it is now: the row its next heartbeat writes.
	Self func() store.Node
	// NodeDownAfter is how old a node's last heartbeat may be before the cluster page shows it
	// down (a few heartbeats); zero is DefaultNodeDownAfter.
	NodeDownAfter time.Duration
	// Kick wakes the webhook dispatcher after a retry is queued.
	Kick func()
}

// Register adds the console's routes to mux.
func (h *Handler) Register(mux *http.ServeMux) {
	mux.HandleFunc("GET /console", h.page(store.RoleViewer, h.home))
	mux.HandleFunc("GET /console/{$}", h.page(store.RoleViewer, h.home))
	mux.HandleFunc("GET /console/signin", h.signInPage)
	mux.HandleFunc("POST /console/signin", h.signIn)
	mux.HandleFunc("POST /console/signout", h.action(store.RoleViewer, h.signOut))
	mux.HandleFunc("GET /console/players", h.page(store.RoleViewer, h.players))
	mux.HandleFunc("POST /console/players/{id}/ban", h.action(store.RoleModerator, h.ban))
	mux.HandleFunc("POST /console/players/{id}/unban", h.action(store.RoleModerator, h.unban))
	mux.HandleFunc("POST /console/players/{id}/revoke", h.action(store.RoleModerator, h.revoke))
	mux.HandleFunc("GET /console/lobbies", h.page(store.RoleViewer, h.lobbies))
	mux.HandleFunc("GET /console/lobbies/{id}", h.page(store.RoleViewer, h.lobby))
	mux.HandleFunc("GET /console/guilds", h.page(store.RoleViewer, h.guilds))
	mux.HandleFunc("GET /console/guilds/{id}", h.page(store.RoleViewer, h.guild))
	mux.HandleFunc("GET /console/apps", h.page(store.RoleViewer, h.apps))
	mux.HandleFunc("GET /console/apps/{id}", h.page(store.RoleViewer, h.app))
	mux.HandleFunc("POST /console/apps/{id}/webhooks/{delivery}/retry", h.action(store.RoleAdmin, h.retryWebhook))
	mux.HandleFunc("GET /console/nodes", h.page(store.RoleViewer, h.nodes))
	mux.HandleFunc("GET /console/audit", h.page(store.RoleViewer, h.audit))
}

// rank orders the roles; an unknown role ranks below every one.
func rank(role string) int {
	switch role {
	case store.RoleViewer:
		return 1
	case store.RoleModerator:
		return 2
	case store.RoleAdmin:
		return 3
	}
	return 0
}

// ValidRole tells whether role is one of the roles.
func ValidRole(role string) bool { return rank(role) > 0 }

// can tells whether op's role allows what needs role.
func can(op *store.Operator, role string) bool { return rank(op.Role) >= rank(role) }

// request is one signed-in request.
type request struct {
	op   *store.Operator
	csrf string
}

// pageFunc renders a page; it returns the template name and its data, or an error.
type pageFunc func(w http.ResponseWriter, r *http.Request, rq *request) (string, any, error)

// actionFunc performs a POST; it returns where to go next.
type actionFunc func(w http.ResponseWriter, r *http.Request, rq *request) (string, error)

// statusError is an error shown with its status and text.
type statusError struct {
	status int
	text   string
}

func (e *statusError) Error() string { return e.text }

func notFound(what string) error   { return &statusError{http.StatusNotFound, what + " not found."} }
func badRequest(text string) error { return &statusError{http.StatusBadRequest, text} }

// page serves a GET page to a signed-in operator whose role allows role; others are sent to the
// sign-in page.
func (h *Handler) page(role string, fn pageFunc) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		op, err := h.operator(r)
		if err != nil {
			h.fail(w, r, nil, err)
			return
		}
		if op == nil {
			http.Redirect(w, r, "/console/signin", http.StatusSeeOther)
			return
		}
		rq := &request{op: op, csrf: h.csrfToken(w, r)}
		if !can(op, role) {
			h.fail(w, r, rq, &statusError{http.StatusForbidden, "Your role (" + op.Role + ") may not see this page."})
			return
		}
		name, data, err := fn(w, r, rq)
		if errors.Is(err, errRedirected) {
			return
		}
		if err != nil {
			h.fail(w, r, rq, err)
			return
		}
		h.render(w, http.StatusOK, name, rq, data)
	}
}

// action serves a POST of a signed-in operator: the form's CSRF token must match its cookie,
// and the operator's role must allow role (403 otherwise). It then redirects (303) to where fn
// says.
func (h *Handler) action(role string, fn actionFunc) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		if err := r.ParseForm(); err != nil {
			h.fail(w, r, nil, badRequest("The form could not be read."))
			return
		}
		if !checkCSRF(r) {
			h.fail(w, r, nil, &statusError{http.StatusForbidden, "The form has expired: reload the page and try again."})
			return
		}
		op, err := h.operator(r)
		if err != nil {
			h.fail(w, r, nil, err)
			return
		}
		if op == nil {
			h.fail(w, r, nil, &statusError{http.StatusUnauthorized, "Sign in first."})
			return
		}
		rq := &request{op: op, csrf: h.csrfToken(w, r)}
		if !can(op, role) {
			h.Logger.WarnContext(r.Context(), "console action refused", "operator_id", op.ID, "role", op.Role,
				"path", r.URL.Path)
			h.fail(w, r, rq, &statusError{http.StatusForbidden, "Your role (" + op.Role + ") may not do this; it needs " + role + "."})
			return
		}
		next, err := fn(w, r, rq)
		if err != nil {
			h.fail(w, r, rq, err)
			return
		}
		http.Redirect(w, r, next, http.StatusSeeOther)
	}
}

// fail shows err: its status and text for a statusError, else 500 (logged).
func (h *Handler) fail(w http.ResponseWriter, r *http.Request, rq *request, err error) {
	var se *statusError
	if !errors.As(err, &se) {
		h.Logger.ErrorContext(r.Context(), "console request failed", "path", r.URL.Path, "err", err)
		se = &statusError{http.StatusInternalServerError, "Something went wrong; it has been logged."}
	}
	if rq == nil {
		rq = &request{csrf: h.csrfToken(w, r)}
	}
	h.render(w, se.status, "error", rq, se.text)
}

// operator returns the signed-in operator of r, nil when there is none.
func (h *Handler) operator(r *http.Request) (*store.Operator, error) {
	c, err := r.Cookie(SessionCookie)
	if err != nil || c.Value == "" {
		return nil, nil
	}
	sess, err := h.Store.GetOperatorSession(r.Context(), secret.Hash(c.Value))
	if errors.Is(err, store.ErrNotFound) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	if !h.Clock.Now().Before(sess.ExpiresAt) {
		return nil, nil
	}
	op, err := h.Store.GetOperator(r.Context(), sess.OperatorID)
	if errors.Is(err, store.ErrNotFound) {
		return nil, nil
	}
	return op, err
}

// secureCookies tells whether cookies are sent over https only.
func (h *Handler) secureCookies() bool { return strings.HasPrefix(h.PublicURL, "https://") }

// cookie returns a console cookie of the given name and value.
func (h *Handler) cookie(name, value string, maxAge int) *http.Cookie {
	return &http.Cookie{Name: name, Value: value, Path: "/console", MaxAge: maxAge, HttpOnly: true,
		SameSite: http.SameSiteStrictMode, Secure: h.secureCookies()}
}

// csrfToken returns the request's CSRF cookie value, setting a new cookie when there is none.
func (h *Handler) csrfToken(w http.ResponseWriter, r *http.Request) string {
	if c, err := r.Cookie(CSRFCookie); err == nil && len(c.Value) >= 32 {
		return c.Value
	}
	v := secret.Random(24)
	http.SetCookie(w, h.cookie(CSRFCookie, v, 0))
	return v
}

// checkCSRF compares the parsed form's csrf_token with the cookie (double submit).
func checkCSRF(r *http.Request) bool {
	c, err := r.Cookie(CSRFCookie)
	got := r.PostForm.Get("csrf_token")
	return err == nil && len(c.Value) >= 32 && subtle.ConstantTimeCompare([]byte(c.Value), []byte(got)) == 1
}

// record writes an audit log entry of op's action on st (the action's transaction).
func (h *Handler) record(ctx context.Context, st store.Store, op *store.Operator, action, target, detail string) error {
	return st.AppendOperatorAction(ctx, &store.OperatorAction{ID: h.IDs.Next(), OperatorID: op.ID, Operator: op.Username,
		Action: action, Target: target, Detail: detail, CreatedAt: h.Clock.Now()})
}

// audited returns a function that records the action in the transaction it is given.
func (h *Handler) audited(ctx context.Context, op *store.Operator, action, target, detail string) func(store.Store) error {
	return func(st store.Store) error { return h.record(ctx, st, op, action, target, detail) }
}

// pathID parses the path value name as an id.
func pathID(r *http.Request, name string) (uint64, error) {
	id, err := strconv.ParseUint(r.PathValue(name), 10, 64)
	if err != nil {
		return 0, badRequest(fmt.Sprintf("%q is not an id.", r.PathValue(name)))
	}
	return id, nil
}

// formID parses the form value name as an id.
func formID(r *http.Request, name string) (uint64, error) {
	id, err := strconv.ParseUint(strings.TrimSpace(r.PostForm.Get(name)), 10, 64)
	if err != nil {
		return 0, badRequest("The " + name + " is not an id.")
	}
	return id, nil
}
