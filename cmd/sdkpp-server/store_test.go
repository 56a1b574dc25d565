package main

import (
	"context"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"sdkpp/server/servertest"
	"sdkpp/server/store"
	"sdkpp/server/store/pgtest"
)

func TestMain(m *testing.M) { pgtest.Main(m) }

// -store postgres://... runs the service on PostgreSQL with -node-id; a second node with the
// same id is refused; the password of the store URL reaches neither a log line nor an error.
func TestStoreOnPostgres(t *testing.T) {
	const secret = "s3cret-Pa55word"
	u, err := url.Parse(pgtest.Database(t, "", nil))
	require.NoError(t, err)
	u.User = url.UserPassword(u.User.Username(), secret) // the tests' server trusts loopback: unused
	storeURL := u.String()

	ctx, cancel := context.WithCancel(context.Background())
	var logs servertest.LogBuffer
	done := make(chan error, 1)
	go func() {
		done <- run(ctx, []string{"-addr", "127.0.0.1:0", "-voice-addr", "127.0.0.1:0", "-store", storeURL,
			"-node-id", "3", "-log-format", "json", "-log-level", "debug"}, &logs)
	}()
	require.Eventually(t, func() bool {
		return strings.Contains(logs.String(), `"msg":"sdkpp-server listening"`)
	}, 20*time.Second, 20*time.Millisecond, "not listening; logs:\n%s", &logs)
	assert.Contains(t, logs.String(), `"store":"postgres","node_id":3`)

	// Another node with the same id on the same database is refused at start.
	var logs2 servertest.LogBuffer
	t.Setenv("SDKPP_STORE", storeURL)
	t.Setenv("SDKPP_NODE_ID", "3")
	err = run(context.Background(), []string{"-addr", "127.0.0.1:0", "-voice-addr", "127.0.0.1:0"}, &logs2)
	require.ErrorIs(t, err, store.ErrNodeIDTaken)
	assert.NotContains(t, err.Error(), secret)

	// A store that cannot be reached: the error names it without its password.
	bad := "postgres://sdkpp:" + secret + "@127.0.0.1:1/sdkpp?connect_timeout=2"
	err = run(context.Background(), []string{"-addr", "127.0.0.1:0", "-store", bad}, &logs2)
	require.Error(t, err)
	assert.NotContains(t, err.Error(), secret)
	assert.Contains(t, err.Error(), "127.0.0.1:1")
	err = run(context.Background(), []string{"-addr", "127.0.0.1:0", "-store", "mysql://root:" + secret + "@db/x"}, &logs2)
	require.Error(t, err)
	assert.NotContains(t, err.Error(), secret)

	cancel()
	select {
	case err := <-done:
		require.NoError(t, err)
	case <-time.After(20 * time.Second):
		require.FailNow(t, "no graceful shutdown")
	}
	assert.NotContains(t, logs.String(), secret)
	assert.NotContains(t, logs2.String(), secret)
}
