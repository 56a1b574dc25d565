package store

import (
	"context"
	"fmt"
	"strings"
	"time"

	"sdkpp/server/counters"
)

// Shared state: what the nodes of one database must count together so that a limit holds for a
// caller whose requests reach several of them. SQLite has one node; there the same methods work,
// and a service may as well count in its own memory.

// SharedStateStore keeps the counters (package counters: fixed windows) and the sign-in failures
// of every node.
type SharedStateStore interface {
	// Shared tells whether other nodes may share the database (PostgreSQL): state that must hold
	// across nodes is then kept in the store rather than in one process's memory.
	Shared() bool

	// HitWindows counts one event at now in every hit's current window if each has room (its
	// count below its limit), and in none otherwise; the hits' keys must differ. It returns
	// whether the event was counted and the windows as they are after, in the order of hits.
	// Concurrent calls, from any node, never count more than a limit's events in one window.
	HitWindows(ctx context.Context, now time.Time, hits []counters.Hit) (bool, []counters.Window, error)
	// TakeWindows takes up to n[i] events (at least 1, at most the limit) at now from the window
	// of hits[i] (starting those that ended) for a caller to count on its own (counters.Leased):
	// as many as the window has room for, none when it is full. It returns the windows as they
	// are after and how many it took from each. Concurrent calls, from any node, never take more
	// than a limit's events from one window.
	TakeWindows(ctx context.Context, now time.Time, hits []counters.Hit, n []int) ([]counters.Window, []int, error)
	// PeekWindow returns key's window current at now: the zero Window when there is none.
	PeekWindow(ctx context.Context, key string, now time.Time) (counters.Window, error)
	// SweepWindows forgets the windows that ended at or before now.
	SweepWindows(ctx context.Context, now time.Time) error

	// AddLoginFailure records a failed sign-in at at under every one of keys.
	AddLoginFailure(ctx context.Context, keys []string, at time.Time) error
	// NthLoginFailure returns the time of key's n-th most recent failure after since (n from 1);
	// ok is false when it has fewer.
	NthLoginFailure(ctx context.Context, key string, since time.Time, n int) (t time.Time, ok bool, err error)
	// ClearLoginFailures forgets key's failures.
	ClearLoginFailures(ctx context.Context, key string) error
	// SweepLoginFailures forgets the failures at or before before.
	SweepLoginFailures(ctx context.Context, before time.Time) error
}

// Shared implements SharedStateStore.
func (s *DB) Shared() bool { return s.node != nil }

// HitWindows implements SharedStateStore with one statement that counts the event in every
// window (starting those that ended), and, when one of them was full, a second that takes the
// count back: a refused event counts nowhere. Between the two a racing event may see the
// window fuller than it stays, and be refused: a limit can be enforced a little early under
// contention, never exceeded.
func (s *DB) HitWindows(ctx context.Context, now time.Time, hits []counters.Hit) (bool, []counters.Window, error) {
	if len(hits) == 0 {
		return true, nil, nil
	}
	ones := make([]int, len(hits))
	for i := range ones {
		ones[i] = 1
	}
	out, err := s.addWindows(ctx, now, hits, ones)
	if err != nil {
		return false, nil, err
	}
	ok := true
	for i, h := range hits {
		ok = ok && out[i].Count <= h.Limit
	}
	if ok {
		return true, out, nil
	}
	for i, h := range hits {
		if err := s.takeBack(ctx, h.Key, out[i].Start, 1); err != nil {
			return false, nil, err
		}
		out[i].Count--
	}
	return false, out, nil
}

// TakeWindows implements SharedStateStore as HitWindows does: one statement that counts every
// hit's n, a second, when a window was overfilled, that takes the excess back.
func (s *DB) TakeWindows(ctx context.Context, now time.Time, hits []counters.Hit, n []int) ([]counters.Window, []int, error) {
	if len(hits) != len(n) {
		return nil, nil, fmt.Errorf("store: take windows: %d hits and %d counts", len(hits), len(n))
	}
	want := make([]int, len(hits))
	for i, h := range hits {
		want[i] = max(1, min(n[i], h.Limit))
	}
	out, err := s.addWindows(ctx, now, hits, want)
	if err != nil {
		return nil, nil, err
	}
	taken := make([]int, len(hits))
	for i, h := range hits {
		over := min(max(out[i].Count-h.Limit, 0), want[i])
		if over > 0 {
			if err := s.takeBack(ctx, h.Key, out[i].Start, over); err != nil {
				return nil, nil, err
			}
			out[i].Count -= over
		}
		taken[i] = want[i] - over
	}
	return out, taken, nil
}

