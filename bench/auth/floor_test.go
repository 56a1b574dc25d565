package main

import (
	"context"
	"crypto/sha256"
	"database/sql"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"net/url"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"sdkpp/bench/internal/benchdb"
	"sdkpp/server/store/pgtest"
)

func TestMain(m *testing.M) { pgtest.Main(m) }

const (
	testApp    = 42
	testSecret = "s3cret"
)

var testNow = time.Date(2026, 11, 30, 8, 0, 0, 0, time.UTC)

// post sends a client_credentials request with secret to h and returns the answer.
func post(t *testing.T, h http.Handler, grant, secret string) *httptest.ResponseRecorder {
	t.Helper()
	form := url.Values{"grant_type": {grant}, "client_id": {"42"}, "client_secret": {secret}, "scope": {"identify"}}
	req := httptest.NewRequest(http.MethodPost, "/token", strings.NewReader(form.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	return rec
}

// rowLookup returns the client and expiry of the row of hash, and whether there is one.
type rowLookup func(t *testing.T, hash []byte) (appID, expiresAt int64, ok bool)

// checkFloor checks that the floor's way c answers a good request with a token whose row it has
// committed before answering, and refuses a wrong secret or grant without committing.
func checkFloor(t *testing.T, c committer, lookup rowLookup, count func(t *testing.T) int) {
	h := floorHandler(testApp, testSecret, c, func() time.Time { return testNow })

	rec := post(t, h, "client_credentials", testSecret)
	require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
	assert.Equal(t, "application/json", rec.Header().Get("Content-Type"))
	var body struct {
		AccessToken string `json:"access_token"`
		TokenType   string `json:"token_type"`
		ExpiresIn   int64  `json:"expires_in"`
		Scope       string `json:"scope"`
	}
	require.NoError(t, json.Unmarshal(rec.Body.Bytes(), &body))
	assert.Len(t, body.AccessToken, 43) // 32 random bytes, base64url without padding
	assert.Equal(t, "Bearer", body.TokenType)
	assert.Equal(t, int64(7*24*3600), body.ExpiresIn)
	assert.Equal(t, "identify", body.Scope)
	sum := sha256.Sum256([]byte(body.AccessToken))
	app, exp, ok := lookup(t, sum[:])
	require.True(t, ok, "the token's row is committed when the answer comes")
	assert.Equal(t, int64(testApp), app)
	assert.Equal(t, testNow.Add(floorTTL).Unix(), exp)

	second := post(t, h, "client_credentials", testSecret)
	require.Equal(t, http.StatusOK, second.Code)
	assert.NotEqual(t, rec.Body.String(), second.Body.String(), "each token is new")

	assert.Equal(t, http.StatusUnauthorized, post(t, h, "client_credentials", "wrong").Code)
	assert.Equal(t, http.StatusBadRequest, post(t, h, "authorization_code", testSecret).Code)
	assert.Equal(t, 2, count(t), "refused requests commit nothing")
}

func TestFloorSQLite(t *testing.T) {
	dir := t.TempDir()
	fs, err := openFloorSQLite(dir)
	require.NoError(t, err)
	t.Cleanup(fs.close)
	db, err := sql.Open("sqlite", "file:"+filepath.Join(dir, "floor.db"))
	require.NoError(t, err)
	t.Cleanup(func() { db.Close() })
	require.Len(t, fs.each, 2)
	for _, way := range fs.each {
		t.Run(way.name, func(t *testing.T) {
			_, err := db.Exec(`DELETE FROM tokens`)
			require.NoError(t, err)
			c, err := way.open()
			require.NoError(t, err)
			defer c.Close()
			checkFloor(t, c, func(t *testing.T, hash []byte) (app, exp int64, ok bool) {
				err := db.QueryRow(`SELECT app_id, expires_at FROM tokens WHERE hash = ?`, hash).Scan(&app, &exp)
				if errors.Is(err, sql.ErrNoRows) {
					return 0, 0, false
				}
				require.NoError(t, err)
				return app, exp, true
			}, func(t *testing.T) (n int) {
				require.NoError(t, db.QueryRow(`SELECT count(*) FROM tokens`).Scan(&n))
				return n
			})
		})
	}
}

func TestFloorPostgres(t *testing.T) {
	dsn, drop, err := benchdb.Postgres(pgtest.Admin(t), "floor_test")
	require.NoError(t, err)
	t.Cleanup(drop)
	ctx := context.Background()
	fs, err := openFloorPostgres(ctx, dsn, 8)
	require.NoError(t, err)
	t.Cleanup(fs.close)
	conn, err := pgx.Connect(ctx, dsn)
	require.NoError(t, err)
	t.Cleanup(func() { conn.Close(ctx) })
	require.Len(t, fs.each, 2)
	for _, way := range fs.each {
		t.Run(way.name, func(t *testing.T) {
			_, err := conn.Exec(ctx, `DELETE FROM tokens`)
			require.NoError(t, err)
			c, err := way.open()
			require.NoError(t, err)
			defer c.Close()
			checkFloor(t, c, func(t *testing.T, hash []byte) (app, exp int64, ok bool) {
				err := conn.QueryRow(ctx, `SELECT app_id, expires_at FROM tokens WHERE hash = $1`, hash).Scan(&app, &exp)
				if errors.Is(err, pgx.ErrNoRows) {
					return 0, 0, false
				}
				require.NoError(t, err)
				return app, exp, true
			}, func(t *testing.T) (n int) {
				require.NoError(t, conn.QueryRow(ctx, `SELECT count(*) FROM tokens`).Scan(&n))
				return n
			})
		})
	}
}

// recordGroups returns a group committer that records the groups it commits (each row's appID),
// each commit waiting for a receive from release when release is not nil, and what returns the
// groups so far.
func recordGroups(release chan struct{}) (*groupCommitter, func() [][]int64) {
	var mu sync.Mutex
	var groups [][]int64
	g := newGroupCommitter(func(_ context.Context, rows []tokenRow) error {
		mu.Lock()
		group := make([]int64, len(rows))
		for i, r := range rows {
			group[i] = r.appID
		}
		groups = append(groups, group)
		mu.Unlock()
		if release != nil {
			<-release
		}
		return nil
	}, func() {})
	return g, func() [][]int64 {
		mu.Lock()
		defer mu.Unlock()
		return slices.Clone(groups)
	}
}

// TestGroupCommitterGathers checks that the requests that come while a group commits are
// committed together in the next group, and that each waits for its own group's commit.
func TestGroupCommitterGathers(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		release := make(chan struct{})
		g, committed := recordGroups(release)
		defer g.Close()

		done := make(chan int64, 4)
		commit := func(id int64) {
			require.NoError(t, g.Commit(context.Background(), tokenRow{appID: id}))
			done <- id
		}
		go commit(1)
		synctest.Wait() // the first group (1) is committing
		for id := int64(2); id <= 4; id++ {
			go commit(id)
		}
		synctest.Wait()
		assert.Empty(t, done, "no answer before its group's commit")
		release <- struct{}{} // the first group commits
		synctest.Wait()
		require.Len(t, done, 1)
		assert.Equal(t, int64(1), <-done)
		release <- struct{}{} // the second group, of the three that waited
		synctest.Wait()
		assert.Len(t, done, 3)
		groups := committed()
		require.Len(t, groups, 2)
		assert.Equal(t, []int64{1}, groups[0])
		assert.ElementsMatch(t, []int64{2, 3, 4}, groups[1])
	})
}

