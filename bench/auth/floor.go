package main

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"database/sql"
	"encoding/base64"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	_ "modernc.org/sqlite" // the "sqlite" database/sql driver

	"sdkpp/bench/internal/benchdb"
)

// The floor of the token endpoint: a bare net/http handler that does only what the token's
// guarantee requires (parse the form, check the client's secret against a value in memory, make
// a random token, commit one row for it, answer after the commit), so that sdkpp's rate can be
// read beside what a commit per token allows on the same machine and store. sdkpp's
// client_credentials tokens are signed now and write nothing: the floor stays as the reference of
// the design that wrote a row per token.

// floorTTL is the lifetime of a floor token, sdkpp's access tokens' (7 days).
const floorTTL = 7 * 24 * time.Hour

// floorSchema is the floor's table: the shape of sdkpp's tokens table, reduced to what the token
// needs (its SHA-256 hash as primary key, the client, the expiry).
const floorSchema = `CREATE TABLE tokens (hash %s PRIMARY KEY, app_id BIGINT NOT NULL, expires_at BIGINT NOT NULL)`

// tokenRow is the row committed for one token.
type tokenRow struct {
	hash      []byte
	appID     int64
	expiresAt int64
}

// committer commits a token's row; Commit returns once the row is durable as the store's
// settings make it.
type committer interface {
	Commit(ctx context.Context, row tokenRow) error
	Close()
}

// floorHandler answers client_credentials requests of one client as the floor: it parses the
// form, checks the client's id and secret, makes a token from crypto/rand, commits its row and
// answers sdkpp's JSON body after the commit.
func floorHandler(appID int64, secret string, c committer, now func() time.Time) http.Handler {
	id := strconv.FormatInt(appID, 10)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if err := r.ParseForm(); err != nil || r.PostForm.Get("grant_type") != "client_credentials" {
			http.Error(w, `{"error":"invalid_request"}`, http.StatusBadRequest)
			return
		}
		if r.PostForm.Get("client_id") != id ||
			subtle.ConstantTimeCompare([]byte(r.PostForm.Get("client_secret")), []byte(secret)) != 1 {
			http.Error(w, `{"error":"invalid_client"}`, http.StatusUnauthorized)
			return
		}
		var raw [32]byte
		rand.Read(raw[:]) // never fails (crypto/rand panics rather)
		tok := base64.RawURLEncoding.EncodeToString(raw[:])
		sum := sha256.Sum256([]byte(tok))
		row := tokenRow{hash: sum[:], appID: appID, expiresAt: now().Add(floorTTL).Unix()}
		if err := c.Commit(r.Context(), row); err != nil {
			http.Error(w, `{"error":"server_error"}`, http.StatusInternalServerError)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, `{"access_token":"`+tok+`","token_type":"Bearer","expires_in":`+
			strconv.FormatInt(int64(floorTTL/time.Second), 10)+`,"scope":"`+r.PostForm.Get("scope")+`"}`)
	})
}

// floorStore is the floor's database: each of its committers.
type floorStore struct {
	// each names a way to commit with its settings, beside what opens it.
	each []floorWay
	// close closes the database.
	close func()
}

// floorWay is one way to commit the floor's rows.
type floorWay struct {
	name string // what it does, with its settings
	open func() (committer, error)
}

// openFloorPostgres creates the floor's table in the (fresh) database of dsn and returns the two
// ways a pgx user would commit 8 concurrent requests' rows: a pool of workers connections with
// one prepared INSERT per request, and a group commit on one connection.
func openFloorPostgres(ctx context.Context, dsn string, workers int) (*floorStore, error) {
	conn, err := pgx.Connect(ctx, dsn)
	if err != nil {
		return nil, fmt.Errorf("floor: %w", err)
	}
	defer conn.Close(ctx)
	if _, err := conn.Exec(ctx, fmt.Sprintf(floorSchema, "BYTEA")); err != nil {
		return nil, fmt.Errorf("floor: create the table: %w", err)
	}
	pool := func(size int, prepare string) (*pgxpool.Pool, error) {
		cfg, err := pgxpool.ParseConfig(dsn)
		if err != nil {
			return nil, err
		}
		cfg.MaxConns, cfg.MinConns = int32(size), int32(size)
		if prepare != "" {
			cfg.AfterConnect = func(ctx context.Context, c *pgx.Conn) error {
				_, err := c.Prepare(ctx, "insert_token", prepare)
				return err
			}
		}
		return pgxpool.NewWithConfig(ctx, cfg)
	}
	return &floorStore{close: func() {}, each: []floorWay{
		{name: fmt.Sprintf("per request: pgxpool of %d, one prepared INSERT each, autocommit", workers),
			open: func() (committer, error) {
				p, err := pool(workers, `INSERT INTO tokens (hash, app_id, expires_at) VALUES ($1, $2, $3)`)
				if err != nil {
					return nil, err
				}
				return pgxPerRequest{p}, nil
			}},
		{name: "group commit: one connection, one INSERT ... unnest of the requests waiting (2 yields, up to 200 us for the last group's)",
			open: func() (committer, error) {
				p, err := pool(1, `INSERT INTO tokens (hash, app_id, expires_at) SELECT * FROM unnest($1::bytea[], $2::bigint[], $3::bigint[])`)
				if err != nil {
					return nil, err
				}
				return newGroupCommitter(func(ctx context.Context, rows []tokenRow) error {
					hashes, apps, exps := make([][]byte, len(rows)), make([]int64, len(rows)), make([]int64, len(rows))
					for i, r := range rows {
						hashes[i], apps[i], exps[i] = r.hash, r.appID, r.expiresAt
					}
					_, err := p.Exec(ctx, "insert_token", hashes, apps, exps)
					return err
				}, p.Close), nil
			}},
	}}, nil
}

