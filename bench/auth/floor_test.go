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

// TestGroupCommitterGathers checks that the requests that come while a group commits are
// committed together in the next group, and that each waits for its own group's commit.
func TestGroupCommitterGathers(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		release := make(chan struct{})
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
			<-release
			return nil
		}, func() {})
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
		mu.Lock()
		defer mu.Unlock()
		require.Len(t, groups, 2)
		assert.Equal(t, []int64{1}, groups[0])
		assert.ElementsMatch(t, []int64{2, 3, 4}, groups[1])
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
