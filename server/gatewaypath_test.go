package server_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"
	"github.com/stretchr/testify/require"

	"sdkpp/server"
	"sdkpp/server/servertest"
	gwire "sdkpp/wire/gateway"
)

// The gateway answers at /gateway and /gateway/, with the query client libraries send.
func TestGatewayPaths(t *testing.T) {
	e := servertest.Start(t)
	base := "ws" + strings.TrimPrefix(e.URL, "http") + server.GatewayPath
	for _, u := range []string{base, base + "/", base + "?v=10&encoding=json", base + "/?v=9&encoding=json"} {
		t.Run(strings.TrimPrefix(u, base), func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			ws, _, err := websocket.Dial(ctx, u, nil)
			require.NoError(t, err, "dial %s", u)
			defer func() { _ = ws.CloseNow() }()
			_, raw, err := ws.Read(ctx)
			require.NoError(t, err, "read Hello at %s", u)
			var p gwire.Payload
			require.NoError(t, json.Unmarshal(raw, &p), "Hello at %s: %s", u, raw)
			require.Equal(t, gwire.OpHello, p.Op, "first payload at %s: %s", u, raw)
		})
	}
}
