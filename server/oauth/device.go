package oauth

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"time"

	"sdkpp/server/httpx"
	"sdkpp/server/scopes"
	"sdkpp/server/secret"
	"sdkpp/server/store"
	"sdkpp/server/token"
	"sdkpp/wire"
)

// userCodeAlphabet has no vowels or look-alikes (RFC 8628 6.1).
const userCodeAlphabet = "BCDFGHJKLMNPQRSTVWXZ"

// newUserCode returns 8 characters of userCodeAlphabet.
func newUserCode() string {
	b := make([]byte, 8)
	if _, err := io.ReadFull(secret.Reader, b); err != nil {
		panic("oauth: no randomness")
	}
	for i := range b {
		b[i] = userCodeAlphabet[int(b[i])%len(userCodeAlphabet)]
	}
	return string(b)
}

// NormalizeUserCode uppercases and strips separators: "bcdf-ghjk" -> "BCDFGHJK".
func NormalizeUserCode(s string) string {
	return strings.Map(func(r rune) rune {
		if r == '-' || r == ' ' {
			return -1
		}
		if r >= 'a' && r <= 'z' {
			return r - 'a' + 'A'
		}
		return r
	}, s)
}

// FormatUserCode writes a normalized user code as XXXX-XXXX.
func FormatUserCode(s string) string {
	if len(s) != 8 {
		return s
	}
	return s[:4] + "-" + s[4:]
}

// deviceAuthorize serves POST /oauth2/device/authorize.
func (h *Handler) deviceAuthorize(w http.ResponseWriter, r *http.Request) {
	form, c, err := h.formClient(r)
	if err != nil {
		httpx.Error(w, r, h.Logger, err)
		return
	}
	requested := scopes.Parse(form.Get("scope"))
	if len(requested) == 0 {
		httpx.Error(w, r, h.Logger, oauthErr(wire.OAuthInvalidScope, "scope is required"))
		return
	}
	if unknown := scopes.Unknown(requested); len(unknown) > 0 {
		httpx.Error(w, r, h.Logger, oauthErr(wire.OAuthInvalidScope, "unknown scope "+unknown[0]))
		return
	}
	now := h.Clock.Now()
	deviceCode := secret.Token()
	var userCode string
	for range 5 {
		userCode = newUserCode()
		err = h.Store.InsertDeviceCode(r.Context(), &store.DeviceCode{
			Hash: secret.Hash(deviceCode), UserCode: userCode, AppID: c.app.ID, Scopes: requested,
			Status: store.DevicePending, Interval: DeviceInterval, ExpiresAt: now.Add(DeviceTTL), CreatedAt: now,
		})
		if !errors.Is(err, store.ErrConflict) {
			break
		}
	}
	if err != nil {
		httpx.Error(w, r, h.Logger, err)
		return
	}
	h.Logger.InfoContext(r.Context(), "device authorization started", "application_id", c.app.ID)
	verify := strings.TrimRight(h.PublicURL, "/") + "/activate"
	httpx.JSON(w, http.StatusOK, wire.DeviceAuthorization{
		DeviceCode: deviceCode, UserCode: FormatUserCode(userCode), VerificationURI: verify,
		VerificationURIComplete: verify + "?user_code=" + url.QueryEscape(FormatUserCode(userCode)),
		ExpiresIn:               int64(DeviceTTL.Seconds()), Interval: DeviceInterval,
	})
}

