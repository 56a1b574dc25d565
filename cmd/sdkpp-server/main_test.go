package main

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"sdkpp/wire"
)

type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

func TestServeDevModeAndShutDown(t *testing.T) {
	dir := t.TempDir()
	credsFile := filepath.Join(dir, "creds.json")
	t.Setenv("SDKPP_DEV", "1")
	t.Setenv("SDKPP_CLOCK", "fixed:2026-02-23T00:00:00Z")
	ctx, cancel := context.WithCancel(context.Background())
	var logs lockedBuffer
	done := make(chan error, 1)
	go func() {
		done <- run(ctx, []string{"-addr", "127.0.0.1:0", "-data-dir", filepath.Join(dir, "data"),
			"-dev-credentials", credsFile, "-log-format", "json", "-log-level", "debug"}, &logs)
	}()
	var creds wire.DevCredentials
	deadline := time.Now().Add(10 * time.Second)
	for {
		raw, err := os.ReadFile(credsFile)
		if err == nil && json.Unmarshal(raw, &creds) == nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("no credentials file; logs:\n%s", logs.String())
		}
		time.Sleep(20 * time.Millisecond)
	}
	if len(creds.Applications) != 3 || len(creds.Users) != 3 || !strings.HasSuffix(creds.APIBase, "/api/v10") || creds.AdminToken == "" {
		t.Fatalf("credentials %+v", creds)
	}
	if info, err := os.Stat(credsFile); err != nil || info.Mode().Perm() != 0o600 {
		t.Fatalf("credentials file mode: %v %v", info.Mode(), err)
	}
	res, err := http.Get(creds.WebBase + "/healthz")
	if err != nil || res.StatusCode != 200 {
		t.Fatalf("healthz: %v %v", res, err)
	}
	res.Body.Close()
	// The clock override is in effect and movable.
	req, _ := http.NewRequest(http.MethodGet, creds.APIBase+"/dev/clock", nil)
	req.Header.Set("Authorization", "Admin "+creds.AdminToken)
	res, err = http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	var now struct{ Now string }
	json.NewDecoder(res.Body).Decode(&now)
	res.Body.Close()
	if !strings.HasPrefix(now.Now, "2026-02-23T00:00:00") {
		t.Fatalf("clock override: %q", now.Now)
	}
	cancel()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("run: %v", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("no graceful shutdown")
	}
	if !strings.Contains(logs.String(), "sdkpp-server stopped") {
		t.Fatalf("logs:\n%s", logs.String())
	}
}

func TestBadFlags(t *testing.T) {
	for _, args := range [][]string{{"-clock", "bogus"}, {"-log-level", "loud"}, {"-log-format", "xml"}, {"extra"},
		{"-public-url", "ftp://x"}, {"-oidc-ca-file", "/nonexistent/ca.pem"}} {
		if err := run(context.Background(), append([]string{"-addr", "127.0.0.1:0"}, args...), &bytes.Buffer{}); err == nil {
			t.Errorf("%v accepted", args)
		}
	}
}
