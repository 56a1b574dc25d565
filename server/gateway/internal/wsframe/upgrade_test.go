package wsframe

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/gobwas/ws"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A request that does not ask for a WebSocket gets ErrUpgradeRequired, and nothing is
// answered: the caller answers.
func TestUpgradeRequired(t *testing.T) {
	for _, tt := range []struct {
		name   string
		header http.Header
	}{
		{"plain GET", http.Header{}},
		{"no Upgrade", http.Header{"Connection": {"upgrade"}}},
		{"no Connection", http.Header{"Upgrade": {"websocket"}}},
		{"another protocol", http.Header{"Connection": {"keep-alive, Upgrade"}, "Upgrade": {"h2c"}}},
		{"Connection lists no upgrade", http.Header{"Connection": {"keep-alive, upgraded"}, "Upgrade": {"websocket"}}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			r := httptest.NewRequest(http.MethodGet, "/", nil)
			r.Header = tt.header
			w := httptest.NewRecorder()
			c, rd, err := Upgrade(w, r, time.Second)
			require.ErrorIs(t, err, ErrUpgradeRequired)
			assert.Nil(t, c)
			assert.Nil(t, rd)
			assert.False(t, w.Flushed)
			assert.Empty(t, w.Header())
			assert.Zero(t, w.Body.Len())
		})
	}
}

// A WebSocket request is upgraded: the Reader reads the client's frames, including one sent
// right behind the handshake, and the Conn writes the server's.
func TestUpgrade(t *testing.T) {
	srv, done := echoServer(1, "echo ")
	defer srv.Close()

	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	d := ws.Dialer{Header: ws.HandshakeHeaderHTTP(http.Header{"Connection": {"keep-alive, Upgrade"}})}
	nc, _, _, err := d.Dial(ctx, "ws"+srv.URL[len("http"):])
	require.NoError(t, err)
	defer nc.Close()
	require.NoError(t, ws.WriteFrame(nc, ws.MaskFrame(ws.NewTextFrame([]byte("hi")))))
	require.NoError(t, <-done)
	f, err := ws.ReadFrame(nc)
	require.NoError(t, err)
	assert.Equal(t, ws.OpText, f.Header.OpCode)
	assert.Equal(t, "echo hi", string(f.Payload))
}

// A client may send its first frames right behind its handshake request, before the answer:
// they arrive in the HTTP server's buffer with the request, and the Reader reads them from there
// before it reads the connection.
func TestUpgradeFramesBehindTheRequest(t *testing.T) {
	srv, done := echoServer(2, "")
	defer srv.Close()

	nc, err := net.Dial("tcp", srv.Listener.Addr().String())
	require.NoError(t, err)
	defer nc.Close()
	var out bytes.Buffer
	out.WriteString("GET / HTTP/1.1\r\nHost: sdkpp.test\r\nConnection: Upgrade\r\nUpgrade: websocket\r\n" +
		"Sec-WebSocket-Version: 13\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n\r\n")
	for _, m := range []string{"early", "frames"} {
		require.NoError(t, ws.WriteFrame(&out, ws.MaskFrame(ws.NewTextFrame([]byte(m)))))
	}
	_, err = nc.Write(out.Bytes()) // the request and both frames in one write
	require.NoError(t, err)
	br := bufio.NewReader(nc)
	resp, err := http.ReadResponse(br, nil)
	require.NoError(t, err)
	require.Equal(t, http.StatusSwitchingProtocols, resp.StatusCode)
	select {
	case err := <-done:
		require.NoError(t, err)
	case <-time.After(10 * time.Second):
		require.Fail(t, "the server did not read the frames sent behind the request")
	}
	f, err := ws.ReadFrame(br)
	require.NoError(t, err)
	assert.Equal(t, "early frames", string(f.Payload))
}

// echoServer upgrades each request, reads n messages and answers them joined by spaces, after
// prefix, in one frame; done receives the handler's outcome.
func echoServer(n int, prefix string) (*httptest.Server, <-chan error) {
	done := make(chan error, 1)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		c, rd, err := Upgrade(w, r, time.Second)
		if err != nil {
			done <- err
			return
		}
		defer c.Close()
		var got []string
		for range n {
			data, stop, stopped := rd.ReadMessage(1024)
			if stopped {
				done <- fmt.Errorf("a message stopped the reader: %+v", stop)
				return
			}
			got = append(got, string(data))
		}
		done <- c.WriteFrame(ws.OpText, []byte(prefix+strings.Join(got, " ")), time.Second)
	}))
	return srv, done
}
