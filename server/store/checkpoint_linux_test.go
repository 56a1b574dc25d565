package store

import (
	"context"
	"fmt"
	"os"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"
)

// The checkpoints run on a thread of their own, checkpointNice lower in priority than the
// service's threads, and that thread ends with the checkpointer: no other goroutine runs on it.
func TestCheckpointerThreadIsLowerPriority(t *testing.T) {
	ctx := context.Background()
	runtime.LockOSThread() // to compare this thread's priority before and after
	defer runtime.UnlockOSThread()
	raw, err := unix.Getpriority(unix.PRIO_PROCESS, 0) // this thread's, as the service's threads have
	require.NoError(t, err)
	own := 20 - raw
	s, err := OpenSQLite(ctx, t.TempDir())
	require.NoError(t, err)
	defer s.Close()
	c := s.checkpoints
	require.Eventually(t, func() bool { return c.thread.Load() != 0 }, 10*time.Second, time.Millisecond)
	require.Nil(t, c.lowered.Load())
	tid := int(c.thread.Load())
	assert.Equal(t, min(own+checkpointNice, 19), threadNice(t, tid))
	assert.Equal(t, own, threadNice(t, unix.Gettid()), "only the checkpointer's thread is lowered")

	c.commits.Store(checkpointCommits - 1)
	c.committed()
	require.Eventually(t, func() bool { return c.ran.Load() == 1 }, 10*time.Second, time.Millisecond)
	assert.Nil(t, c.failed.Load())

	require.NoError(t, s.Close())
	if tid == os.Getpid() {
		return // the process's first thread: the runtime parks it for good instead of ending it
	}
	task := fmt.Sprintf("/proc/self/task/%d", tid)
	require.Eventually(t, func() bool { _, err := os.Stat(task); return os.IsNotExist(err) }, 10*time.Second, time.Millisecond,
		"the thread ends with the checkpointer")
}

// threadNice reads a thread's nice value from /proc (the 19th field of its stat).
func threadNice(t *testing.T, tid int) int {
	b, err := os.ReadFile(fmt.Sprintf("/proc/self/task/%d/stat", tid))
	require.NoError(t, err)
	s := string(b)
	fields := strings.Fields(s[strings.LastIndexByte(s, ')')+1:]) // the name may hold spaces
	n, err := strconv.Atoi(fields[16])
	require.NoError(t, err)
	return n
}
