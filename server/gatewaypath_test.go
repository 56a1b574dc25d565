package server_test

import (
	"testing"

	"sdkpp/server/servertest"
)

// The gateway answers at /gateway and /gateway/, with the query client libraries send (v9 or v10).
func TestGatewayPaths(t *testing.T) {
	e := servertest.Start(t)
	for _, suffix := range []string{"", "/", "?v=10&encoding=json", "/?v=9&encoding=json"} {
		t.Run(suffix, func(t *testing.T) {
			dialGatewayAt(t, e, suffix).heartbeat()
		})
	}
}
