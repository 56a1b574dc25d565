package oauth

import (
	"context"
	"crypto/subtle"
	"errors"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"unicode/utf8"

	"sdkpp/server/httpx"
	"sdkpp/server/scopes"
	"sdkpp/server/secret"
	"sdkpp/server/store"
	"sdkpp/wire"
)

// authorizeParams are the authorize request parameters, carried as hidden inputs of the form.
var authorizeParams = []string{"response_type", "client_id", "redirect_uri", "scope", "state", "nonce",
	"prompt", "integration_type", "code_challenge", "code_challenge_method"}

// authzRequest is a checked authorize request.
type authzRequest struct {
	app             *store.Application
	params          url.Values // the raw parameters, to carry through the form
	redirectURI     string
	state           string
	scopes          []string
	integrationType int
	challenge       string
	nonce           string
	prompt          string
}

// pageError is an authorize error that must not redirect (unknown client, bad redirect URI).
type pageError struct{ text string }

func (e *pageError) Error() string { return e.text }

// parseAuthorize checks the parameters. It returns a *pageError when no redirect is possible, a
// *wire.OAuthError to send to the redirect URI, or another error.
func (h *Handler) parseAuthorize(ctx context.Context, v url.Values) (*authzRequest, error) {
	req := &authzRequest{params: url.Values{}, integrationType: -1}
	for _, p := range authorizeParams {
		if len(v[p]) > 1 {
			return nil, &pageError{"The parameter " + p + " is repeated."}
		}
		if s := v.Get(p); s != "" {
			if !utf8.ValidString(s) || len(s) > 4096 {
				return nil, &pageError{"The parameter " + p + " is not valid."}
			}
			req.params.Set(p, s)
		}
	}
	app, err := h.lookupApp(ctx, v.Get("client_id"))
	if errors.Is(err, store.ErrNotFound) {
		return nil, &pageError{"Unknown application (client_id)."}
	}
	if err != nil {
		return nil, err
	}
	req.app = app
	req.redirectURI = v.Get("redirect_uri")
	if !redirectAllowed(app, req.redirectURI) {
		return nil, &pageError{"The redirect_uri is not registered for this application."}
	}
	req.state, req.nonce, req.prompt = v.Get("state"), v.Get("nonce"), v.Get("prompt")
	if v.Get("response_type") != "code" {
		return req, oauthErr(wire.OAuthUnsupportedResponse, "response_type must be code")
	}
	req.scopes = scopes.Parse(v.Get("scope"))
	if len(req.scopes) == 0 {
		return req, oauthErr(wire.OAuthInvalidScope, "scope is required")
	}
	if unknown := scopes.Unknown(req.scopes); len(unknown) > 0 {
		return req, oauthErr(wire.OAuthInvalidScope, "unknown scope "+unknown[0])
	}
	switch it := v.Get("integration_type"); it {
	case "":
	case "0", "1":
		req.integrationType, _ = strconv.Atoi(it) // rule AA-6
	default:
		return req, oauthErr(wire.OAuthInvalidRequest, "integration_type must be 0 or 1")
	}
	switch req.prompt {
	case "", "consent", "none":
	default:
		return req, oauthErr(wire.OAuthInvalidRequest, "prompt must be consent or none")
	}
	if req.challenge = v.Get("code_challenge"); req.challenge != "" {
		if v.Get("code_challenge_method") != "S256" {
			return req, oauthErr(wire.OAuthInvalidRequest, "code_challenge_method must be S256")
		}
		if len(req.challenge) != 43 || !pkceChars(req.challenge) {
			return req, oauthErr(wire.OAuthInvalidRequest, "code_challenge must be a base64url SHA-256")
		}
	} else if v.Get("code_challenge_method") != "" {
		return req, oauthErr(wire.OAuthInvalidRequest, "code_challenge_method without code_challenge")
	}
	return req, nil
}

// errorRedirect sends the browser back to the app with an OAuth error.
func (req *authzRequest) errorRedirect(w http.ResponseWriter, r *http.Request, e *wire.OAuthError) {
	http.Redirect(w, r, withParams(req.redirectURI, url.Values{"error": {e.Code},
		"error_description": {e.Description}, "state": {req.state}}), http.StatusFound)
}

// scopeLines describes the requested scopes for the page.
func (req *authzRequest) scopeLines() (lines []scopeLine, unavailable []string) {
	for _, s := range req.scopes {
		if !scopes.Grantable(s, policy(req.app)) {
			unavailable = append(unavailable, s) // rule AU-2
			continue
		}
		lines = append(lines, scopeLine{Name: s, Description: scopes.Describe(s), Optional: !scopes.Required(s)})
	}
	return lines, unavailable
}

