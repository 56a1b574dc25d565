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

// work is traced work, as package lobbies' cluster sends are: it embeds its record.
type work struct{ *Send }

// lines reads the lines tr wrote.
func lines(t *testing.T, path string) []string {
	t.Helper()
	raw, err := os.ReadFile(path + "." + strconv.Itoa(os.Getpid()))
	require.NoError(t, err)
	return strings.Split(strings.TrimSpace(string(raw)), "\n")
}

// A send is written once it has been both answered and published: its stamps in their order,
// then its group's size, number in the hold, kept lock and number. A step stamped twice keeps
// its first stamp; a hold's first group is stamped Locked when it is numbered, a later one not.
func TestTraceWritesEachSendOnceAnsweredAndPublished(t *testing.T) {
	path := filepath.Join(t.TempDir(), "trace")
	tr := New(path)
	a, b := &work{tr.Send()}, &work{tr.Send()}
	group := []*work{a, b}
	Mark(tr, group, Grouped)
	first := a.at[Grouped]
	Group(tr, group, 1, true)
	assert.Equal(t, first, a.at[Grouped], "a step keeps its first stamp")
	Mark(tr, group, CommitStart)
	Mark(tr, group, Committed)
	tr.Stamp(a, Answered) // answered at the commit: not written before its publish
	_, err := os.Stat(path + "." + strconv.Itoa(os.Getpid()))
	require.ErrorIs(t, err, os.ErrNotExist, "nothing is written before a send is published")
	Mark(tr, group, Published)
	tr.Stamp(b, Answered)
	tr.Stamp(b, Answered) // written once

	c := &work{tr.Send()} // a hold's second group
	Group(tr, []*work{c}, 2, false)
	assert.Positive(t, c.at[Grouped])
	assert.Zero(t, c.at[Locked])

	got := lines(t, path)
	require.Len(t, got, 3)
	assert.Equal(t, Header, got[0])
	for _, line := range got[1:] {
		f := strings.Fields(line)
		require.Len(t, f, int(stamps)+4)
		var last int64
		for i, v := range f[:stamps] {
			at, err := strconv.ParseInt(v, 10, 64)
			require.NoError(t, err)
			assert.Positive(t, at, "column %d", i)
			if Stamp(i) != Answered { // a sender is answered at its group's commit
				assert.GreaterOrEqual(t, at, last, "stamps in their order")
				last = at
			}
		}
		assert.Equal(t, []string{"2", "1", "true", "1"}, f[stamps:])
	}
}

// Off, a trace records nothing and writes nothing; work without a record is left alone.
func TestTraceOff(t *testing.T) {
	tr := New("")
	s := tr.Send()
	assert.Nil(t, s)
	w := &work{s}
	Mark(tr, []*work{w}, Grouped)
	Group(tr, []*work{w}, 1, false)
	tr.Stamp(w, Answered)
	assert.Nil(t, tr.file)

	on := New(filepath.Join(t.TempDir(), "trace"))
	untraced := []int{1, 2}
	Mark(on, untraced, Published)
	Group(on, untraced, 1, false)
	on.Stamp(&work{}, Answered) // a nil record
	assert.Nil(t, on.file)
}
