package sendtrace

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

type work struct{ tr *Send }

func rec(w *work) *Send { return w.tr }

// A trace writes one line per send: its stamps in their order, then its group's size, number
// in the hold, kept lock and number; a step stamped twice keeps its first stamp.
func TestTraceWritesEachSend(t *testing.T) {
	path := filepath.Join(t.TempDir(), "trace")
	tr := New(path)
	a, b := &work{tr.Send()}, &work{tr.Send()}
	group := []*work{a, b}
	for _, st := range []Stamp{Grouped, Locked} {
		Mark(tr, group, rec, st)
	}
	Group(tr, group, rec, 1, true)
	first := a.tr.at[Grouped]
	Mark(tr, group, rec, Grouped)
	assert.Equal(t, first, a.tr.at[Grouped], "a step keeps its first stamp")
	for _, st := range []Stamp{CommitStart, Committed, Published} {
		Mark(tr, group, rec, st)
	}
	Group(tr, group[1:], rec, 2, false) // b went on as the hold's second group
	tr.Stamp(a.tr, Answered)
	tr.Stamp(b.tr, Answered)
	require.NoError(t, tr.Flush())

	raw, err := os.ReadFile(path + "." + strconv.Itoa(os.Getpid()))
	require.NoError(t, err)
	lines := strings.Split(strings.TrimSpace(string(raw)), "\n")
	require.Len(t, lines, 3)
	assert.Equal(t, header, lines[0])
	for i, want := range [][]string{{"2", "1", "true", "1"}, {"1", "2", "false", "2"}} {
		f := strings.Fields(lines[i+1])
		require.Len(t, f, int(stamps)+4)
		var last int64
		for _, v := range f[:stamps] {
			at, err := strconv.ParseInt(v, 10, 64)
			require.NoError(t, err)
			assert.GreaterOrEqual(t, at, last, "stamps in their order")
			last = at
		}
		assert.Positive(t, last)
		assert.Equal(t, want, f[stamps:])
	}

	require.NoError(t, tr.Flush())
	raw, err = os.ReadFile(path + "." + strconv.Itoa(os.Getpid()))
	require.NoError(t, err)
	assert.Equal(t, header+"\n", string(raw), "a flush forgets what it wrote")
}

// A hold's later group is stamped Grouped when it is numbered.
func TestGroupStampsLaterGroups(t *testing.T) {
	tr := New(filepath.Join(t.TempDir(), "trace"))
	w := &work{tr.Send()}
	Group(tr, []*work{w}, rec, 2, false)
	assert.Positive(t, w.tr.at[Grouped])
	assert.Equal(t, 2, w.tr.n)
}

// Off, a trace records nothing and writes nothing.
func TestTraceOff(t *testing.T) {
	tr := New("")
	s := tr.Send()
	assert.Nil(t, s)
	w := &work{s}
	Mark(tr, []*work{w}, rec, Grouped)
	Group(tr, []*work{w}, rec, 1, false)
	tr.Stamp(s, Answered)
	require.NoError(t, tr.Flush())
	assert.Empty(t, tr.sends)
}