// grantDevice is the device_code grant (RFC 8628 3.4, 3.5).
func (h *Handler) grantDevice(ctx context.Context, c *client, form url.Values) (*wire.TokenResponse, error) {
	dc := form.Get("device_code")
	if dc == "" {
		return nil, oauthErr(wire.OAuthInvalidRequest, "device_code is required")
	}
	if err := requireConfidential(c); err != nil {
		return nil, err
	}
	var approved *store.DeviceCode
	var grant uint64
	var answer error  // a poll answer that must not roll back the recorded poll time
	appID := c.app.ID // (the closure takes the id, not c: c stays on the token handler's stack)
	err := h.Store.WithTx(ctx, func(tx store.Store) error {
		d, err := tx.GetDeviceCode(ctx, secret.Hash(dc))
		if errors.Is(err, store.ErrNotFound) {
			return oauthErr(wire.OAuthInvalidGrant, "Invalid device code")
		}
		if err != nil {
			return err
		}
		now := h.Clock.Now()
		switch {
		case d.AppID != appID:
			return oauthErr(wire.OAuthInvalidGrant, "The device code was issued to another client")
		case d.Status == store.DeviceConsumed:
			return oauthErr(wire.OAuthInvalidGrant, "The device code was already used")
		case !now.Before(d.ExpiresAt):
			return oauthErr(wire.OAuthExpiredToken, "The device code expired")
		case d.Status == store.DeviceDenied:
			return oauthErr(wire.OAuthAccessDenied, "The user denied the request")
		case d.Status == store.DeviceApproved:
			d.Status = store.DeviceConsumed
			approved, grant = d, h.Accounts.IDs.Next()
			if err := token.NewGrant(ctx, tx, grant, now, d.AppID, d.UserID); err != nil {
				return err
			}
			if err := tx.UpdateDeviceCode(ctx, d, store.DeviceApproved); errors.Is(err, store.ErrConflict) {
				// Another poll, maybe on another node, consumed it first.
				return oauthErr(wire.OAuthInvalidGrant, "The device code was already used")
			} else if err != nil {
				return err
			}
			return nil
		}
		tooSoon := !d.LastPollAt.IsZero() && now.Sub(d.LastPollAt) < secondsDuration(d.Interval)
		d.LastPollAt = now
		e := oauthErr(wire.OAuthAuthorizationPending, "The user has not answered yet")
		if tooSoon {
			d.Interval += 5 // RFC 8628 3.5
			e = oauthErr(wire.OAuthSlowDown, "Polling too fast; wait the interval")
		}
		answer = e
		if err := tx.UpdateDeviceCode(ctx, d, store.DevicePending); errors.Is(err, store.ErrConflict) {
			// Answered since it was read: the next poll gets the answer.
			answer = oauthErr(wire.OAuthAuthorizationPending, "The user has not answered yet")
			return nil
		} else if err != nil {
			return err
		}
		return nil
	})
	if err == nil {
		err = answer
	}
	if err != nil {
		return nil, err
	}
	if err := h.checkUser(ctx, approved.UserID); err != nil {
		return nil, err
	}
	if err := h.mergeIfAsked(ctx, c.app, approved.UserID, form); err != nil {
		return nil, err
	}
	a, err := h.Accounts.Authorize(ctx, h.Store, c.app.ID, approved.UserID, approved.GrantedScopes, -1)
	if err != nil {
		return nil, err
	}
	return h.respond(ctx, a, token.Options{Refresh: true, Grant: grant}, "")
}

// activatePage serves GET /activate.
func (h *Handler) activatePage(w http.ResponseWriter, r *http.Request) {
	code := r.URL.Query().Get("user_code")
	if code == "" {
		writeHTML(w, http.StatusOK, askCodeTemplate, "")
		return
	}
	d, app, ok := h.tryUserCode(w, r, code)
	if !ok {
		return
	}
	h.renderActivate(w, r, d, app, http.StatusOK, h.sessionUser(r), "")
}

// tryUserCode finds the pending device request of a user code typed at r's address, within
// the throttle (RFC 8628 5.1). When it reports false it has answered: 429 with the wait while
// the address or the request is locked (the code is not looked up, so a lock gives nothing to
// guess against), else 400 for a code that is not valid, counted against the address.
func (h *Handler) tryUserCode(w http.ResponseWriter, r *http.Request, code string) (*store.DeviceCode, *store.Application, bool) {
	now := h.Clock.Now()
	if wait := h.Logins.locked([]string{codeKey(r)}, now); wait > 0 {
		h.Logger.InfoContext(r.Context(), "device code attempts throttled")
		retryAfter(w, wait)
		writeHTML(w, http.StatusTooManyRequests, askCodeTemplate, codeLockedText(wait))
		return nil, nil, false
	}
	d, app, ok := h.pendingDevice(r.Context(), code)
	if !ok {
		h.Logins.failed([]string{codeKey(r)}, now)
		writeHTML(w, http.StatusBadRequest, askCodeTemplate, "That code is not valid or has expired.")
		return nil, nil, false
	}
	if wait := h.Logins.locked([]string{deviceKey(d.UserCode)}, now); wait > 0 {
		h.Logger.InfoContext(r.Context(), "device request throttled", "application_id", app.ID)
		retryAfter(w, wait)
		writeHTML(w, http.StatusTooManyRequests, askCodeTemplate, lockedText(wait))
		return nil, nil, false
	}
	return d, app, true
}