// pgxPerRequest commits each row in its own autocommitted INSERT, on a pool's connection.
type pgxPerRequest struct{ pool *pgxpool.Pool }

func (p pgxPerRequest) Commit(ctx context.Context, r tokenRow) error {
	_, err := p.pool.Exec(ctx, "insert_token", r.hash, r.appID, r.expiresAt)
	return err
}

func (p pgxPerRequest) Close() { p.pool.Close() }

// openFloorSQLite creates the floor's database in dir (WAL, synchronous=NORMAL, as sdkpp's
// store) and returns the two ways to commit: a prepared INSERT per request on the one writer
// connection SQLite allows, and a group commit (one multi-row INSERT of the requests waiting).
func openFloorSQLite(dir string) (*floorStore, error) {
	dsn := "file:" + filepath.ToSlash(filepath.Join(dir, "floor.db")) +
		"?_pragma=busy_timeout(5000)&_pragma=journal_mode(WAL)&_pragma=synchronous(NORMAL)"
	db, err := sql.Open("sqlite", dsn)
	if err != nil {
		return nil, fmt.Errorf("floor: %w", err)
	}
	db.SetMaxOpenConns(1) // SQLite has one writer at a time: a skilled user queues on one connection
	if _, err := db.Exec(fmt.Sprintf(floorSchema, "BLOB")); err != nil {
		db.Close()
		return nil, fmt.Errorf("floor: create the table: %w", err)
	}
	return &floorStore{close: func() { db.Close() }, each: []floorWay{
		{name: "per request: one prepared INSERT each, autocommit, one connection (WAL, synchronous=NORMAL)",
			open: func() (committer, error) {
				st, err := db.Prepare(`INSERT INTO tokens (hash, app_id, expires_at) VALUES (?, ?, ?)`)
				if err != nil {
					return nil, err
				}
				return sqlPerRequest{st}, nil
			}},
		{name: "group commit: one multi-row INSERT (prepared per size) of the requests waiting (2 yields, up to 200 us for the last group's; WAL, synchronous=NORMAL)",
			open: func() (committer, error) {
				// The statement of each group size is prepared once (only the committer's
				// goroutine uses them), as SQLite would otherwise parse it for each group.
				stmts := map[int]*sql.Stmt{}
				closeAll := func() {
					for _, st := range stmts {
						st.Close()
					}
				}
				return newGroupCommitter(func(ctx context.Context, rows []tokenRow) error {
					st := stmts[len(rows)]
					if st == nil {
						var err error
						st, err = db.PrepareContext(ctx, `INSERT INTO tokens (hash, app_id, expires_at) VALUES `+
							strings.TrimSuffix(strings.Repeat("(?, ?, ?), ", len(rows)), ", "))
						if err != nil {
							return err
						}
						stmts[len(rows)] = st
					}
					args := make([]any, 0, 3*len(rows))
					for _, r := range rows {
						args = append(args, r.hash, r.appID, r.expiresAt)
					}
					_, err := st.ExecContext(ctx, args...)
					return err
				}, closeAll), nil
			}},
	}}, nil
}

// sqlPerRequest commits each row in its own autocommitted INSERT.
type sqlPerRequest struct{ st *sql.Stmt }

func (s sqlPerRequest) Commit(ctx context.Context, r tokenRow) error {
	_, err := s.st.ExecContext(ctx, r.hash, r.appID, r.expiresAt)
	return err
}

func (s sqlPerRequest) Close() { s.st.Close() }

// maxGroup bounds the rows of one group commit.
const maxGroup = 64

// groupYields is how many times the committer lets the goroutines that are ready to run go
// first before it takes a group (as sdkpp's token writer does): on a busy process the requests
// about to commit are often ready but not running, and join this group rather than form the
// next; when none is ready, a yield returns at once.
const groupYields = 2

