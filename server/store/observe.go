package store

import (
	"context"
	"database/sql"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// QueryObserver is told of every statement a store runs: the operation it ran for and how
// long the database took. The operation is the name of the store's exported method that ran
// the statement ("GetUser", "InsertLobbyMessage"), "commit" for a transaction's commit, or
// "other"; never an id, so that a metric labelled by it has a bounded number of series.
type QueryObserver func(operation string, took time.Duration)

// ObserveQueries has the store (and its transactions) report each statement to fn; nil stops
// the reports. The time is the statement's execution up to its result: for a query, until its
// rows can be read, not the reading of them.
func (s *DB) ObserveQueries(fn QueryObserver) {
	if fn == nil {
		s.opts.observe.Store(nil)
		return
	}
	s.opts.observe.Store(&fn)
}

// observing is a querier that reports each statement to the store's observer.
type observing struct {
	q querier
	o *dbOptions
}

// start returns the start of a statement, zero when nothing observes (no clock is read).
func (o observing) start() time.Time {
	if o.o.observe.Load() == nil {
		return time.Time{}
	}
	return time.Now()
}

// done reports a statement that started at start (unless zero) to the observer.
func (o observing) done(start time.Time) {
	if start.IsZero() {
		return
	}
	if f := o.o.observe.Load(); f != nil {
		(*f)(operation(), time.Since(start))
	}
}

func (o observing) ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error) {
	defer o.done(o.start())
	return o.q.ExecContext(ctx, query, args...)
}

func (o observing) QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error) {
	defer o.done(o.start())
	return o.q.QueryContext(ctx, query, args...)
}

func (o observing) QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row {
	defer o.done(o.start())
	return o.q.QueryRowContext(ctx, query, args...)
}

// opDepth is how many callers operation looks through for the store's method; it looks through
// opNear first, which is enough for a method that runs its statements itself (the stack walk is
// most of the cost of observing).
const (
	opNear  = 4
	opDepth = 16
)

// opNames caches the operation of each program counter: its store method's name, or "" when
// the frame is not in one.
var opNames sync.Map // uintptr -> string

// dbMethod prefixes the function names of the methods of *DB and of their closures.
const dbMethod = "sdkpp/server/store.(*DB)."

// operation returns the exported method of *DB nearest up the stack, "other" when there is
// none within opDepth frames.
func operation() string {
	var pcs [opDepth]uintptr
	for _, depth := range []int{opNear, opDepth} {
		n := runtime.Callers(3, pcs[:depth]) // from the caller of observing.done's caller
		for _, pc := range pcs[:n] {
			name, ok := opNames.Load(pc)
			if !ok {
				name = methodOf(pc)
				opNames.Store(pc, name)
			}
			if s := name.(string); s != "" {
				return s
			}
		}
		if n < depth {
			break // the stack ends here
		}
	}
	return "other"
}

// methodOf returns the exported method of *DB that pc is in (one of its closures included, and
// functions inlined into it), or "".
func methodOf(pc uintptr) string {
	frames := runtime.CallersFrames([]uintptr{pc})
	for {
		f, more := frames.Next()
		if rest, ok := strings.CutPrefix(f.Function, dbMethod); ok {
			m, _, _ := strings.Cut(rest, ".") // GetUser.func1 is GetUser's closure
			if m != "" && m[0] >= 'A' && m[0] <= 'Z' && m != "WithTx" {
				return m
			}
		}
		if !more {
			return ""
		}
	}
}

// observer is the store's QueryObserver, shared by the store and its transactions.
type observer = atomic.Pointer[QueryObserver]
