// Package server is the sdkpp platform service: the OAuth2 provider and consent page, the HTTP API
// for accounts and tokens, provisional accounts, and outgoing webhooks, on an embedded SQLite store.
// cmd/sdkpp-server runs it; tests start it in process (see package servertest).
//
// # Packages
//
// Foundations:
//
//	internal/clock       (top level) the injectable clock every expiry, backoff and dated rule reads
//	server/snowflake     ids
//	server/store         storage: one implementation on SQLite and PostgreSQL, migrations per dialect
//	server/secret        random secrets, their hashes, password hashing
//	server/httpx         JSON responses, request parsing (ids, limits, fields, multipart), the JSON
//	                     404/405 fallbacks, request logging without secrets
//	server/ratelimit     the HTTP API's rate limits, per route and caller
//	wire, wire/gateway   (top level) the protocol shared with the SDK: JSON shapes, errors, gateway
//
// Accounts and authorization:
//
//	server/scopes        scope names, descriptions, expansion (SC-3), partial grants (SC-4), AU-2
//	server/token         bearer tokens: issue, look up, Bearer and Bot authentication (AU-8)
//	server/oidc          OIDC issuer validation and ID token verification (AU-9); the service's own
//	                     ID tokens, discovery and keys
//	server/extauth       external credential verifiers by external_auth_type (AU-5)
//	server/accounts      account state changes: authorizations, revocation, merge, unmerge, bans
//	                     (AU-4, AU-7, ST-1, ST-2, WH-1)
//	server/oauth         authorize + consent page, token, device, revoke, the invite page
//	server/partner       provisional accounts, child tokens, unmerge, OIDC configuration
//	server/webhook       signed webhook deliveries, queued in the store, retried with backoff
//
// Resources of the API (one resource group of the platform's API reference each):
//
//	server/users         GET /users/@me, provisional display name, connections (CON-1), primary
//	                     guild tags (USR-2, LIM-5)
//	server/apps          the application object (APP-1), privileged intents and their review
//	                     threshold (LIM-4), SKU subscriptions (ST-3)
//	server/relationships friends, friend requests and blocks
//	server/presence      who is online and what they play; activity invites
//	server/dms           game direct messages and their channels
//	server/lobbies       lobbies, their members and messages, moderation metadata
//	server/guilds        guilds, roles, members, prune (GLD-2), sharding (GLD-1), bots' READY guilds
//	server/channels      guild channels, Modify Channel (slowmode settings), lobby linking checks
//	server/messages      guild channel messages, attachments, replies and forwards, pins, search
//	server/invites       guild invites, their target users and jobs, accepting an invite
//	server/expressions   guild emoji and scheduled events (VER-1, ERR-1)
//	server/guildaccess   what the guild packages share: callers, permissions, objects, bot events
//	server/interactions  application commands, interactions, responses, follow-ups and modals
//	server/voicestatus   voice channel statuses (VCS-1, GW-4), their audit log (AUD-1), channel
//	                     info (GW-3)
//	server/search        the background index of guild messages for Search Guild Messages (GLD-3)
//
// Realtime:
//
//	server/gateway       the WebSocket gateway: sessions, heartbeats, resume with replay, dispatch
//	server/gateway/internal/wsframe  the gateway's WebSocket framing (RFC 6455): the upgrade, the
//	                     server's frames written in batches, compressed or not; the client's read
//	                     and checked
//	server/gateway/internal/busmsg   the messages a node's gateway exchanges with the other nodes
//	                     over the bus: dispatches with their filters, session, end and node-down
//	                     notes (their JSON is fixed: nodes of different versions read each other)
//	server/gateway/internal/replay   a gateway session's replay buffer and sequence numbers
//	server/gateway/internal/payload  the JSON predicates of gateway clients' payloads
//	server/gateway/internal/pace     the gateway's write pacing under load: the hub's dispatch rate
//	server/gateway/internal/nonblock a write to a TCP socket that does not wait
//	server/voice         voice calls of lobbies: signaling over the gateway (wire/voice)
//	server/guildvoice    who is in guilds' voice channels: VOICE_STATE_UPDATE, voice_start_time
//	                     (GW-3, GW-4)
//	server/relay         the UDP media relay of voice calls (recvmmsg/sendmmsg batches on Linux)
//	server/bus           a cluster's bus: every dispatch in one NATS JetStream stream, read by
//	                     every node in one order; session notes and the replay of resumes
//	server/order         the cluster-wide order lock: commits published in commit order, ids
//	                     increasing along it
//
// Operations:
//
//	server/metrics       Prometheus metrics of every part on a listener of its own, and a Grafana
//	                     dashboard of them
//	server/console       the operator console at /console: operators and their roles, players,
//	                     bans, lobbies, guilds, webhook deliveries and their retry, the cluster's
//	                     nodes, the audit log
//	server/periodic      the periodic jobs (node heartbeat, pruning) on the injected clock, each
//	                     run reported to the metrics
//	server/loginthrottle sign-in throttling of the consent, device and invite pages and the console
//
// Dev mode and tests:
//
//	server/admin         dev-only admin endpoints (ban, webhook URL, clock, dev external tokens)
//	server/devseed       dev seed data and test helpers that create apps and users
//	server/browser       drives the consent and device pages like a browser (tests, sdkpp-browser)
//	server/servertest    starts a dev server for tests; its log buffer
//	server/servertest/apicheck  requests to a handler and their checks, for handler tests
//	server/servertest/world     the store-backed test world of handler tests
//	server/servertest/guildtest the guild fixtures, requests and bot gateway client the guild
//	                     packages' tests and the root's flows share
//	server/servertest/clustertest  a cluster of nodes on a fresh PostgreSQL and an in-process NATS
//	server/bus/natstest  a NATS server with JetStream inside a test process
//
// This package only wires them together (routes, the gateway hub and its hooks, start and stop)
// and keeps the tests of that wiring and of flows across packages.
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
