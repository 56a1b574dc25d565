package oauth

import (
	"errors"
	"net/http"
	"net/url"

	"sdkpp/server/httpx"
	"sdkpp/server/invites"
	"sdkpp/server/store"
	"sdkpp/wire"
)

// invitePath is the web path of an invite code; the SDK's JoinLinkedLobbyGuild answers with
// <web base>/invite/<code>.
func invitePath(code string) string { return "/invite/" + url.PathEscape(code) }

// invitePage serves GET /invite/{code}: the guild, the inviter and a form to join, with the
// login form when the browser has no session or its user is not the one the invite was made for.
func (h *Handler) invitePage(w http.ResponseWriter, r *http.Request) {
	inv, err := h.Invites.LookupInvite(r.Context(), r.PathValue("code"))
	if err != nil {
		h.inviteError(w, r, err)
		return
	}
	user, errText := h.sessionUser(r), ""
	if user != nil {
		if ok, err := inv.For(r.Context(), user.ID); err != nil {
			h.inviteError(w, r, err)
			return
		} else if !ok {
			user, errText = nil, notInvitee
		}
	}
	h.renderInvite(w, r, inv, http.StatusOK, user, errText)
}

// notInvitee is the page's text for a user the invite was not made for (rule LOB-5).
const notInvitee = "This invite was made for another account. Log in with that account to join."

// inviteSubmit serves POST /invite/{code}: it checks the CSRF token; then it declines (action
// deny: nothing changes), or signs in when the form carries a username and password (else uses
// the session) and joins the guild through invites.Service.AcceptInvite, the API's code path.
func (h *Handler) inviteSubmit(w http.ResponseWriter, r *http.Request) {
	form, ok := httpx.Form(r)
	if !ok {
		errorPage(w, http.StatusBadRequest, "The form could not be read.")
		return
	}
	inv, err := h.Invites.LookupInvite(r.Context(), r.PathValue("code"))
	if err != nil {
		h.inviteError(w, r, err)
		return
	}
	if !checkCSRF(r, form) {
		h.renderInvite(w, r, inv, http.StatusForbidden, h.sessionUser(r), "The form expired. Please try again.")
		return
	}
	if form.Get("action") == "deny" { // nothing changes: the invite stays valid until it expires
		writeHTML(w, http.StatusOK, messageTemplate, message{Title: "Invite declined",
			Text: "You did not join " + inv.Guild.Name + ". You can close this window and return to the game."})
		return
	}
	user, le, err := h.formUser(w, r, form)
	if err != nil {
		h.inviteError(w, r, err)
		return
	}
	if le != nil {
		h.renderInvite(w, r, inv, le.status, nil, le.text)
		return
	}
	if ok, err := inv.For(r.Context(), user.ID); err != nil {
		h.inviteError(w, r, err)
		return
	} else if !ok {
		h.Logger.InfoContext(r.Context(), "invite refused: made for another user", "user_id", user.ID)
		h.renderInvite(w, r, inv, http.StatusForbidden, nil, notInvitee)
		return
	}
	joined, err := h.Invites.AcceptInvite(r.Context(), inv.Code, user.ID)
	if err != nil {
		h.inviteError(w, r, err)
		return
	}
	h.Logger.InfoContext(r.Context(), "guild joined by invite page", "guild_id", uint64(joined.Guild.ID), "user_id", user.ID)
	writeHTML(w, http.StatusOK, messageTemplate, message{Title: "You joined " + joined.Guild.Name,
		Text: "You are a member of " + joined.Guild.Name + " now. You can close this window and return to the game."})
}

func (h *Handler) renderInvite(w http.ResponseWriter, r *http.Request, inv *invites.Invite, status int, user *store.User, errText string) {
	details := []string{"You are invited to #" + inv.Channel.Name + " of " + inv.Guild.Name + "."}
	if inv.Inviter != nil {
		name := inv.Inviter.Username
		if inv.Inviter.GlobalName != nil {
			name = *inv.Inviter.GlobalName
		}
		details[0] = name + " invited you to #" + inv.Channel.Name + " of " + inv.Guild.Name + "."
	}
	data := consentData{Title: "Join " + inv.Guild.Name, Details: details, Submit: "Join " + inv.Guild.Name,
		Decline: "No thanks", Action: invitePath(inv.Code), CSRF: h.csrfToken(w, r), Error: errText}
	if user != nil {
		data.User = user.Username
	}
	writeHTML(w, status, consentTemplate, data)
}

// inviteError answers a failed invite lookup or join: an unknown, used-up or expired code is a
// 404 page, another platform error its own 4xx page, a store failure a logged 500 page.
func (h *Handler) inviteError(w http.ResponseWriter, r *http.Request, err error) {
	var ae *wire.APIError
	switch {
	case errors.As(err, &ae) && ae.Code == wire.CodeUnknownInvite:
		writeHTML(w, http.StatusNotFound, messageTemplate, message{Title: "Invite not valid", Error: true,
			Text: "This invite is unknown, has expired or was used already. Ask the game for a new one."})
	case errors.As(err, &ae) && ae.Status >= 400 && ae.Status < 500:
		writeHTML(w, ae.Status, messageTemplate, message{Title: "Cannot join", Error: true,
			Text: "This account cannot join the guild: " + ae.Message + "."})
	default:
		h.Logger.ErrorContext(r.Context(), "invite page failed", "err", err)
		errorPage(w, http.StatusInternalServerError, "The request could not be completed.")
	}
}
