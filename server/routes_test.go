package server_test

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"sdkpp/server"
	"sdkpp/server/servertest"
	gwire "sdkpp/wire/gateway"
)

// Requests no route takes get the platform's JSON 404, or 405 with the methods of the routes
// of that path in Allow; paths ServeMux cleans are redirected, as before.
func TestUnmatchedRoutes(t *testing.T) {
	e := servertest.Start(t)
	const (
		notFound   = `{"message":"404: Not Found","code":0}`
		notAllowed = `{"message":"405: Method Not Allowed","code":0}`
	)
	cases := []struct {
		method, path string
		status       int
		allow        string // the Allow header
		body         string // the JSON body ("" for a redirect)
		location     string // a redirect's Location
	}{
		{"GET", "/nothing-here", 404, "", notFound, ""},
		{"POST", "/healthz", 405, "GET, HEAD", notAllowed, ""},
		{"DELETE", "/", 405, "GET, HEAD", notAllowed, ""},
		{"PUT", "/gateway", 405, "GET, HEAD", notAllowed, ""},
		{"GET", "/api/v10/nothing-here", 404, "", notFound, ""},
		{"DELETE", "/api/v10/oauth2/token", 405, "POST", notAllowed, ""},
		{"DELETE", "/api/oauth2/token", 405, "POST", notAllowed, ""},
		{"GET", "/api/v10/users/@me/nothing", 404, "", notFound, ""},
		{"POST", "/api/v10/users/@me", 405, "GET, HEAD", notAllowed, ""},
		{"GET", "/api/v10/oauth2/../healthz", 307, "", "", "/api/v10/healthz"},
		{"GET", "/api/v10//users/@me", 307, "", "", "/api/v10/users/@me"},
		{"GET", "/x/../nothing-here", 307, "", "", "/nothing-here"},
		{"POST", "/a/./healthz?q=1", 307, "", "", "/a/healthz?q=1"},
		{"POST", "/x/../healthz", 307, "", "", "/healthz"},
	}
	for _, tc := range cases {
		t.Run(tc.method+" "+tc.path, func(t *testing.T) {
			r := do(t, tc.method, e.URL+tc.path, nil, nil)
			assert.Equal(t, tc.status, r.Status)
			assert.Equal(t, tc.allow, r.Header.Get("Allow"), "Allow")
			if tc.location != "" {
				assert.Equal(t, tc.location, r.Header.Get("Location"))
				return
			}
			assert.Equal(t, "application/json", r.Header.Get("Content-Type"))
			assert.JSONEq(t, tc.body, string(r.Body))
		})
	}
}

// A request whose body stalls is cut within the configured read timeout, and one whose header
// stalls within the header timeout: neither holds its connection. The gateway's WebSocket, upgraded
// from such a server, outlives both (its deadlines are cleared).
func TestStalledRequestsAreCut(t *testing.T) {
	const timeout = 200 * time.Millisecond
	e := servertest.Start(t, servertest.WithConfig(func(c *server.Config) {
		c.ReadHeaderTimeout, c.ReadTimeout = timeout, timeout
	}))
	u, err := url.Parse(e.URL)
	require.NoError(t, err)
	ws := dialGateway(t, e) // opened first: it lives through both cuts below
	for _, tc := range []struct{ name, request string }{
		{"body", "POST /api/v10/oauth2/token HTTP/1.1\r\nHost: " + u.Host +
			"\r\nContent-Type: application/x-www-form-urlencoded\r\nContent-Length: 100\r\n\r\ngrant_type="},
		{"header", "GET /healthz HTTP/1.1\r\nHost: " + u.Host + "\r\nX-Slow:"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			conn, err := net.Dial("tcp", u.Host)
			require.NoError(t, err)
			defer conn.Close()
			start := time.Now()
			_, err = io.WriteString(conn, tc.request)
			require.NoError(t, err)
			require.NoError(t, conn.SetReadDeadline(time.Now().Add(10*time.Second)))
			_, err = io.Copy(io.Discard, conn) // until the server closes the connection
			var ne net.Error
			require.False(t, errors.As(err, &ne) && ne.Timeout(), "the server held the connection for 10 s")
			assert.Less(t, time.Since(start), 5*time.Second)
		})
	}
	ws.heartbeat()
}

// gatewayConn is a bare gateway connection (it does not identify).
type gatewayConn struct {
	t  *testing.T
	ws *websocket.Conn
}

// dialGateway connects to the service's gateway and reads Hello.
func dialGateway(t *testing.T, e *servertest.Env) *gatewayConn {
	t.Helper()
	return dialGatewayAt(t, e, "")
}

// dialGatewayAt connects to the gateway's path followed by suffix (a slash, a query) and reads
// Hello.
func dialGatewayAt(t *testing.T, e *servertest.Env, suffix string) *gatewayConn {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	u := "ws" + strings.TrimPrefix(e.URL, "http") + server.GatewayPath + suffix
	ws, _, err := websocket.Dial(ctx, u, nil)
	require.NoError(t, err, "dial %s", u)
	t.Cleanup(func() { _ = ws.CloseNow() })
	c := &gatewayConn{t: t, ws: ws}
	c.expectOp(gwire.OpHello)
	return c
}

// expectOp reads the next payload and checks its op.
func (c *gatewayConn) expectOp(op int) {
	c.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	_, raw, err := c.ws.Read(ctx)
	require.NoError(c.t, err)
	var p gwire.Payload
	require.NoError(c.t, json.Unmarshal(raw, &p))
	require.Equal(c.t, op, p.Op, "payload %s", raw)
}

// heartbeat sends a heartbeat and reads its ACK.
func (c *gatewayConn) heartbeat() {
	c.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	require.NoError(c.t, c.ws.Write(ctx, websocket.MessageText, []byte(`{"op":1,"d":null}`)))
	c.expectOp(gwire.OpHeartbeatACK)
}
