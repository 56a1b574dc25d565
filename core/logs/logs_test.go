package logs

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A rotating file rotates when full, keeping one older file.
func TestFileRotates(t *testing.T) {
	dir := t.TempDir()
	const max = 8 << 20
	f, err := OpenRotating(dir, "cur.log", "old.log", max, Info, time.Now, func(err error) { t.Error(err) })
	require.NoError(t, err)
	defer f.Close()
	line := strings.Repeat("x", 1<<20)
	for range 9 {
		f.Write(line, Info)
	}
	old, err := os.Stat(filepath.Join(dir, "old.log"))
	require.NoError(t, err, "the full file was rotated")
	cur, err := os.Stat(filepath.Join(dir, "cur.log"))
	require.NoError(t, err)
	assert.LessOrEqual(t, old.Size(), int64(max))
	assert.Less(t, cur.Size(), old.Size())
}

// A logger writes to the sinks that take a severity, and says whether any did.
func TestLoggerBySeverity(t *testing.T) {
	dir := t.TempDir()
	f, err := OpenFile(dir, "a.log", Warning, func() time.Time { return time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC) })
	require.NoError(t, err)
	var l Logger
	l.SetFile(f)
	assert.False(t, l.Log("quiet", Info), "below the file's minimum")
	assert.True(t, l.Log("loud", Error))
	l.Close()
	raw, err := os.ReadFile(filepath.Join(dir, "a.log"))
	require.NoError(t, err)
	assert.Equal(t, "2026-03-01T00:00:00Z [Error] loud\n", string(raw))
	_, err = OpenFile("", "a.log", Info, time.Now)
	assert.ErrorContains(t, err, "empty log directory")
}

// A message of no one client reaches every live logger, and none once it is removed.
func TestLive(t *testing.T) {
	dir := t.TempDir()
	now := func() time.Time { return time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC) }
	var v Live
	var a, b Logger
	fa, err := OpenFile(filepath.Join(dir, "a"), "x.log", Info, now)
	require.NoError(t, err)
	a.SetFile(fa)
	v.Add(&a)
	v.Add(&b)
	assert.Equal(t, 2, v.Len())
	assert.True(t, v.Log("to all", Warning), "a took it")
	v.Remove(&a)
	assert.False(t, v.Log("to b only", Warning), "b has no sink")
	assert.Equal(t, 1, v.Len())
	a.Close()
	raw, err := os.ReadFile(filepath.Join(dir, "a", "x.log"))
	require.NoError(t, err)
	assert.Equal(t, "2026-03-01T00:00:00Z [Warning] to all\n", string(raw))
}

// recSink records what it is given and whether it was closed.
type recSink struct {
	min    Severity
	got    []string
	closed bool
}

func (s *recSink) Min() Severity                { return s.min }
func (s *recSink) Write(msg string, _ Severity) { s.got = append(s.got, msg) }
func (s *recSink) Close()                       { s.closed = true }

// A Fallback gives its sink what reaches its minimum; a new sink closes the old one.
func TestFallback(t *testing.T) {
	var f Fallback
	f.Write("nowhere", Error) // no sink, no standard error: dropped
	first, second := &recSink{min: Warning}, &recSink{min: Verbose}
	f.SetSink(first)
	f.Write("below", Info)
	f.Write("taken", Warning)
	f.Write("never", None)
	assert.Equal(t, []string{"taken"}, first.got)
	f.SetSink(second)
	assert.True(t, first.closed, "the replaced sink is closed")
	f.Write("verbose", Verbose)
	assert.Equal(t, []string{"verbose"}, second.got)
	f.SetSink(nil)
	assert.True(t, second.closed, "a cleared sink is closed")
}