// groupGather is how long at most the committer waits, when fewer requests are waiting than the
// crowd it saw at its last group (that group's requests and those who came while it committed),
// for the others to come back with their next requests, as sdkpp's token writer does: without
// it, clients that send in turn split into groups that take turns, each committed while the
// other's clients are away.
const groupGather = 200 * time.Microsecond

// groupCommitter commits the rows of the requests waiting together: its goroutine takes the
// first request, every other one already waiting (up to maxGroup), after letting the
// goroutines ready to run go first (groupYields) and waiting a bounded moment for the last
// group's clients (groupGather), commits their rows in one statement and answers each; requests
// that come meanwhile wait for the next group. It gathers as sdkpp's token writer does, so that
// the floor stays what a skilled user would do.
type groupCommitter struct {
	// groups, rows and busy count the groups committed, their rows and the time spent in
	// their commits (the statement's round trip and commit), for the arithmetic of the chain.
	groups, rows, busy atomic.Int64

	reqs   chan groupReq
	quit   chan struct{}
	done   sync.WaitGroup
	commit func(context.Context, []tokenRow) error
	close  func()
	// yield lets the goroutines ready to run go first: runtime.Gosched (a test's own in tests).
	yield func()
}

type groupReq struct {
	row   tokenRow
	reply chan error
}

// newGroupCommitter starts a group committer that commits with commit and calls closeFn when it
// is closed; Close stops its goroutine.
func newGroupCommitter(commit func(context.Context, []tokenRow) error, closeFn func()) *groupCommitter {
	g := &groupCommitter{reqs: make(chan groupReq), quit: make(chan struct{}), commit: commit, close: closeFn,
		yield: runtime.Gosched}
	g.done.Add(1)
	go g.loop()
	return g
}

func (g *groupCommitter) loop() {
	defer g.done.Done()
	rows := make([]tokenRow, 0, maxGroup)
	waiting := make([]chan error, 0, maxGroup)
	last := 0 // the rows of the last group
	timer := time.NewTimer(time.Hour)
	timer.Stop()
	take := func(r groupReq) { rows, waiting = append(rows, r.row), append(waiting, r.reply) }
	// drain takes the requests waiting, without waiting for more.
	drain := func() {
		for len(rows) < maxGroup {
			select {
			case r := <-g.reqs:
				take(r)
			default:
				return
			}
		}
	}
	for {
		rows, waiting = rows[:0], waiting[:0]
		drain() // those who came while the last group committed
		// The crowd: the last group's requests, which come back with their next ones, and
		// those who came meanwhile.
		crowd := min(maxGroup, last+len(rows))
		if len(rows) == 0 {
			select {
			case <-g.quit:
				return
			case r := <-g.reqs:
				take(r)
			}
		}
		for yields := 0; ; yields++ {
			drain()
			if yields == groupYields || len(rows) == maxGroup {
				break
			}
			g.yield()
		}
		if groupGather > 0 && len(rows) < crowd {
			timer.Reset(groupGather)
		wait:
			for len(rows) < crowd {
				select {
				case r := <-g.reqs:
					take(r)
				case <-timer.C:
					break wait
				case <-g.quit:
					break wait // the group is committed; the next receive returns
				}
			}
			timer.Stop()
		}
		last = len(rows)
		t0 := time.Now()
		err := g.commit(context.Background(), rows)
		g.busy.Add(int64(time.Since(t0)))
		g.groups.Add(1)
		g.rows.Add(int64(len(rows)))
		for _, w := range waiting {
			w <- err
		}
	}
}

// Commit hands the row to the committer's goroutine and waits for its group's commit.
func (g *groupCommitter) Commit(ctx context.Context, row tokenRow) error {
	reply := make(chan error, 1)
	select {
	case g.reqs <- groupReq{row, reply}:
	case <-ctx.Done():
		return ctx.Err()
	case <-g.quit:
		return fmt.Errorf("group committer closed")
	}
	return <-reply // the group's commit is under way: its answer comes
}

// Close stops the committer's goroutine and closes what it commits with.
func (g *groupCommitter) Close() {
	close(g.quit)
	g.done.Wait()
	g.close()
}

// floorBench is the floor's part of the run: each way to commit behind a net/http server of its
// own, with the figures of its turns.
type floorBench struct {
	ways  []*floorRun
	close []func()
}

// floorRun is one way to commit, served, with its turns' figures.
type floorRun struct {
	name   string
	srv    *httpServer
	c      committer
	cpu    cpuMeter
	pgTime time.Duration // the PostgreSQL server's CPU over its turns
	turns  time.Duration // the time of its turns
	rates  []float64
	ratios []float64 // its rate over the anchor's, per turn
	ours   []float64 // sdkpp's rate over its own, per turn
}

