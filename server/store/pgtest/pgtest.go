// Package pgtest gives tests a PostgreSQL: the server named by SDKPP_TEST_POSTGRES (an admin
// connection URL), or else one it starts itself with the repository's build/scripts/pg.sh
// (Debian's postgresql package, its data under build/, on a free loopback port), and a fresh
// database per test, made from a migrated template.
//
// Where no PostgreSQL can be had, tests skip with the reason; with SDKPP_REQUIRE_POSTGRES=1
// (make test) they fail instead.
package pgtest

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"net"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"

	_ "github.com/jackc/pgx/v5/stdlib" // the "pgx" database/sql driver
)

// EnvURL names the admin connection URL of a PostgreSQL that tests use instead of starting one.
const EnvURL = "SDKPP_TEST_POSTGRES"

// EnvRequire, set to 1, makes tests fail rather than skip when no PostgreSQL can be had.
const EnvRequire = "SDKPP_REQUIRE_POSTGRES"

var (
	once    sync.Once
	admin   string // the admin URL; "" when unavailable
	why     error  // why unavailable
	dataDir string // the server this package started, "" when none
	seq     atomic.Int64
	inMain  bool // Main runs the tests: it will stop a server started for them
)

// Admin returns the admin URL of the tests' PostgreSQL, starting one on first use; it skips t
// (fails it under SDKPP_REQUIRE_POSTGRES=1) when there is none. It fails t when it would start a
// server for a test binary whose TestMain is not Main: nothing would stop that server.
func Admin(t testing.TB) string {
	t.Helper()
	if !inMain && os.Getenv(EnvURL) == "" {
		t.Fatalf("pgtest: the package's TestMain must be pgtest.Main (or call it), which stops the server started for its tests")
	}
	once.Do(start)
	if admin == "" {
		if os.Getenv(EnvRequire) == "1" {
			t.Fatalf("pgtest: PostgreSQL is required (%s=1) but unavailable: %v", EnvRequire, why)
		}
		t.Skipf("pgtest: no PostgreSQL (set %s to an admin URL, or install Debian's postgresql): %v", EnvURL, why)
	}
	return admin
}

// Main runs a package's tests and then stops the server this package started for them: call it
// as the package's TestMain.
func Main(m *testing.M) {
	inMain = true
	code := m.Run()
	Stop()
	os.Exit(code)
}

// Stop stops the server this package started, if any (Main calls it).
func Stop() {
	if dataDir == "" {
		return
	}
	script, err := script()
	if err == nil {
		out, err := exec.Command("bash", script, "stop", dataDir).CombinedOutput()
		if err != nil {
			fmt.Fprintf(os.Stderr, "pgtest: stop: %v: %s\n", err, out)
			return
		}
	}
	os.RemoveAll(dataDir)
}

func start() {
	if u := os.Getenv(EnvURL); u != "" {
		admin = u
		return
	}
	s, err := script()
	if err != nil {
		why = err
		return
	}
	dir, err := os.MkdirTemp(filepath.Join(filepath.Dir(filepath.Dir(filepath.Dir(s))), "build"), "pg-test-")
	if err != nil {
		why = err
		return
	}
	// The port is free when chosen and taken by the server seconds later (after initdb): another
	// process may take it meanwhile (a connection of a test running beside, whose own end it
	// becomes), and then the server cannot listen. A start that fails is tried again on another
	// port, as pg.sh run does; initdb's data is kept between tries.
	for try := 1; ; try++ {
		port, err := freePort()
		if err != nil {
			os.RemoveAll(dir)
			why = err
			return
		}
		out, err := exec.Command("bash", s, "start", dir, strconv.Itoa(port)).CombinedOutput()
		if err == nil {
			dataDir = dir
			admin = fmt.Sprintf("postgres://postgres@127.0.0.1:%d/postgres?sslmode=disable", port)
			return
		}
		if try == startTries {
			_ = exec.Command("bash", s, "stop", dir).Run() // best effort: what failed is reported
			os.RemoveAll(dir)
			why = fmt.Errorf("build/scripts/pg.sh start (%d tries): %v: %s", try, err, out)
			return
		}
	}
}

// startTries bounds the starts tried on fresh ports.
const startTries = 5

// script finds build/scripts/pg.sh above the working directory.
func script() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		p := filepath.Join(dir, "build", "scripts", "pg.sh")
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			if _, err := os.Stat(p); err != nil {
				return "", fmt.Errorf("no %s", p)
			}
			return p, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", errors.New("not inside the repository")
		}
		dir = parent
	}
}

func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

// withDatabase returns u naming database name instead.
func withDatabase(u, name string) string {
	p, err := url.Parse(u)
	if err != nil {
		panic(err)
	}
	p.Path = "/" + name
	return p.String()
}

// Database creates a fresh database for t, dropped when t ends, and returns its URL. When
// template is not "", the database is a copy of the database of that name, which prepare makes
// when the server has none (prepare gets its URL and must close every connection it opened).
// Test binaries share the server and its templates: a template's name must change with what
// prepare puts in it, and it is made and copied under an advisory lock, one binary at a time.
func Database(t testing.TB, template string, prepare func(url string) error) string {
	t.Helper()
	root := Admin(t)
	ctx := context.Background()
	db, err := sql.Open("pgx", root)
	if err != nil {
		t.Fatalf("pgtest: %v", err)
	}
	defer db.Close()
	conn, err := db.Conn(ctx) // the advisory lock is the session's
	if err != nil {
		t.Fatalf("pgtest: %v", err)
	}
	defer conn.Close()
	name := fmt.Sprintf("t_%d_%d", os.Getpid(), seq.Add(1))
	create := `CREATE DATABASE ` + name
	if template != "" {
		if _, err := conn.ExecContext(ctx, `SELECT pg_advisory_lock(hashtext($1))`, template); err != nil {
			t.Fatalf("pgtest: lock %s: %v", template, err)
		}
		defer conn.ExecContext(ctx, `SELECT pg_advisory_unlock(hashtext($1))`, template)
		if err := makeTemplate(ctx, conn, root, template, prepare); err != nil {
			t.Fatalf("pgtest: template %s: %v", template, err)
		}
		create += ` TEMPLATE ` + template
	}
	if _, err := conn.ExecContext(ctx, create); err != nil {
		t.Fatalf("pgtest: create database: %v", err)
	}
	t.Cleanup(func() {
		db, err := sql.Open("pgx", root)
		if err != nil {
			return
		}
		defer db.Close()
		_, _ = db.ExecContext(context.Background(), `DROP DATABASE IF EXISTS `+name+` WITH (FORCE)`)
	})
	return withDatabase(root, name)
}

// makeTemplate makes database template with prepare unless it exists. It is made under another
// name and renamed once prepared, so that a binary that died halfway leaves no template.
func makeTemplate(ctx context.Context, conn *sql.Conn, root, template string, prepare func(string) error) error {
	var n int
	if err := conn.QueryRowContext(ctx, `SELECT COUNT(*) FROM pg_database WHERE datname=$1`, template).Scan(&n); err != nil {
		return err
	}
	if n > 0 {
		return nil
	}
	work := template + "_making"
	for _, q := range []string{`DROP DATABASE IF EXISTS ` + work + ` WITH (FORCE)`, `CREATE DATABASE ` + work} {
		if _, err := conn.ExecContext(ctx, q); err != nil {
			return err
		}
	}
	if err := prepare(withDatabase(root, work)); err != nil {
		return err
	}
	_, err := conn.ExecContext(ctx, `ALTER DATABASE `+work+` RENAME TO `+template)
	return err
}
