package wsframe

import (
	"bufio"
	"errors"
	"fmt"
	"net/http"
	"time"

	"github.com/gobwas/ws"
	"golang.org/x/net/http/httpguts"
)

// ErrUpgradeRequired is Upgrade's error for a request that does not ask for a WebSocket
// (Connection: upgrade, Upgrade: websocket); nothing was answered, the caller answers it.
var ErrUpgradeRequired = errors.New("wsframe: not a WebSocket upgrade request")

// Upgrade takes over the connection of r, a GET request, for a WebSocket: it answers the
// handshake (within timeout), clears the HTTP server's deadlines on the connection (a WebSocket
// outlives them; Conn's writes set their own) and returns the Conn that writes the server's
// frames and the Reader of the client's, whose writes of answers take at most timeout. Any
// origin may connect (clients authenticate in band, never with cookies); no extension and no
// subprotocol is negotiated. After an error other than ErrUpgradeRequired the request has been
// answered, or its connection closed.
func Upgrade(w http.ResponseWriter, r *http.Request, timeout time.Duration) (*Conn, *Reader, error) {
	if !httpguts.HeaderValuesContainsToken(r.Header.Values("Connection"), "upgrade") || !httpguts.HeaderValuesContainsToken(r.Header.Values("Upgrade"), "websocket") {
		return nil, nil, ErrUpgradeRequired
	}
	up := ws.HTTPUpgrader{Timeout: timeout}
	nc, rw, _, err := up.Upgrade(r, w)
	if err != nil { // the upgrader answered the request on the taken-over connection
		if nc != nil {
			_ = nc.Close()
		}
		return nil, nil, fmt.Errorf("wsframe: upgrade: %w", err)
	}
	// The HTTP server's deadlines (its read timeout) may be set on the connection it hands over
	// (http.Hijacker). Reads have no deadline (the gateway's heartbeat bounds a silent client).
	if err := nc.SetDeadline(time.Time{}); err != nil {
		_ = nc.Close()
		return nil, nil, fmt.Errorf("wsframe: clear the connection's deadlines: %w", err)
	}
	c := &Conn{Conn: nc}
	// The HTTP server's buffered reader reads through the server's state of the connection, which
	// it keeps alive with its buffers. It is kept only while it holds the client's first frames
	// (a client that sent them before the handshake's answer); otherwise the Reader reads the
	// connection through a buffer of its own.
	br := rw.Reader
	if br.Buffered() == 0 {
		br = bufio.NewReaderSize(nc, readBuffer)
	}
	return c, NewReader(br, c, timeout), nil
}

// readBuffer is the size of a connection's read buffer: a client's messages are small (a
// request's body at most gwire.MaxRequestBytes, read past the buffer when larger).
const readBuffer = 4096