// sessionUser returns the signed-in, unbanned user of the request, or nil.
func (h *Handler) sessionUser(r *http.Request) *store.User {
	c, err := r.Cookie(SessionCookie)
	if err != nil || c.Value == "" {
		return nil
	}
	s, err := h.Store.GetSession(r.Context(), secret.Hash(c.Value))
	if err != nil || !h.Clock.Now().Before(s.ExpiresAt) {
		return nil
	}
	u, err := h.Store.GetUser(r.Context(), s.UserID)
	if err != nil || u.Banned(h.Clock.Now()) {
		return nil
	}
	return u
}

// csrfToken returns the request's CSRF cookie value, setting a new cookie when there is none.
func (h *Handler) csrfToken(w http.ResponseWriter, r *http.Request) string {
	if c, err := r.Cookie(CSRFCookie); err == nil && len(c.Value) >= 32 {
		return c.Value
	}
	v := secret.Random(24)
	http.SetCookie(w, &http.Cookie{Name: CSRFCookie, Value: v, Path: "/", HttpOnly: true,
		SameSite: http.SameSiteStrictMode, Secure: h.secureCookies()})
	return v
}

// checkCSRF compares the form's csrf_token with the cookie.
func checkCSRF(r *http.Request, form url.Values) bool {
	c, err := r.Cookie(CSRFCookie)
	got := form.Get("csrf_token")
	return err == nil && c.Value != "" && subtle.ConstantTimeCompare([]byte(c.Value), []byte(got)) == 1
}

// loginError is a failed login on a form.
type loginError struct {
	status int
	text   string
}

// formUser returns the user of a consent form: the username and password when given (starting a
// session), else the session's user.
// more are further throttle keys the login counts against (a device request's).
func (h *Handler) formUser(w http.ResponseWriter, r *http.Request, form url.Values, more ...string) (*store.User, *loginError, error) {
	name, pw := form.Get("username"), form.Get("password")
	if name == "" && pw == "" {
		if u := h.sessionUser(r); u != nil {
			return u, nil, nil
		}
		return nil, &loginError{http.StatusUnauthorized, "Log in to continue."}, nil
	}
	keys := throttleKeys(r, name, more...)
	if wait := h.Logins.locked(keys, h.Clock.Now()); wait > 0 {
		h.Logger.InfoContext(r.Context(), "consent login throttled")
		retryAfter(w, wait)
		return nil, &loginError{http.StatusTooManyRequests, lockedText(wait)}, nil
	}
	u, err := h.Store.GetUserByUsername(r.Context(), name)
	if err != nil && !errors.Is(err, store.ErrNotFound) {
		return nil, nil, err
	}
	if u == nil || u.Bot || u.Provisional || !secret.CheckPassword(u.PasswordHash, pw) {
		h.Logins.failed(keys, h.Clock.Now())
		h.Logger.InfoContext(r.Context(), "consent login failed")
		return nil, &loginError{http.StatusUnauthorized, "Wrong username or password."}, nil
	}
	h.Logins.succeeded(keys[0])
	if u.Banned(h.Clock.Now()) {
		h.Logger.InfoContext(r.Context(), "consent login refused: banned", "user_id", u.ID)
		return nil, &loginError{http.StatusForbidden, "This account is banned."}, nil
	}
	sid := secret.Token()
	if err := h.Store.InsertSession(r.Context(), &store.Session{Hash: secret.Hash(sid), UserID: u.ID,
		ExpiresAt: h.Clock.Now().Add(SessionTTL)}); err != nil {
		return nil, nil, err
	}
	http.SetCookie(w, &http.Cookie{Name: SessionCookie, Value: sid, Path: "/", HttpOnly: true,
		SameSite: http.SameSiteLaxMode, Secure: h.secureCookies(), MaxAge: int(SessionTTL.Seconds())})
	h.Logger.InfoContext(r.Context(), "consent login", "user_id", u.ID)
	return u, nil, nil
}

func (h *Handler) renderConsent(w http.ResponseWriter, r *http.Request, req *authzRequest, status int, user *store.User, errText string) {
	hidden := map[string]string{}
	for k := range req.params {
		hidden[k] = req.params.Get(k)
	}
	lines, unavailable := req.scopeLines()
	data := consentData{Title: "Authorize " + req.app.Name, AppName: req.app.Name, Action: "/oauth2/authorize",
		Hidden: hidden, CSRF: h.csrfToken(w, r), Scopes: lines, Unavailable: unavailable, Error: errText}
	if user != nil {
		data.User = user.Username
	}
	writeHTML(w, status, consentTemplate, data)
}

