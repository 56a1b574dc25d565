package stamp

import (
	"math/rand/v2"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// Micro formats as time.Time.Format with Layout does, in UTC whatever t's location, across the
// years Layout has four digits for and beyond them.
func TestMicroIsFormat(t *testing.T) {
	east := time.FixedZone("east", 5*3600+1800)
	times := []time.Time{
		{},
		time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC),
		time.Date(2026, 12, 31, 23, 59, 59, 999999999, time.UTC),
		time.Date(2027, 1, 1, 1, 2, 3, 4000, east), // the day before in UTC
		time.Date(9999, 12, 31, 23, 59, 59, 999999000, time.UTC),
		time.Date(10000, 1, 1, 0, 0, 0, 0, time.UTC),
		time.Date(-1, 1, 1, 0, 0, 0, 0, time.UTC),
		time.Date(999, 5, 6, 7, 8, 9, 10011000, time.UTC),
	}
	r := rand.New(rand.NewPCG(1, 2))
	for range 10000 {
		times = append(times, time.Unix(r.Int64N(1<<36)-1<<35, r.Int64N(1e9)).In(east))
	}
	for _, at := range times {
		require.Equal(t, at.UTC().Format(Layout), Micro(at), "%v", at)
	}
}

func BenchmarkMicro(b *testing.B) {
	at := time.Date(2026, 3, 1, 12, 0, 0, 123456789, time.UTC)
	b.Run("stamp", func(b *testing.B) {
		for b.Loop() {
			_ = Micro(at)
		}
	})
	b.Run("format", func(b *testing.B) {
		for b.Loop() {
			_ = at.UTC().Format(Layout)
		}
	})
}