// addWindows counts n[i] events at now in the window of hits[i] (starting those that ended), in
// one statement, and returns the windows as they are after.
func (s *DB) addWindows(ctx context.Context, now time.Time, hits []counters.Hit, n []int) ([]counters.Window, error) {
	at := ts(now)
	var q strings.Builder
	q.WriteString(`INSERT INTO rate_windows AS w (key, start_at, ends_at, hits) VALUES `)
	args := make([]any, 0, 4*len(hits))
	for i, h := range hits {
		if i > 0 {
			q.WriteString(",")
		}
		q.WriteString("(?,?,?,?)")
		args = append(args, h.Key, at, ts(now.Add(h.Window)), n[i])
	}
	// A window ends at ends_at; one that starts after now (the clock went back) ends too.
	const ended = `(w.ends_at <= excluded.start_at OR w.start_at > excluded.start_at)`
	q.WriteString(` ON CONFLICT (key) DO UPDATE SET
		start_at = CASE WHEN ` + ended + ` THEN excluded.start_at ELSE w.start_at END,
		ends_at = CASE WHEN ` + ended + ` THEN excluded.ends_at ELSE w.ends_at END,
		hits = CASE WHEN ` + ended + ` THEN excluded.hits ELSE w.hits + excluded.hits END
		RETURNING key, start_at, ends_at, hits`)
	rows, err := s.q.QueryContext(ctx, q.String(), args...)
	if err != nil {
		return nil, fmt.Errorf("store: hit windows: %w", err)
	}
	got := make(map[string]counters.Window, len(hits))
	for rows.Next() {
		var key string
		var start, end int64
		var w counters.Window
		if err := rows.Scan(&key, &start, &end, &w.Count); err != nil {
			rows.Close()
			return nil, fmt.Errorf("store: hit windows: %w", err)
		}
		w.Start, w.End = fromTS(start), fromTS(end)
		got[key] = w
	}
	if err := rows.Close(); err != nil {
		return nil, fmt.Errorf("store: hit windows: %w", err)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("store: hit windows: %w", err)
	}
	out := make([]counters.Window, len(hits))
	for i, h := range hits {
		w, found := got[h.Key]
		if !found {
			return nil, fmt.Errorf("store: hit windows: no window for a hit")
		}
		out[i] = w
	}
	return out, nil
}

// takeBack takes k events back from key's window that started at start: only the window the
// caller counted in, as one that has ended since is another's.
func (s *DB) takeBack(ctx context.Context, key string, start time.Time, k int) error {
	if _, err := s.q.ExecContext(ctx, `UPDATE rate_windows SET hits = hits - ? WHERE key=? AND start_at=? AND hits >= ?`,
		k, key, ts(start), k); err != nil {
		return fmt.Errorf("store: hit windows: take back: %w", err)
	}
	return nil
}

// PeekWindow implements SharedStateStore.
func (s *DB) PeekWindow(ctx context.Context, key string, now time.Time) (counters.Window, error) {
	var start, end int64
	var w counters.Window
	err := s.q.QueryRowContext(ctx, `SELECT start_at, ends_at, hits FROM rate_windows WHERE key=?`, key).Scan(&start, &end, &w.Count)
	if err := notFound(err); err != nil {
		if err == ErrNotFound {
			return counters.Window{}, nil
		}
		return counters.Window{}, fmt.Errorf("store: peek window: %w", err)
	}
	if at := ts(now); end <= at || start > at {
		return counters.Window{}, nil
	}
	w.Start, w.End = fromTS(start), fromTS(end)
	return w, nil
}

// SweepWindows implements SharedStateStore.
func (s *DB) SweepWindows(ctx context.Context, now time.Time) error {
	if _, err := s.q.ExecContext(ctx, `DELETE FROM rate_windows WHERE ends_at <= ?`, ts(now)); err != nil {
		return fmt.Errorf("store: sweep windows: %w", err)
	}
	return nil
}

// AddLoginFailure implements SharedStateStore.
func (s *DB) AddLoginFailure(ctx context.Context, keys []string, at time.Time) error {
	if len(keys) == 0 {
		return nil
	}
	q := `INSERT INTO login_failures (key, at) VALUES ` + strings.TrimSuffix(strings.Repeat("(?,?),", len(keys)), ",")
	args := make([]any, 0, 2*len(keys))
	for _, k := range keys {
		args = append(args, k, ts(at))
	}
	if _, err := s.q.ExecContext(ctx, q, args...); err != nil {
		return fmt.Errorf("store: add login failure: %w", err)
	}
	return nil
}

// NthLoginFailure implements SharedStateStore.
func (s *DB) NthLoginFailure(ctx context.Context, key string, since time.Time, n int) (time.Time, bool, error) {
	var at int64
	err := notFound(s.q.QueryRowContext(ctx, `SELECT at FROM login_failures WHERE key=? AND at>?
		ORDER BY at DESC LIMIT 1 OFFSET ?`, key, ts(since), n-1).Scan(&at))
	switch {
	case err == ErrNotFound:
		return time.Time{}, false, nil
	case err != nil:
		return time.Time{}, false, fmt.Errorf("store: login failures: %w", err)
	}
	return fromTS(at), true, nil
}

// ClearLoginFailures implements SharedStateStore.
func (s *DB) ClearLoginFailures(ctx context.Context, key string) error {
	if _, err := s.q.ExecContext(ctx, `DELETE FROM login_failures WHERE key=?`, key); err != nil {
		return fmt.Errorf("store: clear login failures: %w", err)
	}
	return nil
}

// SweepLoginFailures implements SharedStateStore.
func (s *DB) SweepLoginFailures(ctx context.Context, before time.Time) error {
	if _, err := s.q.ExecContext(ctx, `DELETE FROM login_failures WHERE at <= ?`, ts(before)); err != nil {
		return fmt.Errorf("store: sweep login failures: %w", err)
	}
	return nil
}