// authorizePage serves GET /oauth2/authorize.
func (h *Handler) authorizePage(w http.ResponseWriter, r *http.Request) {
	req, err := h.parseAuthorize(r.Context(), r.URL.Query())
	if !h.authorizeError(w, r, req, err) {
		return
	}
	user := h.sessionUser(r)
	if req.prompt == "none" {
		h.promptNone(w, r, req, user)
		return
	}
	h.renderConsent(w, r, req, http.StatusOK, user, "")
}

// authorizeError answers a failed parseAuthorize; it returns true when there was no error.
func (h *Handler) authorizeError(w http.ResponseWriter, r *http.Request, req *authzRequest, err error) bool {
	var pe *pageError
	var oe *wire.OAuthError
	switch {
	case err == nil:
		return true
	case errors.As(err, &pe):
		errorPage(w, http.StatusBadRequest, pe.text)
	case errors.As(err, &oe):
		req.errorRedirect(w, r, oe)
	default:
		h.Logger.ErrorContext(r.Context(), "authorize failed", "err", err)
		errorPage(w, http.StatusInternalServerError, "The request could not be completed.")
	}
	return false
}

// promptNone answers without a page: a code when the signed-in user already granted every
// requested scope, else login_required or consent_required.
func (h *Handler) promptNone(w http.ResponseWriter, r *http.Request, req *authzRequest, user *store.User) {
	if user == nil {
		req.errorRedirect(w, r, oauthErr(wire.OAuthLoginRequired, "no signed-in user"))
		return
	}
	granted := scopes.Grant(req.scopes, func(string) bool { return true }, policy(req.app))
	a, err := h.Store.FindAuthorization(r.Context(), req.app.ID, user.ID)
	if err != nil || !scopes.Subset(granted, a.Scopes) {
		req.errorRedirect(w, r, oauthErr(wire.OAuthConsentRequired, "the user has not granted these scopes"))
		return
	}
	h.issueCode(w, r, req, user, granted)
}

// authorizeSubmit serves POST /oauth2/authorize.
func (h *Handler) authorizeSubmit(w http.ResponseWriter, r *http.Request) {
	form, ok := httpx.Form(r)
	if !ok {
		errorPage(w, http.StatusBadRequest, "The form could not be read.")
		return
	}
	req, err := h.parseAuthorize(r.Context(), form)
	if !h.authorizeError(w, r, req, err) {
		return
	}
	if !checkCSRF(r, form) {
		h.renderConsent(w, r, req, http.StatusForbidden, h.sessionUser(r), "The form expired. Please try again.")
		return
	}
	switch form.Get("action") {
	case "deny":
		h.Logger.InfoContext(r.Context(), "authorization denied", "application_id", req.app.ID)
		req.errorRedirect(w, r, oauthErr(wire.OAuthAccessDenied, "The resource owner denied the request"))
	case "approve":
		user, le, err := h.formUser(w, r, form)
		if err != nil {
			h.authorizeError(w, r, req, err)
			return
		}
		if le != nil {
			h.renderConsent(w, r, req, le.status, nil, le.text)
			return
		}
		accepted := form["grant_scope"]
		granted := scopes.Grant(req.scopes, func(s string) bool { return slices.Contains(accepted, s) }, policy(req.app))
		h.issueCode(w, r, req, user, granted)
	default:
		h.renderConsent(w, r, req, http.StatusBadRequest, h.sessionUser(r), "Choose Approve or Deny.")
	}
}

// issueCode stores a code and redirects to the app with it.
func (h *Handler) issueCode(w http.ResponseWriter, r *http.Request, req *authzRequest, user *store.User, granted []string) {
	code := secret.Token()
	err := h.Store.InsertAuthCode(r.Context(), &store.AuthCode{
		Hash: secret.Hash(code), AppID: req.app.ID, UserID: user.ID, RedirectURI: req.redirectURI,
		Scopes: granted, CodeChallenge: req.challenge, Nonce: req.nonce, IntegrationType: req.integrationType,
		ExpiresAt: h.Clock.Now().Add(CodeTTL),
	})
	if err != nil {
		h.authorizeError(w, r, req, err)
		return
	}
	h.Logger.InfoContext(r.Context(), "authorization approved", "application_id", req.app.ID, "user_id", user.ID,
		"scopes", scopes.Join(granted), "integration_type", req.integrationType)
	http.Redirect(w, r, withParams(req.redirectURI, url.Values{"code": {code}, "state": {req.state}}), http.StatusFound)
}

// pkceChars: the unreserved characters of RFC 7636.
func pkceChars(s string) bool {
	for _, c := range s {
		if !(c >= 'A' && c <= 'Z' || c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '-' || c == '.' || c == '_' || c == '~') {
			return false
		}
	}
	return true
}
