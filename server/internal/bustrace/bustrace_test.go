package bustrace

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Each record is a line under the header: its kind, sequence number, and start and end in Unix
// nanoseconds, the end read when it is recorded.
func TestTraceWritesALinePerRecord(t *testing.T) {
	path := filepath.Join(t.TempDir(), "trace")
	tr := New(path)
	require.True(t, tr.On())
	start := tr.Now()
	require.False(t, start.IsZero())
	tr.Record(Publish, 7, start)
	tr.Record(Receive, 7, start.Add(time.Millisecond))

	raw, err := os.ReadFile(path + "." + strconv.Itoa(os.Getpid()))
	require.NoError(t, err)
	got := strings.Split(strings.TrimSpace(string(raw)), "\n")
	require.Len(t, got, 3)
	assert.Equal(t, Header, got[0])
	for i, kind := range []string{Publish, Receive} {
		f := strings.Fields(got[i+1])
		require.Len(t, f, 4)
		assert.Equal(t, kind, f[0])
		assert.Equal(t, "7", f[1])
		s, err := strconv.ParseInt(f[2], 10, 64)
		require.NoError(t, err)
		e, err := strconv.ParseInt(f[3], 10, 64)
		require.NoError(t, err)
		assert.Equal(t, start.Add(time.Duration(i)*time.Millisecond).UnixNano(), s)
		if i == 0 {
			assert.GreaterOrEqual(t, e, s, "a publish ends after it starts")
		}
	}
}

// Off, a trace reads no clock and opens no file.
func TestTraceOffRecordsNothing(t *testing.T) {
	tr := New("")
	assert.False(t, tr.On())
	assert.True(t, tr.Now().IsZero())
	tr.Record(Publish, 1, time.Now())
	assert.Nil(t, tr.file)
}