func (h *Handler) renderActivate(w http.ResponseWriter, r *http.Request, d *store.DeviceCode, app *store.Application, status int, user *store.User, errText string) {
	req := &authzRequest{app: app, scopes: d.Scopes}
	lines, unavailable := req.scopeLines()
	data := consentData{Title: "Connect " + app.Name + " on your device", AppName: app.Name, Action: "/activate",
		Hidden: map[string]string{"user_code": FormatUserCode(d.UserCode)}, CSRF: h.csrfToken(w, r),
		Scopes: lines, Unavailable: unavailable, Error: errText}
	if user != nil {
		data.User = user.Username
	}
	writeHTML(w, status, consentTemplate, data)
}

// pendingDevice finds a pending, unexpired device request by user code.
func (h *Handler) pendingDevice(ctx context.Context, userCode string) (*store.DeviceCode, *store.Application, bool) {
	d, err := h.Store.GetDeviceCodeByUserCode(ctx, NormalizeUserCode(userCode))
	if err != nil || d.Status != store.DevicePending || !h.Clock.Now().Before(d.ExpiresAt) {
		return nil, nil, false
	}
	app, err := h.Store.GetApplication(ctx, d.AppID)
	if err != nil {
		return nil, nil, false
	}
	return d, app, true
}

// answerDevice records the user's answer on a still pending device request, re-reading it in the
// transaction so that a concurrent poll's bookkeeping is kept. The update is conditional on the
// request still pending: of two answers racing on two nodes, one is recorded.
func (h *Handler) answerDevice(ctx context.Context, seen *store.DeviceCode, status string, userID uint64, granted []string) error {
	return h.Store.WithTx(ctx, func(tx store.Store) error {
		d, err := tx.GetDeviceCode(ctx, seen.Hash)
		if err != nil {
			return err
		}
		if d.Status != store.DevicePending {
			return errors.New("oauth: the device request was answered already")
		}
		d.Status, d.UserID, d.GrantedScopes = status, userID, granted
		if err := tx.UpdateDeviceCode(ctx, d, store.DevicePending); errors.Is(err, store.ErrConflict) {
			return errors.New("oauth: the device request was answered already")
		} else if err != nil {
			return err
		}
		return nil
	})
}

// activateSubmit serves POST /activate.
func (h *Handler) activateSubmit(w http.ResponseWriter, r *http.Request) {
	form, ok := httpx.Form(r)
	if !ok {
		errorPage(w, http.StatusBadRequest, "The form could not be read.")
		return
	}
	d, app, ok := h.tryUserCode(w, r, form.Get("user_code"))
	if !ok {
		return
	}
	if !checkCSRF(r, form) {
		h.renderActivate(w, r, d, app, http.StatusForbidden, h.sessionUser(r), "The form expired. Please try again.")
		return
	}
	switch form.Get("action") {
	case "deny":
		if err := h.answerDevice(r.Context(), d, store.DeviceDenied, 0, nil); err != nil {
			errorPage(w, http.StatusInternalServerError, "The request could not be completed.")
			return
		}
		h.Logger.InfoContext(r.Context(), "device authorization denied", "application_id", app.ID)
		writeHTML(w, http.StatusOK, messageTemplate, message{Title: "Request denied", Text: "You denied " + app.Name + ". You can close this window."})
	case "approve":
		user, le, err := h.formUser(w, r, form, deviceKey(d.UserCode))
		if err != nil {
			errorPage(w, http.StatusInternalServerError, "The request could not be completed.")
			return
		}
		if le != nil {
			h.renderActivate(w, r, d, app, le.status, nil, le.text)
			return
		}
		accepted := form["grant_scope"]
		granted := scopes.Grant(d.Scopes, func(s string) bool { return slices.Contains(accepted, s) }, policy(app))
		if err := h.answerDevice(r.Context(), d, store.DeviceApproved, user.ID, granted); err != nil {
			errorPage(w, http.StatusInternalServerError, "The request could not be completed.")
			return
		}
		h.Logger.InfoContext(r.Context(), "device authorization approved", "application_id", app.ID, "user_id", user.ID)
		writeHTML(w, http.StatusOK, messageTemplate, message{Title: "Device connected", Text: app.Name + " is connected. You can close this window and return to your device."})
	default:
		h.renderActivate(w, r, d, app, http.StatusBadRequest, h.sessionUser(r), "Choose Approve or Deny.")
	}
}

func secondsDuration(n int) time.Duration { return time.Duration(n) * time.Second }
