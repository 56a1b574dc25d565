package main

import (
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A latency round joins the send accepted during it, the sender's first publish after that
// send's commit, and the receiving node's reception of that publish's sequence number: its steps
// are the differences of their stamps. A round whose send, publish or reception is missing is
// left out.
func TestLatencyTimelineJoinsARoundsSendPublishAndReception(t *testing.T) {
	us := func(n int64) int64 { return 1_000_000_000 + n*1000 } // microseconds past a time
	var s tracedSend
	s.at = [tStamps]int64{tAccepted: us(100), tGrouped: us(110), tLocked: us(110), tCommitStart: us(120),
		tCommitted: us(320), tPublished: us(600), tAnswered: us(330)}
	earlier := s
	for i := range earlier.at {
		earlier.at[i] -= 50_000_000 // another round's
	}
	sends := []tracedSend{earlier, s}
	pubs := []busStep{
		{seq: 6, start: us(300), end: us(350)}, // before the commit: another message
		{seq: 7, start: us(330), end: us(590)},
	}
	recv := map[uint64]busStep{7: {seq: 7, start: us(530), end: us(550)}}
	rounds := []latencyRound{{sent: us(0), called: us(700)}, {sent: us(800), called: us(900)}} // the second traced nothing

	s.n = 1 // its hold's first group, the lock not kept: taken
	sends[1] = s
	ds, took := latencyTimeline(rounds, sends, pubs, recv)
	assert.Equal(t, 1, took, "the round's send took the lock")
	sends[1].kept = true
	_, took = latencyTimeline(rounds, sends, pubs, recv)
	assert.Zero(t, took, "the round's send found the lock kept")
	want := [latencySteps]time.Duration{stepRequest: 100, stepQueue: 20, stepCommit: 200, stepToPublish: 10,
		stepBus: 200, stepAck: 260, stepHandler: 20, stepCallback: 150}
	for k := range want {
		require.Len(t, ds[k], 1, stepNames[k])
		assert.Equal(t, want[k]*time.Microsecond, ds[k][0], stepNames[k])
	}

	delete(recv, 7) // the receiving node never read it
	ds, _ = latencyTimeline(rounds, sends, pubs, recv)
	assert.Empty(t, ds[stepRequest])
}

// The bus's trace is read back: the publishes in their order, the receptions by sequence number;
// a file with other columns is refused.
func TestReadBusTrace(t *testing.T) {
	path := filepath.Join(t.TempDir(), "bus")
	file := path + "." + strconv.Itoa(os.Getpid())
	require.NoError(t, os.WriteFile(file, []byte(busTraceHeader+"\npublish 3 10 20\nreceive 3 15 16\npublish 4 30 40\n"), 0o600))
	pubs, recv, err := readBusTrace(path, os.Getpid())
	require.NoError(t, err)
	assert.Equal(t, []busStep{{3, 10, 20}, {4, 30, 40}}, pubs)
	assert.Equal(t, map[uint64]busStep{3: {3, 15, 16}}, recv)

	require.NoError(t, os.WriteFile(file, []byte("seq start\n"), 0o600))
	_, _, err = readBusTrace(path, os.Getpid())
	assert.ErrorContains(t, err, "not the columns")
}