// startFloor opens the floor's database on the store storeName names (a PostgreSQL admin URL: a
// database of its own on that server; "sqlite": a file in a directory of its own) and serves
// each way to commit, for the client appID with secret.
func startFloor(storeName string, appID int64, secret string, workers int) (_ *floorBench, err error) {
	b := &floorBench{}
	defer func() {
		if err != nil {
			b.Close()
		}
	}()
	var fs *floorStore
	if storeName == "sqlite" {
		dir, err := os.MkdirTemp("", "sdkpp-bench-auth-floor-")
		if err != nil {
			return nil, err
		}
		b.close = append(b.close, func() { os.RemoveAll(dir) })
		if fs, err = openFloorSQLite(dir); err != nil {
			return nil, err
		}
	} else {
		u, drop, err := benchdb.Postgres(storeName, "bench_auth_floor")
		if err != nil {
			return nil, err
		}
		b.close = append(b.close, drop)
		if fs, err = openFloorPostgres(context.Background(), u, workers); err != nil {
			return nil, err
		}
	}
	b.close = append(b.close, fs.close)
	for _, w := range fs.each {
		c, err := w.open()
		if err != nil {
			return nil, fmt.Errorf("floor: %s: %w", w.name, err)
		}
		r := &floorRun{name: w.name, c: c, srv: newHTTPServer(floorHandler(appID, secret, c, time.Now))}
		b.close = append(b.close, c.Close, r.srv.Close)
		b.ways = append(b.ways, r)
	}
	return b, nil
}

// Close stops the floor's servers and committers and drops its database.
func (b *floorBench) Close() {
	for i := len(b.close) - 1; i >= 0; i-- {
		b.close[i]()
	}
	b.close = nil
}

// report prints each way's figures and the better as the floor, beside sdkpp's (its CPU in
// ours, and the PostgreSQL server's over its turns in ourPG when withPG).
func (b *floorBench) report(withPG bool, ours cpuMeter, ourPG time.Duration) {
	fmt.Println("  the floor, a reference (the design that wrote a row per token; sdkpp now signs its tokens and writes")
	fmt.Println("  none): a bare net/http handler that does only what a row's guarantee requires (parse the form,")
	fmt.Println("  check the secret in memory, crypto/rand token, commit its row (SHA-256 hash, client, expiry) in a")
	fmt.Println("  database of its own on the same store, answer after the commit); its two ways take turns by pairs:")
	pgPer := func(t time.Duration, m cpuMeter) float64 {
		if !withPG || m.requests == 0 {
			return 0
		}
		return float64(t.Microseconds()) / m.requests
	}
	var best *floorRun
	for i, w := range b.ways {
		if len(w.rates) == 0 {
			continue
		}
		line := fmt.Sprintf("  (%c) %8.0f req/s  CPU %5.1f us/req", 'a'+i, median(w.rates), w.cpu.perRequest())
		if withPG {
			line += fmt.Sprintf(" + PostgreSQL's %5.1f", pgPer(w.pgTime, w.cpu))
		}
		fmt.Printf("%s  of the anchor %.2fx (%d turns, %.2fx to %.2fx): %s\n", line, median(w.ratios), len(w.ratios),
			slices.Min(w.ratios), slices.Max(w.ratios), w.name)
		if best == nil || median(w.rates) > median(best.rates) {
			best = w
		}
	}
	if best == nil {
		return
	}
	for i, w := range b.ways {
		g, ok := w.c.(*groupCommitter)
		if !ok || g.groups.Load() == 0 || w.turns == 0 {
			continue
		}
		n := float64(g.groups.Load())
		fmt.Printf("  (%c)'s groups: %.1f rows each on average, %.0f groups/s over its turns, each commit %.0f us from send to answer\n",
			'a'+i, float64(g.rows.Load())/n, n/w.turns.Seconds(), float64(g.busy.Load())/n/1e3)
	}
	fmt.Printf("  floor = %s\n", best.name)
	fmt.Printf("    floor against the anchor %.2fx; sdkpp against the floor %.2fx (turns %.2fx to %.2fx)\n",
		median(best.ratios), median(best.ours), slices.Min(best.ours), slices.Max(best.ours))
	ourAll, floorAll := ours.perRequest()+pgPer(ourPG, ours), best.cpu.perRequest()+pgPer(best.pgTime, best.cpu)
	fmt.Printf("    CPU per request, this process's%s: sdkpp %.1f us, the floor %.1f us (floor/sdkpp %.2fx)\n",
		map[bool]string{true: " and PostgreSQL's", false: ""}[withPG], ourAll, floorAll, floorAll/ourAll)
}
