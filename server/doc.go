// Package server is the sdkpp platform service: the OAuth2 provider and consent page, the HTTP API
// for accounts and tokens, provisional accounts, and outgoing webhooks, on an embedded SQLite store.
// cmd/sdkpp-server runs it; tests start it in process (see package servertest).
//
// # Packages
//
//	server/clock      injectable clock (real, offset, frozen) that every expiry and backoff reads
//	server/snowflake  ids
//	server/store      storage interface and its SQLite implementation (migrations at start)
//	server/secret     random secrets, their hashes, password hashing
//	wire, wire/gateway (top level) the protocol shared with the SDK: JSON shapes, errors, gateway
//	server/httpx      JSON responses, body decoding, request logging without secrets
//	server/scopes     scope names, descriptions, expansion (SC-3), partial grants (SC-4), AU-2
//	server/token      bearer tokens: issue, look up, Bearer and Bot authentication (AU-8)
//	server/oidc       OIDC issuer validation and ID token verification (AU-9); the service's own
//	                  ID tokens, discovery and keys
//	server/extauth    external credential verifiers by external_auth_type (AU-5)
//	server/accounts   account state changes: authorizations, revocation, merge, unmerge, bans
//	                  (AU-4, AU-7, ST-1, ST-2, WH-1)
//	server/webhook    signed webhook deliveries, queued in the store, retried with backoff
//	server/oauth      authorize + consent page, token, device, revoke (form fields documented there)
//	server/partner    provisional accounts, child tokens, unmerge, OIDC configuration
//	server/users      GET /users/@me, provisional display name, connections (CON-1), primary
//	                  guild tags (USR-2, LIM-5)
//	server/apps       the application object (APP-1), privileged intents and their review
//	                  threshold (LIM-4), SKU subscriptions (ST-3)
//	server/voicestatus voice channel statuses (VCS-1, GW-4), their audit log (AUD-1), channel
//	                  info (GW-3)
//	server/gateway    the WebSocket gateway: sessions, heartbeats, resume with replay, dispatch
//	server/lobbies    lobbies, their members and messages, moderation metadata
//	server/voice      voice calls of lobbies: signaling over the gateway (wire/voice)
//	server/guildvoice who is in guilds' voice channels: VOICE_STATE_UPDATE, voice_start_time
//	                  (GW-3, GW-4)
//	server/relay      the UDP media relay of voice calls (recvmmsg/sendmmsg batches on Linux)
//	server/metrics    Prometheus metrics of every part on a listener of its own, and a Grafana
//	                  dashboard of them
//	server/console    the operator console at /console: operators and their roles, players, bans,
//	                  lobbies, webhook deliveries and their retry, nodes, the audit log
//	server/loginthrottle sign-in throttling of the consent, device and invite pages and the console
//	server/admin      dev-only admin endpoints (ban, webhook URL, clock, dev external tokens)
//	server/devseed    dev seed data and test helpers that create apps and users
//	server/browser    drives the consent and device pages like a browser (tests, sdkpp-browser)
//	server/servertest starts a dev server for tests
//
// # URLs
//
// Web pages are at the service root: /oauth2/authorize and /activate (package oauth), /console
// (package console), /healthz,
// /.well-known/openid-configuration. The HTTP API is under /api/v10 (also /api): see packages
// oauth, partner, users, apps and admin for each route's request and response. Every path may
// also be given with the /.proxy prefix of activities (rule VER-5).
//
// Errors follow the platform: {"code": 50035, "message": "Invalid Form Body", "errors":
// {"<field>": {"_errors": [{"code", "message"}]}}} for validation; {"code", "message"} otherwise
// (401 {"code": 0, "message": "401: Unauthorized"}, 404 {"code": 0, "message": "404: Not Found"},
// 50109 for invalid JSON, 530010/530014/530016/530017 for merges); OAuth endpoints answer
// {"error", "error_description"} with HTTP 400 (401 for invalid_client). Bad input never gets a
// 5xx.
//
// # Dev mode
//
// With Config.Dev (flag -dev) the service seeds, once per data directory, the applications
// "sdkpp Demo" (public client, not approved for identify.premium), "sdkpp Demo Companion" (its
// child, same publisher) and "sdkpp Premium Partner" (approved for identify.premium), the users
// alice (premium_type 2), bob (0) and carol (1), and an admin token; it enables the /dev admin
// endpoints (package admin) and dev verifiers for the provider external auth types (package
// extauth). It writes the credentials to Config.DevCredentialsFile (flag -dev-credentials), mode
// 0600, as:
//
//	{
//	  "api_base": "http://127.0.0.1:7710/api/v10",
//	  "web_base": "http://127.0.0.1:7710",
//	  "admin_token": "...",
//	  "applications": [
//	    {"id": "1234...", "name": "sdkpp Demo", "client_secret": "...", "bot_token": "...",
//	     "bot_user_id": "...", "public_key": "<hex Ed25519 webhook key>",
//	     "redirect_uris": ["http://127.0.0.1/authorize/callback", "sdkpp-<id>:/authorize/callback",
//	                       "sdkppdemo:/authorize/callback"],
//	     "parent_application_id": null, "public_client": true, "premium_approved": false,
//	     "webhook_url": ""},
//	    {"id": "...", "name": "sdkpp Demo Companion", ..., "parent_application_id": "1234..."},
//	    {"id": "...", "name": "sdkpp Premium Partner", ..., "premium_approved": true}
//	  ],
//	  "users": [{"id": "...", "username": "alice", "password": "...", "premium_type": 2}, ...]
//	}
//
// Ids are snowflakes written as strings. The first application is the main one; Config.WebhookURL
// (flag -webhook-url) sets its webhook URL.
//
// # Webhooks
//
// APPLICATION_DEAUTHORIZED is queued when a user's authorization is revoked, an account is
// unmerged, or a user is banned (rule WH-1), and delivered to the application's webhook URL signed
// with Ed25519 (headers X-Signature-Ed25519 and X-Signature-Timestamp over timestamp+body; see
// package webhook), retried with exponential backoff and kept across restarts.
//
// # Logs
//
// Logs are structured (log/slog). No token, code, verifier, client secret, password, user code or
// query string is logged at any level; requests are logged as method, path and status.
package server
