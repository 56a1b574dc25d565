// Package gateway is the service's WebSocket gateway (github.com/gobwas/ws): the realtime
// channel over which the service pushes events (dispatches) to the users' game clients, with the
// platform's payloads, opcodes and close codes (API v10, JSON encoding).
//
// A Hub serves connections (Hub.ServeHTTP, mounted by package server) and keeps their sessions.
// The rest of the service sends events with Hub.Dispatch, Hub.DispatchMany and Hub.DispatchApp,
// asks Hub.Online and Hub.Sessions, ends a user's sessions with Hub.EndSessions, and receives
// Presence Updates through Config.OnPresence. The hub authenticates with Config.Tokens and builds
// READY's user with Config.Users.
//
// # Connecting
//
// A client opens a WebSocket with GET on the mount point, optionally with
// ?v=10&encoding=json&compress=zlib-stream (v 9 speaks the same protocol). Another v is closed
// with 4012, another encoding or compress value with 4002. Any origin may connect: clients
// authenticate in band.
//
// With compress=zlib-stream, every message the hub sends (Hello first) is a binary frame that
// continues one zlib stream of the connection, each ending with a sync flush (00 00 ff ff).
// Without it, Identify's compress: true makes each later dispatch a binary frame holding a
// zlib stream of its own; other payloads stay text.
//
// # Payloads
//
// Every message is a JSON text frame {"op", "d", "s", "t"}; s and t are set on dispatches (op 0)
// only. The server first sends Hello:
//
//	{"op":10,"d":{"heartbeat_interval":41250},"s":null,"t":null}
//
// The client heartbeats every heartbeat_interval with its last received sequence number (or
// null) and gets an ACK:
//
//	{"op":1,"d":3}
//	{"op":11,"d":null,"s":null,"t":null}
//
// A user identifies with an OAuth2 access token (with or without "Bearer "). The token must
// carry gateway.connect, directly or through sdk.social_layer or sdk.social_layer_presence:
//
//	{"op":2,"d":{"token":"<access token>","properties":{"os":"linux","browser":"sdkpp","device":"sdkpp"},
//	 "intents":0,"capabilities":32768,"presence":{"status":"online","activities":[]}}}
//
// intents is required (bits of gwire.KnownIntents); shard, when given, is [id, count]; presence,
// when given, goes to Config.OnPresence after READY. The server answers with READY, sequence
// number 1 of the new session:
//
//	{"op":0,"d":{"v":10,"user":{"id":"1234","username":"alice",...},"guilds":[],
//	 "session_id":"9f0c...(32 hex)","resume_gateway_url":"ws://127.0.0.1:7710/gateway",
//	 "application":{"id":"5678"}},"s":1,"t":"READY"}
//
// Each later dispatch of the session takes the next sequence number (s is strictly increasing
// by 1 per session). Presence Update (op 3) takes an object, {"op":3,"d":{...}}; the hub checks
// only that d is a JSON object and hands it to Config.OnPresence.
//
// # Bots
//
// An application's bot identifies with its bot token ("Bot " optional; a bare token that is no
// access token is tried as a bot token). READY's user is the bot, its guilds (Config.Guilds, of
// the Identify's shard) are listed as {id, unavailable: true}, and a GUILD_CREATE follows for
// each (with the GUILDS intent). Each bot Identify counts against Config.SessionStarts per
// Config.SessionStartWindow of its application (Hub.SessionStartLimit, for GET /gateway/bot);
// past it, Identify gets Invalid Session. So does an Identify of a rate-limit bucket (shard id
// modulo the application's max_concurrency, Config.MaxConcurrency) that already identified in
// the last Config.IdentifyWindow (5 s); both counts are the shared counters, so they hold across
// the nodes of a cluster. Guild events reach bot sessions by intent
// (Hub.DispatchBots). A bot session may send Request Guild Members (op 8, served by
// Config.Members): the answer is GUILD_MEMBERS_CHUNK dispatches of at most 1000 members; a
// request for all members (query "", limit 0) of a guild more than once per
// Config.MembersRateWindow (30 s) per bot gets a RATE_LIMITED dispatch instead (rule GW-2).
//
// # API requests (sdkpp extension)
//
// With Config.Requests set, an identified connection may send API requests (op 100, which the
// platform does not have), served by that handler with the session's token, so they get the
// API's checks, errors and rate limits:
//
//	{"op":100,"d":{"nonce":"4f1c...","method":"POST","path":"/lobbies/12/messages","body":{"content":"gg"}}}
//
// The answer is a dispatch to the session, with its sequence number:
//
//	{"op":0,"d":{"nonce":"4f1c...","status":200,"body":{...}},"s":7,"t":"SDKPP_REQUEST_RESULT"}
//
// A connection's requests are served one after another on its reader, in order. The SDK sends
// lobby messages this way (with an idempotency nonce), and repeats over HTTP what had no answer
// when a connection broke.
//
// # Voice signaling
//
// With Config.Voice set (READY's sdkpp_features then lists "voice"), an identified connection
// may send Voice State Update (op 4, d a wire/voice StateUpdate) and Voice Keys (op 101, an
// sdkpp extension, d a wire/voice Keys, up to voice.MaxKeysPayloadBytes). The hub decodes and
// checks them (a malformed one closes with 4002) and hands them to Config.Voice with the
// session; the answers are dispatches to sessions (Hub.DispatchSession): VOICE_STATE_UPDATE,
// VOICE_SERVER_UPDATE, SDKPP_VOICE_KEYS, and SDKPP_VOICE_ERROR for a refusal (package
// wire/voice lists its codes). An op 4 with a guild_id is the platform's Update Voice State for
// a guild's voice channel (the service's package guildvoice). A call belongs to a connection:
// when the connection ends, or its session is resumed on another one, the hub tells
// Config.Voice, and the session leaves its call and its guild voice channels.
// Both ops count against the rate limit.
//
// # Channel info
//
// With Config.ChannelInfo set, an identified connection may send Request Channel Info (op 43, d
// {guild_id, fields}, fields among "status" and "voice_start_time"; rule GW-3). A malformed one
// closes with 4002; the answer is a CHANNEL_INFO dispatch to the session, and a request the
// service refuses (a guild the user is not in) gets none. It counts against the rate limit.
//
// # Resuming
//
// When a connection drops, its session waits Config.ResumeWindow (default 2 minutes) for a gwire.Resume
// on a new connection (to resume_gateway_url), and keeps collecting dispatches meanwhile. The
// client sends its token, the session id and the last sequence number it received:
//
//	{"op":6,"d":{"token":"<access token>","session_id":"9f0c...","seq":2}}
//
// The server replays every dispatch after seq that the session holds, in order and with its
// original s, then dispatches RESUMED with the next sequence number:
//
//	{"op":0,"d":{...},"s":3,"t":"LOBBY_MESSAGE_CREATE"} ... {"op":0,"d":{},"s":6,"t":"RESUMED"}
//
// An unknown or expired session, one of another user or application, or a seq older than the
// replay buffer (the last Config.ReplayLimit dispatches, default 1000) gets Invalid Session, and
// the connection stays open for a new Identify:
//
//	{"op":9,"d":false,"s":null,"t":null}
//
// A seq the session never reached closes with 4007. Resuming a session that is still attached
// to another connection moves it: the old connection is closed with 4000. A session ends at once
// (it cannot be resumed) when the client closes with 1000 or 1001, when the server closes with a
// final code, or on Hub.EndSessions; any other end of a connection (a dropped TCP connection,
// any other close code from either side) leaves it resumable.
//
// # Limits
//
//   - Client payloads: at most Config.MaxPayloadBytes (default 4096 bytes, the platform's limit);
//     a larger one, a binary frame, malformed JSON or a field of the wrong type closes with 4002.
//     Op 100 may be up to Config.MaxRequestBytes (64 KiB), op 101 up to voice.MaxKeysPayloadBytes
//     (24 KiB). A payload may come in fragments
//     (the limit counts the whole message; a frame that announces more is refused from its
//     header); it must be UTF-8 text, else the connection is closed with 1007.
//   - Rate: at most Config.RateLimit payloads (default 120, every op but 100 counts) per
//     Config.RateWindow (60 s) per connection; the next one closes with 4008.
//   - Heartbeat: a connection that sends no heartbeat within 1.5 heartbeat intervals (from the
//     gwire.Hello, then from each heartbeat) is closed with 4009.
//   - Replay: Config.ReplayLimit dispatches per session. A connected client that falls further
//     behind than that is closed with 4000.
//
// Writes: a dispatch to at most 8 connections is written by the goroutine that dispatches it,
// without waiting for the socket (what the socket does not take goes to the connection's loop);
// one to more connections wakes their loops. A dispatch to a connection that is serving one of
// its own op 100 requests leaves with that request's answer. Under load (more than 50,000
// dispatches a second across the hub) a connection writes at most once every 10 ms, each write
// carrying everything that came meanwhile; a quieter hub writes each dispatch at once.
//
// Time limits (heartbeat, resume window, rate window) are read from Config.Clock, so tests move
// them with a fake clock; writes (Config.WriteTimeout) and close handshakes (2 s, then the TCP
// connection is cut) are bounded in real time.
//
// # Close codes
//
//	4000 unknown error: an internal failure (token or user lookup), a session resumed elsewhere,
//	     or a client too far behind; reconnect and resume
//	4001 unknown opcode: anything but ops 1, 2, 3 and 6 from a client (and 4 and 101 with
//	     Config.Voice, 100 with Config.Requests, 8 from a bot with Config.Members)
//	4002 decode error: see Limits; also unsupported encoding or compression
//	4003 not authenticated: Presence Update or a voice op before gwire.Identify (Heartbeat is
//	     allowed before it)
//	4004 authentication failed (final): bad, expired or revoked token, a user token without
//	     the gateway scope, or Hub.EndSessions
//	4005 already authenticated: a second gwire.Identify, or a gwire.Resume after gwire.Identify
//	4007 invalid seq: gwire.Resume with a negative seq or one the session never reached
//	4008 rate limited
//	4009 session timed out: no heartbeat in time
//	4010 invalid shard (final): shard not [id, count] with 0 <= id < count
//	4011 sharding required (final): never sent; user sessions need no sharding
//	4012 invalid API version (final): ?v= other than 10
//	4013 invalid intents (final): intents missing, negative, or with undefined bits
//	4014 disallowed intents (final): refused by Config.AllowIntents, on gwire.Identify or on a
//	     gwire.Resume (which then leaves no detached session behind)
//	1012 service restart: after Reconnect (op 7) when the hub closes
//	1002 protocol error: a frame that breaks RFC 6455 (unmasked, reserved bits or opcodes, a
//	     fragmented or long control frame, a continuation out of place, a malformed close frame)
//	1007 invalid frame payload data: a text message that is not UTF-8
//
// # Frames
//
// The hub speaks RFC 6455 through github.com/gobwas/ws (the handshake, frame headers, masks
// and close bodies), without extensions or subprotocols. It answers a ping with a pong of its
// payload and ignores pongs; it answers the client's close frame with one that echoes the code
// and then closes the TCP connection. When the hub closes, it sends its close frame, sends
// nothing more, drops what the client sends until the client's close frame, and then closes
// the TCP connection, or cuts it when that frame does not come within 2 s. Dispatches are
// written as whole text frames (binary ones when compressed) by the hub itself (see Writes),
// several in one system call when several wait.
//
// # Goroutines
//
// Each connection runs on its ServeHTTP goroutine (its loop), plus one reader goroutine it owns
// and waits for. The loop does every write that may wait for the client; a dispatcher writing to
// a few connections itself (see Writes above) only writes what their sockets take at once, so
// dispatch never blocks on a client: it appends to the session's replay buffer and writes or
// wakes the connection. Hub.Close waits for all of them.
package gateway
