package counters_test

import (
	"context"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"sdkpp/server/counters"

	"sdkpp/server/store"
	"sdkpp/server/store/pgtest"
)

func TestMain(m *testing.M) { pgtest.Main(m) } // the benchmarks' PostgreSQL

// openSQLite opens an in-memory SQLite store that the test closes.
func openSQLite(tb testing.TB) *store.DB {
	tb.Helper()
	st, err := store.OpenSQLite(context.Background(), "")
	require.NoError(tb, err)
	tb.Cleanup(func() { st.Close() })
	return st
}

// openPostgres opens a store on a fresh database of the benchmarks' PostgreSQL, which the
// benchmark closes.
func openPostgres(tb testing.TB) *store.DB {
	tb.Helper()
	u := pgtest.Database(tb, "sdkpp_schema_"+store.PostgresSchemaID(), func(u string) error {
		s, err := store.OpenPostgres(context.Background(), u, store.PostgresOptions{})
		if err != nil {
			return err
		}
		return s.Close()
	})
	st, err := store.OpenPostgres(context.Background(), u, store.PostgresOptions{})
	require.NoError(tb, err)
	tb.Cleanup(func() { st.Close() })
	return st
}

// Memory and Stored count alike: up to the limit, nothing for a refusal, afresh in a new
// window, and Peek sees what Hit counted.
func TestCountersAgree(t *testing.T) {
	for name, c := range map[string]counters.Counter{"memory": counters.NewMemory(), "stored": counters.NewStored(openSQLite(t))} {
		t.Run(name, func(t *testing.T) {
			ctx := context.Background()
			t0 := time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC)
			a := counters.Hit{Key: "a", Limit: 2, Window: time.Second}
			b := counters.Hit{Key: "b", Limit: 10, Window: time.Minute}
			var got []bool
			for i := range 3 {
				ok, ws, err := c.Hit(ctx, t0.Add(time.Duration(i)*time.Millisecond), a, b)
				require.NoError(t, err)
				got = append(got, ok)
				assert.True(t, ws[0].End.Equal(t0.Add(time.Second)))
			}
			assert.Equal(t, []bool{true, true, false}, got)
			w, err := c.Peek(ctx, "b", t0)
			require.NoError(t, err)
			assert.Equal(t, 2, w.Count, "the refused event counted nowhere")
			ok, ws, err := c.Hit(ctx, t0.Add(time.Second), a, b)
			require.NoError(t, err)
			assert.True(t, ok)
			assert.Equal(t, []int{1, 3}, []int{ws[0].Count, ws[1].Count})
			w, err = c.Peek(ctx, "a", t0.Add(2*time.Second))
			require.NoError(t, err)
			assert.Zero(t, w, "ended")
		})
	}
	st := openSQLite(t)
	assert.IsType(t, &counters.Memory{}, counters.For(st), "one node: memory")
}

// The cost of counting one request (a route and a global window) in each counter.
func BenchmarkHit(b *testing.B) {
	b.Run("memory", func(b *testing.B) { benchmarkHit(b, counters.NewMemory()) })
	b.Run("sqlite", func(b *testing.B) { benchmarkHit(b, counters.NewStored(openSQLite(b))) })
	b.Run("postgres", func(b *testing.B) {
		benchmarkHit(b, counters.For(openPostgres(b)))
	})
}

func benchmarkHit(b *testing.B, c counters.Counter) {
	ctx := context.Background()
	t0 := time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC)
	hits := []counters.Hit{{Key: "g|id:user:1", Limit: 1 << 30, Window: time.Hour}, {Key: "r|id:user:1|b|", Limit: 1 << 30, Window: time.Hour}}
	b.ResetTimer()
	for i := range b.N {
		if _, _, err := c.Hit(ctx, t0.Add(time.Duration(i)), hits...); err != nil {
			b.Fatal(err)
		}
	}
}

// The cost of counting a caller at its limit's full rate (50 per second, the REST default, in a
// route and a global window) on PostgreSQL: Stored writes at every event, Leased once per share.
func BenchmarkHitAtLimit(b *testing.B) {
	st := openPostgres(b)
	for name, c := range map[string]counters.Counter{"stored": counters.NewStored(st), "leased": counters.NewLeased(st)} {
		b.Run(name, func(b *testing.B) {
			ctx := context.Background()
			t0 := time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC)
			run := name + strconv.Itoa(b.N) // the windows of each run are its own
			hits := []counters.Hit{{Key: "g|" + run, Limit: 50, Window: time.Second}, {Key: "r|" + run, Limit: 50, Window: time.Second}}
			for i := range b.N {
				ok, _, err := c.Hit(ctx, t0.Add(time.Duration(i)*20*time.Millisecond), hits...)
				if err != nil || !ok {
					b.Fatal(ok, err)
				}
			}
		})
	}
}
