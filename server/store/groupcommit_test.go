package store

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Transactions that run at once on SQLite share a commit; each still succeeds or fails alone,
// and a panic in one leaves the store usable.
func TestGroupCommit(t *testing.T) {
	for name, open := range map[string]func(*testing.T) *DB{"memory": openMemory, "dir": openDir} {
		t.Run(name, func(t *testing.T) { testGroupCommit(t, open(t)) })
	}
}

func testGroupCommit(t *testing.T, s *DB) {
	ctx := context.Background()
	put := func(st Store, id uint64) error {
		return st.PutAuthorization(ctx, &Authorization{ID: id, AppID: id, UserID: 2, Scopes: []string{"identify"}})
	}
	exists := func(id uint64) bool {
		_, err := s.GetAuthorization(ctx, id)
		if errors.Is(err, ErrNotFound) {
			return false
		}
		require.NoError(t, err)
		return true
	}
	// The first call holds its turn until the others have joined its transaction.
	const others = 6
	release := make(chan struct{})
	boom := errors.New("boom")
	before := s.group.commits.Load()
	var wg sync.WaitGroup
	errs := make([]error, others+1)
	wg.Go(func() {
		errs[0] = s.WithTx(ctx, func(st Store) error {
			<-release
			return put(st, 100)
		})
	})
	require.Eventually(t, func() bool { return s.group.members() == 1 }, 10*time.Second, time.Millisecond)
	for i := 1; i <= others; i++ {
		wg.Go(func() {
			defer func() {
				if r := recover(); r != nil {
					errs[i] = fmt.Errorf("panicked: %v", r)
				}
			}()
			errs[i] = s.WithTx(ctx, func(st Store) error {
				if err := put(st, uint64(100+i)); err != nil {
					return err
				}
				switch i {
				case 2:
					return boom // its write is rolled back, the others' kept
				case 3:
					panic("member panics")
				}
				return nil
			})
		})
	}
	require.Eventually(t, func() bool { return s.group.members() == others+1 }, 10*time.Second, time.Millisecond)
	close(release)
	wg.Wait()
	for i, err := range errs {
		switch i {
		case 2:
			assert.ErrorIs(t, err, boom)
		case 3:
			assert.ErrorContains(t, err, "member panics")
		default:
			assert.NoError(t, err, "call %d", i)
		}
		assert.Equal(t, i != 2 && i != 3, exists(uint64(100+i)), "call %d's write", i)
	}
	assert.Equal(t, int64(1), s.group.commits.Load()-before, "the calls did not share one commit")

	// A first member that fails rolls its transaction back; later ones begin another.
	require.ErrorIs(t, s.WithTx(ctx, func(st Store) error {
		require.NoError(t, put(st, 200))
		return boom
	}), boom)
	assert.False(t, exists(200))
	require.NoError(t, s.WithTx(ctx, func(st Store) error { return put(st, 201) }))
	assert.True(t, exists(201))
}

// Writes outside transactions (one statement each) share a commit without savepoints: one that
// fails on a constraint fails alone, and the others' rows are kept.
func TestGroupCommitSingleStatements(t *testing.T) {
	for name, open := range map[string]func(*testing.T) *DB{"memory": openMemory, "dir": openDir} {
		t.Run(name, func(t *testing.T) { testGroupCommitSingleStatements(t, open(t)) })
	}
}

func testGroupCommitSingleStatements(t *testing.T, s *DB) {
	ctx := context.Background()
	exp := time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)
	insert := func(id uint64) error { // one statement through the group commit, not the token writer
		return s.insertToken(ctx, &Token{ID: id, Hash: []byte("h"), Kind: AccessToken, AuthorizationID: 1, AppID: 1, UserID: 2, ExpiresAt: exp})
	}
	const taken = 1
	require.NoError(t, insert(taken))
	release := make(chan struct{})
	before := s.group.commits.Load()
	var wg sync.WaitGroup
	wg.Go(func() {
		assert.NoError(t, s.WithTx(ctx, func(st Store) error {
			<-release
			return st.InsertToken(ctx, &Token{ID: 2, Hash: []byte("first"), Kind: AccessToken, AuthorizationID: 1, ExpiresAt: exp})
		}))
	})
	require.Eventually(t, func() bool { return s.group.members() == 1 }, 10*time.Second, time.Millisecond)
	ids := []uint64{3, taken, 4, 5}
	errs := make([]error, len(ids))
	for i, id := range ids {
		wg.Go(func() { errs[i] = insert(id) })
	}
	require.Eventually(t, func() bool { return s.group.members() == 1+len(ids) }, 10*time.Second, time.Millisecond)
	close(release)
	wg.Wait()
	for i, id := range ids {
		if id == taken {
			assert.Error(t, errs[i], "a duplicate token was inserted")
			continue
		}
		assert.NoError(t, errs[i], "insert %d", id)
	}
	for id := uint64(1); id <= 5; id++ {
		_, err := s.GetToken(ctx, id)
		assert.NoError(t, err, "token %d", id)
	}
	assert.Equal(t, int64(1), s.group.commits.Load()-before, "the writes did not share one commit")
}
