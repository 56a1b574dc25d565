package console

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"

	"sdkpp/server/loginthrottle"
	"sdkpp/server/secret"
	"sdkpp/server/snowflake"
	"sdkpp/server/store"
)

// MinPasswordLength is the shortest operator password AddOperator accepts.
const MinPasswordLength = 12

// AddOperator creates an operator account with the password hashed as players' are.
func AddOperator(ctx context.Context, st store.Store, ids *snowflake.Generator, now time.Time, username, role, password string) (*store.Operator, error) {
	username = strings.TrimSpace(username)
	if username == "" || len(username) > 64 || strings.ContainsAny(username, " \t\r\n") {
		return nil, errors.New("console: the username must be 1 to 64 characters without spaces")
	}
	if !ValidRole(role) {
		return nil, fmt.Errorf("console: role %q is not viewer, moderator or admin", role)
	}
	if len(password) < MinPasswordLength {
		return nil, fmt.Errorf("console: the password must have at least %d characters", MinPasswordLength)
	}
	hash, err := secret.HashPassword(password)
	if err != nil {
		return nil, fmt.Errorf("console: hash password: %w", err)
	}
	op := &store.Operator{ID: ids.Next(), Username: username, PasswordHash: hash, Role: role, CreatedAt: now}
	if err := st.CreateOperator(ctx, op); err != nil {
		if errors.Is(err, store.ErrConflict) {
			return nil, fmt.Errorf("console: operator %q exists already", username)
		}
		return nil, fmt.Errorf("console: create operator: %w", err)
	}
	return op, nil
}

// noOperatorHash is checked against when the username is unknown, so that an unknown username
// takes as long to refuse as a wrong password.
var noOperatorHash, _ = secret.HashPassword(secret.Token())

type signInData struct {
	Username string
	Error    string
}

// home sends a signed-in operator to the players page (page sends others to sign in).
func (h *Handler) home(w http.ResponseWriter, r *http.Request, rq *request) (string, any, error) {
	http.Redirect(w, r, "/console/players", http.StatusSeeOther)
	return "", nil, errRedirected
}

func (h *Handler) signInPage(w http.ResponseWriter, r *http.Request) {
	h.render(w, http.StatusOK, "signin", &request{csrf: h.csrfToken(w, r)}, signInData{})
}

// signIn checks the form's username and password, throttled as the consent page's logins are,
// and starts a session.
func (h *Handler) signIn(w http.ResponseWriter, r *http.Request) {
	if err := r.ParseForm(); err != nil {
		h.fail(w, r, nil, badRequest("The form could not be read."))
		return
	}
	rq := &request{csrf: h.csrfToken(w, r)}
	if !checkCSRF(r) {
		h.fail(w, r, rq, &statusError{http.StatusForbidden, "The form has expired: reload the page and try again."})
		return
	}
	username, password := strings.TrimSpace(r.PostForm.Get("username")), r.PostForm.Get("password")
	now := h.Clock.Now()
	keys := loginthrottle.Keys(r, username)
	if wait := h.Logins.Locked(keys, now); wait > 0 {
		loginthrottle.RetryAfter(w, wait)
		h.render(w, http.StatusTooManyRequests, "signin", rq, signInData{Username: username, Error: loginthrottle.LockedText(wait)})
		return
	}
	op, err := h.Store.GetOperatorByUsername(r.Context(), username)
	switch {
	case errors.Is(err, store.ErrNotFound):
		secret.CheckPassword(noOperatorHash, password)
		op = nil
	case err != nil:
		h.fail(w, r, rq, err)
		return
	}
	if op == nil || !secret.CheckPassword(op.PasswordHash, password) {
		h.Logins.Failed(keys, now)
		h.Logger.InfoContext(r.Context(), "console sign-in failed", "remote", loginthrottle.RemoteHost(r))
		h.render(w, http.StatusUnauthorized, "signin", rq, signInData{Username: username, Error: "Wrong username or password."})
		return
	}
	h.Logins.Succeeded(keys[0])
	token := secret.Token()
	err = h.Store.WithTx(r.Context(), func(st store.Store) error {
		if err := st.InsertOperatorSession(r.Context(), &store.OperatorSession{Hash: secret.Hash(token), OperatorID: op.ID,
			CreatedAt: now, ExpiresAt: now.Add(SessionTTL)}); err != nil {
			return err
		}
		return h.record(r.Context(), st, op, "sign_in", "operator "+op.Username, "")
	})
	if err != nil {
		h.fail(w, r, rq, err)
		return
	}
	h.Logger.InfoContext(r.Context(), "console sign-in", "operator_id", op.ID, "role", op.Role)
	http.SetCookie(w, h.cookie(SessionCookie, token, int(SessionTTL/time.Second)))
	http.Redirect(w, r, "/console/players", http.StatusSeeOther)
}

func (h *Handler) signOut(w http.ResponseWriter, r *http.Request, rq *request) (string, error) {
	c, err := r.Cookie(SessionCookie)
	if err != nil {
		return "/console/signin", nil
	}
	http.SetCookie(w, h.cookie(SessionCookie, "", -1))
	err = h.Store.DeleteOperatorSession(r.Context(), secret.Hash(c.Value))
	if err != nil && !errors.Is(err, store.ErrNotFound) {
		return "", err
	}
	return "/console/signin", nil
}
