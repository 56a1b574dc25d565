// Package wsframe is the gateway's WebSocket framing (RFC 6455, the server's side, through
// github.com/gobwas/ws): Upgrade takes over an HTTP request's connection; Conn writes the
// server's frames, batched and optionally compressed, with dispatches built in place from a
// Dispatch; Reader reads the client's frames into messages, answers its pings and its close
// frame, and says with a Close how a connection that breaks the protocol ends. The gateway
// negotiates no extension and no subprotocol.
package wsframe
