package device_test

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"sdkpp/audio/pcm"
)

// gap is a run of silence the capture has where the playback had none.
type gap struct{ At, Samples int }

// matchWithSilenceGaps checks that captured begins with every sample of played, in order and
// unchanged, allowing only runs of zeros, of any length and any distance apart, to be inserted
// between them. It returns those runs. Its error names the first played sample that neither came
// back nor follows inserted zeros, or says how much of played is missing when the capture ends
// first. A run inserted inside played silence is reported where that silence ends.
//
// Matching each sample as soon as it can is exact: a zero that could be either a played zero or
// an inserted one is taken as played, and the inserted zeros after it then stand in the same
// place. So a mismatch is inserted silence exactly when the captured sample there is a zero, and
// the whole run of zeros is the gap (the played sample it stands before is not a zero).
func matchWithSilenceGaps(played, captured []int16) ([]gap, error) {
	var gaps []gap
	j := 0
	for i := 0; i < len(played); {
		if j == len(captured) {
			return gaps, fmt.Errorf("the capture ends after %d of %d played samples, %d samples of silence gaps %v after them",
				i, len(played), j-i, gaps)
		}
		if captured[j] == played[i] {
			i++
			j++
			continue
		}
		start := j
		for j < len(captured) && captured[j] == 0 {
			j++
		}
		if j == start {
			return gaps, fmt.Errorf("played sample %d (%d) became %d at captured %d, not a silence gap", i, played[i], captured[start], start)
		}
		if j == len(captured) {
			return gaps, fmt.Errorf("the capture ends in %d samples of silence after %d of %d played samples, %d samples of silence gaps %v before",
				j-start, i, len(played), start-i, gaps)
		}
		gaps = append(gaps, gap{At: i, Samples: j - start})
	}
	return gaps, nil
}

// withGaps returns played with runs of zeros inserted before the given played samples.
func withGaps(played []int16, gaps ...gap) []int16 {
	var out []int16
	i := 0
	for _, g := range gaps {
		out = append(out, played[i:g.At]...)
		out = append(out, make([]int16, g.Samples)...)
		i = g.At
	}
	return append(out, played[i:]...)
}

// noisy is n samples that are never zero, so that every inserted gap is found where it was put.
func noisy(n int, seed uint64) []int16 {
	r := rand.New(rand.NewPCG(seed, 1))
	s := make([]int16, n)
	for i := range s {
		v := int16(1 + r.IntN(3000))
		if r.IntN(2) == 0 {
			v = -v
		}
		s[i] = v
	}
	return s
}

func TestMatchWithSilenceGaps(t *testing.T) {
	played := noisy(3*pcm.SampleRate, 1)
	// A stretch of played silence, as speech has between words.
	withSilence := slices.Clone(played)
	clear(withSilence[20000:20100])
	second := pcm.SampleRate

	for _, tc := range []struct {
		name     string
		played   []int16
		captured []int16
		gaps     []gap
	}{
		{"unchanged", played, played, nil},
		{"unchanged, more captured", played, append(slices.Clone(played), make([]int16, 500)...), nil},
		{"one period", played, withGaps(played, gap{1000, pcm.PeriodSamples}), []gap{{1000, pcm.PeriodSamples}}},
		{"a single sample", played, withGaps(played, gap{7, 1}), []gap{{7, 1}}},
		{"at the start", played, withGaps(played, gap{0, 100}), []gap{{0, 100}}},
		{"longer than a second", played, withGaps(played, gap{5000, second + 2345}), []gap{{5000, second + 2345}}},
		{"several long ones", played, withGaps(played, gap{100, 3 * second}, gap{40000, second / 2}, gap{100000, 2 * second}),
			[]gap{{100, 3 * second}, {40000, second / 2}, {100000, 2 * second}}},
		{"inside played silence, reported where it ends", withSilence, withGaps(withSilence, gap{20050, 300}), []gap{{20100, 300}}},
		{"after played silence", withSilence, withGaps(withSilence, gap{20100, 300}), []gap{{20100, 300}}},
		{"a sample apart", played, withGaps(played, gap{3000, 200}, gap{3001, 5}), []gap{{3000, 200}, {3001, 5}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			gaps, err := matchWithSilenceGaps(tc.played, tc.captured)
			require.NoError(t, err)
			assert.Equal(t, tc.gaps, gaps)
		})
	}
}

// Random patterns of gaps, up to seconds long and from one sample to 20,000 apart, are found
// exactly.
func TestMatchWithSilenceGapsRandomPatterns(t *testing.T) {
	played := noisy(2*pcm.SampleRate, 2)
	r := rand.New(rand.NewPCG(3, 4))
	for round := range 100 {
		var want []gap
		at := 0
		for {
			at += 1 + r.IntN(20000)
			if at >= len(played) {
				break
			}
			want = append(want, gap{At: at, Samples: 1 + r.IntN(2*pcm.SampleRate)})
		}
		gaps, err := matchWithSilenceGaps(played, withGaps(played, want...))
		require.NoError(t, err, "round %d", round)
		require.Equal(t, want, gaps, "round %d", round)
	}
}

// What inserted silence cannot explain is an error, never a panic: a changed sample, a sample
// lost to zero, and a capture that ends before the played samples do (inserted silence pushed
// them past its end).
func TestMatchWithSilenceGapsFailures(t *testing.T) {
	played := noisy(pcm.SampleRate, 5)
	changed := slices.Clone(played)
	changed[500]++
	zeroed := slices.Clone(played)
	zeroed[700] = 0
	long := withGaps(played, gap{1000, int(1.2 * pcm.SampleRate)})
	for _, tc := range []struct {
		name     string
		captured []int16
		err      string
	}{
		{"nothing captured", nil, "the capture ends after 0 of 48000 played samples"},
		{"a changed sample", changed, fmt.Sprintf("played sample 500 (%d) became %d at captured 500, not a silence gap", played[500], changed[500])},
		{"a sample lost to zero", zeroed, fmt.Sprintf("played sample 700 (%d) became %d at captured 701, not a silence gap", played[700], played[701])},
		{"a gap longer than the capture has left", long[:31000], "the capture ends in 30000 samples of silence after 1000 of 48000 played samples, 0 samples of silence gaps [] before"},
		{"the capture ends mid-speech", withGaps(played, gap{1000, 480})[:40000], "the capture ends after 39520 of 48000 played samples, 480 samples of silence gaps [{1000 480}] after them"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			require.NotPanics(t, func() {
				_, err := matchWithSilenceGaps(played, tc.captured)
				require.Error(t, err)
				assert.Contains(t, err.Error(), tc.err)
			})
		})
	}
}
