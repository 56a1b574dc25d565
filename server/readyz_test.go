package server_test

import (
	"net/http"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"sdkpp/server"
	"sdkpp/server/servertest"
)

// A node alone is ready with its store and no bus.
func TestReadyzOfANodeAlone(t *testing.T) {
	e := servertest.Start(t)
	var got server.Readiness
	r := do(t, "GET", e.URL+"/readyz", nil, nil)
	require.Equal(t, http.StatusOK, r.Status, "readyz: %s", r.Body)
	r.json(t, &got)
	assert.Equal(t, server.Readiness{Status: "ready", Store: "ok", Bus: "none"}, got)
}

// A bus connects nodes that share a PostgreSQL store: a node on SQLite with a bus is refused.
func TestBusNeedsPostgreSQL(t *testing.T) {
	_, err := server.New(server.Config{Addr: "127.0.0.1:0", Bus: "nats://127.0.0.1:1"})
	require.Error(t, err)
	assert.Contains(t, err.Error(), "PostgreSQL")
}
