// Package sharedtest_test runs several service nodes on one PostgreSQL (package pgtest) and
// checks that the state the nodes share holds for a caller whose requests reach all of them.
package sharedtest_test

import (
	"context"
	"net/http"
	"testing"

	"github.com/stretchr/testify/require"

	"sdkpp/internal/clock"
	"sdkpp/server"
	"sdkpp/server/servertest"
	"sdkpp/server/store"
	"sdkpp/server/store/pgtest"
)

func TestMain(m *testing.M) { pgtest.Main(m) }

// cluster starts n dev nodes (node ids 1..n) on one fresh PostgreSQL database, all on clk, each
// changed by change when it is not nil.
func cluster(t *testing.T, n int, clk clock.Controllable, change func(*server.Config)) []*servertest.Env {
	t.Helper()
	u := database(t)
	nodes := make([]*servertest.Env, n)
	for i := range nodes {
		nodes[i] = servertest.Start(t, servertest.WithClock(clk), servertest.WithConfig(func(c *server.Config) {
			c.Store, c.NodeID = u, i+1
			if change != nil {
				change(c)
			}
		}))
	}
	return nodes
}

// database returns the URL of a fresh migrated PostgreSQL database for t.
func database(t *testing.T) string {
	t.Helper()
	return pgtest.Database(t, "sdkpp_schema_"+store.PostgresSchemaID(), func(u string) error {
		s, err := store.OpenPostgres(context.Background(), u, store.PostgresOptions{})
		if err != nil {
			return err
		}
		return s.Close()
	})
}

// node is the option of a node with id on the database at u.
func node(u string, id int) servertest.Option {
	return servertest.WithConfig(func(c *server.Config) { c.Store, c.NodeID = u, id })
}

// get sends GET url with the header auth and returns the status.
func get(t *testing.T, url, auth string) int {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, url, nil)
	require.NoError(t, err)
	req.Header.Set("Authorization", auth)
	res, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	res.Body.Close()
	return res.StatusCode
}