// TestGroupCommitterYields checks that the committer lets the goroutines ready to run go first
// before it takes a group, groupYields times: a request that comes during a yield joins the
// group, and one that comes only after the last does not.
func TestGroupCommitterYields(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		g, committed := recordGroups(nil)
		defer g.Close()

		var wg sync.WaitGroup
		commit := func(id int64) {
			wg.Go(func() { assert.NoError(t, g.Commit(context.Background(), tokenRow{appID: id})) })
		}
		next, yields := int64(2), 0
		g.yield = func() { // a request becomes ready during each yield, the last one after them
			yields++
			commit(next)
			next++
			synctest.Wait() // it waits for the committer
		}
		commit(1)
		wg.Wait() // the committer is the only goroutine to call synctest.Wait
		assert.Equal(t, groupYields, yields)
		g.yield = func() {}
		commit(next)
		wg.Wait()
		groups := committed()
		require.Len(t, groups, 2)
		assert.Equal(t, []int64{1, 2, 3}, groups[0], "the requests that came during its yields joined the first group")
		assert.Equal(t, []int64{4}, groups[1])
	})
}

// TestGroupCommitterWaitsForTheCrowd checks that the committer waits, at most groupGather, for
// the requests of its last group to come back when fewer are waiting than the crowd it saw: the
// last group's and those who came while it committed.
func TestGroupCommitterWaitsForTheCrowd(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		release := make(chan struct{})
		g, committed := recordGroups(release)
		defer g.Close()
		var wg sync.WaitGroup
		defer wg.Wait()
		commit := func(id int64) {
			wg.Go(func() { assert.NoError(t, g.Commit(context.Background(), tokenRow{appID: id})) })
			synctest.Wait()
		}

		commit(1) // alone: committed at once, with no crowd to wait for
		commit(2)
		commit(3)
		release <- struct{}{}
		synctest.Wait()
		assert.Equal(t, [][]int64{{1}}, committed(), "2 and 3 wait for 1's request to come back")
		commit(4) // 1's client, back within groupGather
		assert.Equal(t, [][]int64{{1}, {2, 3, 4}}, committed())

		release <- struct{}{}
		synctest.Wait()
		commit(5) // only one of the three comes back
		assert.Len(t, committed(), 2, "the committer waits for the other two")
		time.Sleep(groupGather)
		synctest.Wait()
		assert.Equal(t, [][]int64{{1}, {2, 3, 4}, {5}}, committed(), "the wait runs out after groupGather")
		release <- struct{}{}
	})
}

// TestGroupCommitterError checks that a group's failed commit fails each of its requests, and the
// floor's answer to them.
func TestGroupCommitterError(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		g := newGroupCommitter(func(context.Context, []tokenRow) error { return errors.New("disk full") }, func() {})
		defer g.Close()
		h := floorHandler(testApp, testSecret, g, time.Now)
		var wg sync.WaitGroup
		for range 3 {
			wg.Go(func() {
				assert.Equal(t, http.StatusInternalServerError, post(t, h, "client_credentials", testSecret).Code)
			})
		}
		wg.Wait()
	})
}

// TestGroupCommitterClosed checks that a closed committer refuses rows rather than hanging.
func TestGroupCommitterClosed(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		closed := false
		g := newGroupCommitter(func(context.Context, []tokenRow) error { return nil }, func() { closed = true })
		g.Close()
		assert.True(t, closed)
		assert.Error(t, g.Commit(context.Background(), tokenRow{}))
	})
}
