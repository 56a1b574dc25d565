// Package oauth is the service's OAuth 2.0 provider: the consent page, the token endpoint with its
// grants, device authorization and its verification page, and revocation. It follows the
// platform's public wire shapes (RFC 6749, 7009, 7636, 8252, 8628).
//
// # Web pages (at the service root)
//
//	GET  /oauth2/authorize   consent page
//	POST /oauth2/authorize   login + approve or deny (form below)
//	GET  /activate           device verification: asks for the user code
//	GET  /activate?user_code=XXXX-XXXX   consent page of that device request
//	POST /activate           login + approve or deny a device request (form below)
//	GET  /invite/{code}      guild invite: the guild, the inviter and a Join form
//	POST /invite/{code}      login if needed + join the guild, or decline (form below)
//
// Authorize query parameters: response_type=code (required), client_id (required), redirect_uri
// (required), scope (required, space-separated), state, nonce (passed into the ID token when the
// scope has openid, rule AA-4), prompt ("consent", the default, or "none": answer at once from an
// existing session and authorization, else redirect with error=login_required or
// consent_required), integration_type (0 guild install, 1 user install; recorded with the
// authorization, rule AA-6), code_challenge and code_challenge_method (S256 only).
//
// An unknown client_id or a redirect_uri that is not allowed gives an HTML error page (never a
// redirect). Allowed redirect URIs: exactly a registered one; for public clients also any
// http://127.0.0.1:<port>/authorize/callback or http://[::1]:<port>/authorize/callback (RFC 8252
// loopback, any port) and sdkpp-<client_id>:/authorize/callback; a registered loopback URI matches
// on any port. Other errors redirect with error, error_description and state.
//
// # Consent form (POST /oauth2/authorize, application/x-www-form-urlencoded)
//
// The page's form carries every authorize parameter above as a hidden input of the same name, plus:
//
//	csrf_token   hidden; must equal the sdkpp_csrf cookie set by the GET (double-submit)
//	username     text input, only when no session cookie (sdkpp_session) is present
//	password     password input, likewise
//	grant_scope  one checkbox per additional scope (rule SC-4), checked by default; only the
//	             checked ones are granted. openid, identify and the sdk.* scopes are not optional.
//	action       the submit buttons: "approve" or "deny"
//
// Approve answers 302 to redirect_uri?code=<code>&state=<state>; deny answers 302 to
// redirect_uri?error=access_denied&error_description=...&state=<state>. A wrong username or
// password answers 401 with the page again (and an error message); a banned account 403; after
// MaxLoginFailures wrong passwords for a username (MaxAddressFailures from one address) within
// LoginLockout, 429 with the time to wait (throttle.go). A
// successful login sets the sdkpp_session cookie, so a later authorize shows "Signed in as".
//
// The activate form (POST /activate) has csrf_token, user_code, username, password, grant_scope and
// action the same way; it answers 200 with a page saying the device is connected (or denied).
// User codes are throttled (RFC 8628 5.1): after MaxCodeFailures unknown or expired codes from
// one address within LoginLockout, GET /activate?user_code= and POST /activate answer 429 with
// the wait on the page and in Retry-After, without looking the code up; a device request whose
// form took MaxLoginFailures wrong logins answers 429 the same way, from any address.
//
// The invite form (POST /invite/{code}) has csrf_token, username and password the same way and
// two buttons: action "approve" joins the guild through invites.Service.AcceptInvite, the code
// path of the API's POST /invites/{code}, and answers 200 with a "You joined <guild>" page;
// action "deny" (no login needed) answers 200 with an "Invite declined" page and leaves the
// invite as it was, usable until it expires. An
// unknown, used-up or expired code is a 404 page; a user the invite was not made for (a lobby
// channel invite belongs to one lobby member, rule LOB-5) gets 403 and the login form again;
// a missing or wrong csrf_token 403, a wrong password 401, a body that is not a form 400.
//
// # API (under /api/v10, also /api)
//
//	POST /oauth2/token                form-encoded only; a JSON body gets 400 invalid_request
//	POST /oauth2/token/revoke         form: token, token_type_hint, client_id[, client_secret]
//	POST /oauth2/device/authorize     form: client_id[, client_secret], scope
//
// Client authentication: client_id and client_secret form fields, or HTTP Basic. Public clients
// may omit the secret; a wrong secret is 401 invalid_client. Grants:
//
//   - authorization_code: code, redirect_uri (must equal the authorize request's), code_verifier
//     (required when the authorize request had a code_challenge; a wrong one is invalid_grant, rule
//     AA-5; one sent for a code issued without a challenge is invalid_grant too, RFC 9700 2.1.1).
//     A public client that sends no client_secret must have used PKCE. Codes are single-use
//     and expire after 10 minutes; a code redeemed again is invalid_grant and revokes the
//     tokens its first redemption issued (RFC 6749 4.1.2, grants below). Adding external_auth_type and external_auth_token merges that
//     provisional account into the user (rule AU-5); merge errors are JSON API errors 530010,
//     530014, 530016, 530017.
//   - refresh_token: refresh_token[, scope (a subset)]; rotates: the old refresh token dies. A
//     revoked or deleted one is invalid_grant (rule AU-6). A used one presented again is
//     invalid_grant and revokes its grant (RFC 9700 4.14.2).
//   - client_credentials: needs the client secret; a token for the application's bot user, no
//     refresh token. The token is signed (package token): no row is written per token; it
//     stays valid while the bot's authorization stands, and revoking it revokes that
//     authorization, so every token of the bot with it (as below).
//   - urn:ietf:params:oauth:grant-type:device_code: device_code; answers authorization_pending,
//     slow_down (polled faster than interval; interval grows by 5 s), expired_token (after 300 s),
//     access_denied, or the tokens. Merging works here as with authorization_code.
//
// Success: {"access_token", "token_type": "Bearer", "expires_in": 604800, "refresh_token",
// "scope", "id_token" (when the scope has openid)}. "scope" lists the granted scopes with the
// sdk.* scopes expanded (rule SC-3), sorted. Errors: HTTP 400 (401 for invalid_client)
// {"error", "error_description"}.
//
// Grants (package token): the tokens issued from one authorization code, device approval or
// provisional sign-in, with every rotation of their refresh tokens, form a grant. A replayed code
// or a reused refresh token revokes its grant: its access and refresh tokens stop working (REST
// 401, invalid_grant) and the gateway sessions they opened close with 4004 (OnGrantRevoked). The
// player's other grants of the game (another device) and the authorization itself stay.
//
// Revocation of any token of an authorization revokes the whole authorization: every access and
// refresh token of that user and application and every child token (rules AU-4, AU-7), and queues
// APPLICATION_DEAUTHORIZED (rules ST-2, WH-1). It answers 200 {} also for unknown tokens (RFC 7009).
package oauth
