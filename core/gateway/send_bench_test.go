package gateway

import (
	"context"
	"net/http"
	"strings"
	"testing"

	"github.com/coder/websocket"
	"github.com/stretchr/testify/require"
)

// BenchmarkLoneSend measures one send at a time (SendRaw of a lobby message's size, on loopback,
// to a server that reads on), over a holdConn and, as a baseline, with the library writing
// itself (a transport holdingClient cannot wrap): the write path a lone message takes, system
// call included.
func BenchmarkLoneSend(b *testing.B) {
	for _, tc := range []struct {
		name string
		http *http.Client
	}{
		{"holdConn", nil},
		{"library", &http.Client{Transport: roundTripper{http.DefaultTransport}}},
	} {
		b.Run(tc.name, func(b *testing.B) {
			srv := readyServer(func(ctx context.Context, ws *websocket.Conn) {
				for {
					if _, _, err := ws.Read(ctx); err != nil {
						return
					}
				}
			})
			defer srv.Close()
			c := readyBenchClient(b, srv.URL, tc.http, nil)
			defer c.Close()
			d := []byte(`{"nonce":"0123456789abcdef0123","method":"POST","path":"/lobbies/1234567890123456788/messages","body":{"content":"` + strings.Repeat("x", 400) + `"}}`)
			b.ReportAllocs()
			for b.Loop() {
				if err := c.SendRaw(context.Background(), 100, d); err != nil {
					require.NoError(b, err) // called only on failure: its bookkeeping is not timed
				}
			}
		})
	}
}
