package main

import (
	"bytes"
	"context"
	"encoding/json"
	"io/fs"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"sdkpp/server/servertest"
	"sdkpp/wire"
)

func TestServeDevModeAndShutDown(t *testing.T) {
	dir := t.TempDir()
	credsFile := filepath.Join(dir, "creds.json")
	t.Setenv("SDKPP_DEV", "1")
	t.Setenv("SDKPP_CLOCK", "fixed:2026-02-23T00:00:00Z")
	ctx, cancel := context.WithCancel(context.Background())
	var logs servertest.LogBuffer
	done := make(chan error, 1)
	go func() {
		done <- run(ctx, []string{"-addr", "127.0.0.1:0", "-data-dir", filepath.Join(dir, "data"),
			"-dev-credentials", credsFile, "-log-format", "json", "-log-level", "debug",
			"-voice-addr", "127.0.0.1:0", "-voice-endpoint", "voice.example.test:3478"}, &logs)
	}()
	var creds wire.DevCredentials
	require.Eventually(t, func() bool {
		raw, err := os.ReadFile(credsFile)
		return err == nil && json.Unmarshal(raw, &creds) == nil
	}, 10*time.Second, 20*time.Millisecond, "no credentials file; logs:\n%s", &logs)
	require.Len(t, creds.Applications, 3, "credentials %+v", creds)
	require.Len(t, creds.Users, 3, "credentials %+v", creds)
	require.True(t, strings.HasSuffix(creds.APIBase, "/api/v10"), "credentials %+v", creds)
	require.NotEmpty(t, creds.AdminToken, "credentials %+v", creds)
	info, err := os.Stat(credsFile)
	require.NoError(t, err, "credentials file")
	require.Equal(t, fs.FileMode(0o600), info.Mode().Perm(), "credentials file mode: %v", info.Mode())
	res, err := http.Get(creds.WebBase + "/healthz")
	require.NoError(t, err, "healthz: %v", res)
	require.Equal(t, 200, res.StatusCode, "healthz: %v", res)
	res.Body.Close()
	// The clock override is in effect and movable.
	req, _ := http.NewRequest(http.MethodGet, creds.APIBase+"/dev/clock", nil)
	req.Header.Set("Authorization", "Admin "+creds.AdminToken)
	res, err = http.DefaultClient.Do(req)
	require.NoError(t, err)
	var now struct{ Now string }
	json.NewDecoder(res.Body).Decode(&now)
	res.Body.Close()
	require.True(t, strings.HasPrefix(now.Now, "2026-02-23T00:00:00"), "clock override: %q", now.Now)
	cancel()
	select {
	case err := <-done:
		require.NoError(t, err, "run")
	case <-time.After(10 * time.Second):
		require.FailNow(t, "no graceful shutdown")
	}
	require.Contains(t, logs.String(), "sdkpp-server stopped", "logs:\n%s", logs.String())
	// The relay listens where -voice-addr says, and calls are told the endpoint a studio gave.
	assert.Regexp(t, `"msg":"voice relay listening","addr":"127\.0\.0\.1:[1-9][0-9]*","endpoint":"voice\.example\.test:3478"`, logs.String())
}

func TestBadFlags(t *testing.T) {
	for _, args := range [][]string{{"-clock", "bogus"}, {"-log-level", "loud"}, {"-log-format", "xml"}, {"extra"},
		{"-public-url", "ftp://x"}, {"-oidc-ca-file", "/nonexistent/ca.pem"},
		{"-voice-addr", "nonsense"}, {"-voice-endpoint", ":3478"}, {"-voice-addr", "256.0.0.1:1"}} {
		assert.Error(t, run(context.Background(), append([]string{"-addr", "127.0.0.1:0"}, args...), &bytes.Buffer{}), "%v accepted", args)
	}
}
