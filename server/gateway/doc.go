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
// docs/gateway.md describes the protocol a client speaks: connecting, the payloads, bots, API
// requests and voice signaling over the gateway, resuming, the limits and the close codes. The
// sections below are how the hub implements it.
//
// # Writes and time limits
//
// A dispatch to at most 8 connections is written by the goroutine that dispatches it,
// without waiting for the socket (what the socket does not take goes to the connection's loop);
// one to more connections wakes their loops. A dispatch to a connection that is serving one of
// its own op 100 requests leaves with that request's answer. Under load (more than 50,000
// dispatches a second across the hub, package pace) a connection writes at most once every
// 10 ms, each write carrying everything that came meanwhile; a quieter hub writes each dispatch
// at once.
//
// Time limits (heartbeat, resume window, rate window) are read from Config.Clock, so tests move
// them with a fake clock; writes (Config.WriteTimeout) and close handshakes (2 s, then the TCP
// connection is cut) are bounded in real time.
//
// # Frames
//
// The hub speaks RFC 6455 through github.com/gobwas/ws (the handshake, frame headers, masks
// and close bodies); package wsframe (internal) reads the client's frames and writes the
// server's, the dispatches as whole text frames (binary ones when compressed) built in place,
// several in one system call when several wait (see Writes).
//
// # Goroutines
//
// Each connection runs on its ServeHTTP goroutine (its loop), plus one reader goroutine it owns
// and waits for. The loop does every write that may wait for the client; a dispatcher writing to
// a few connections itself (see Writes above) only writes what their sockets take at once, so
// dispatch never blocks on a client: it appends to the session's replay buffer and writes or
// wakes the connection. Hub.Close waits for all of them.
package gateway
