package main

import (
	"database/sql"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// floorRows reads the contents of a floor's committed rows in a data directory, in id order,
// without their padding.
func floorRows(t *testing.T, dir string) []string {
	t.Helper()
	db, err := sql.Open("sqlite", "file:"+dir+"/floor.db")
	require.NoError(t, err)
	defer db.Close()
	rows, err := db.Query(`SELECT content FROM lobby_messages ORDER BY id`)
	require.NoError(t, err)
	defer rows.Close()
	var out []string
	for rows.Next() {
		var c string
		require.NoError(t, rows.Scan(&c))
		out = append(out, strings.TrimRight(c, " "))
	}
	require.NoError(t, rows.Err())
	return out
}

// latencyRounds runs n rounds of l, each of which must reach the receiver, and returns the
// contents they sent, without their padding.
func latencyRounds(t *testing.T, l *floorLatency, n int) []string {
	t.Helper()
	var sent []string
	for i := range n {
		d, err := l.round(i)
		require.NoError(t, err, "round %d", i)
		assert.Positive(t, d)
		sent = append(sent, "latency floor "+strconv.Itoa(i))
	}
	return sent
}

// startSingleFloor serves the single-node floor on SQLite in a data directory, dir, and connects
// its latency rounds (l, sending to addr with POSTs). The test's end stops it.
func startSingleFloor(t *testing.T) (dir, addr string, l *floorLatency, stop func()) {
	dir = t.TempDir()
	addr, stop, err := serveLatFloor("sqlite:"+dir, "", false)
	require.NoError(t, err)
	t.Cleanup(stop)
	l, err = newFloorLatency(addr, addr, 300)
	require.NoError(t, err)
	t.Cleanup(l.Close)
	return dir, addr, l, stop
}

func TestSingleFloorCommitsAndDelivers(t *testing.T) {
	dir, _, l, stop := startSingleFloor(t)
	assert.NotEmpty(t, l.pad, "the contents are padded to the dispatches' size")
	n := warmup + 3
	sent := latencyRounds(t, l, n)
	l.Close()
	require.Len(t, l.steps[stepCommit], n-warmup, "the steps of the rounds after the warmup")
	assert.Empty(t, l.steps[stepBus], "no bus")
	for _, d := range l.steps[stepCommit] {
		assert.Positive(t, d)
	}
	stop()
	assert.Equal(t, sent, floorRows(t, dir), "every message committed once, in order")
}

// (a)'s floor sends over a WebSocket: each message reaches the receiver, is committed once, in
// order, and answered (a round reads its answer); a send whose commit fails is answered with
// its error, which the round reports.
func TestSingleFloorOverWebSocketDeliversThenCommits(t *testing.T) {
	dir, addr, l, _ := startSingleFloor(t)
	require.NoError(t, l.sendOverWebSocket(addr))
	sent := latencyRounds(t, l, warmup+3)
	assert.Empty(t, l.steps[stepCommit], "no steps over a WebSocket")
	assert.Equal(t, sent, floorRows(t, dir), "every message committed once, in order")

	db, err := sql.Open("sqlite", "file:"+dir+"/floor.db")
	require.NoError(t, err)
	defer db.Close()
	_, err = db.Exec(`DROP TABLE lobby_messages`)
	require.NoError(t, err)
	_, err = l.round(warmup + 3)
	require.ErrorContains(t, err, "commit", "the commit's failure, answered")
}

func TestClusterFloorCommitsPublishesAndDelivers(t *testing.T) {
	ns, err := startNATS()
	require.NoError(t, err)
	defer ns.stop()
	dir := t.TempDir()
	a, stopA, err := serveLatFloor("sqlite:"+dir, ns.url, false) // PostgreSQL's stand-in: the same statement
	require.NoError(t, err)
	defer stopA()
	b, stopB, err := serveLatFloor("", ns.url, false)
	require.NoError(t, err)
	defer stopB()
	l, err := newFloorLatency(a, b, 0)
	require.NoError(t, err)
	defer l.Close()
	n := warmup + 3
	sent := latencyRounds(t, l, n) // each read by B from the stream and written to the receiver
	require.Len(t, l.steps[stepAck], n-warmup)
	for k, d := range l.steps[stepAck] {
		assert.Positive(t, d, "each publish waits for its acknowledgement")
		assert.Positive(t, l.steps[stepBus][k], "B reads the message after its publish began")
	}
	stopA()
	assert.Equal(t, sent, floorRows(t, dir), "every message committed once, in order")
}

func TestHopRounds(t *testing.T) {
	y, stopY, err := serveHop("")
	require.NoError(t, err)
	defer stopY()
	x, stopX, err := serveHop(y)
	require.NoError(t, err)
	defer stopX()
	h, err := newHopRounds(x)
	require.NoError(t, err)
	defer h.Close()
	n := warmup + 3
	var hops []time.Duration
	for i := range n {
		d, err := h.round(i)
		require.NoError(t, err)
		hops = append(hops, d)
	}
	require.Len(t, h.rtts, n-warmup)
	for i, rtt := range h.rtts {
		assert.LessOrEqual(t, hops[warmup+i], rtt, "one way within its round trip")
	}
}

func TestFloorSteps(t *testing.T) {
	at := time.Unix(0, 1000)
	for _, c := range []struct {
		name string
		st   sendStamps
		a    floorArrival
		want [latencySteps]time.Duration
	}{
		{"one node: the commit's end is its delivery's start", sendStamps{110, 120, 300, 0, 0},
			floorArrival{at: at, received: 300, writing: 310},
			[latencySteps]time.Duration{stepRequest: 10, stepQueue: 10, stepCommit: 180, stepHandler: 10, stepCallback: 690}},
		{"three nodes: the bus from the publish's start", sendStamps{110, 120, 300, 305, 600},
			floorArrival{at: at, received: 500, writing: 520},
			[latencySteps]time.Duration{stepRequest: 10, stepQueue: 10, stepCommit: 180, stepToPublish: 5, stepBus: 195,
				stepAck: 295, stepHandler: 20, stepCallback: 480}},
	} {
		assert.Equal(t, c.want, floorSteps(100, c.st, c.a), c.name)
	}
}

func TestParseStamps(t *testing.T) {
	r, w, err := parseDeliveryStamps([]byte("[1,12,34]"))
	require.NoError(t, err)
	assert.Equal(t, [2]int64{12, 34}, [2]int64{r, w})
	for _, bad := range []string{"[1,12]", "[2,12,34]", "[1,12,34", "[1,a,34]", `{"op":0}`} {
		_, _, err := parseDeliveryStamps([]byte(bad))
		assert.Error(t, err, bad)
	}
	st, err := parseSendStamps("1,2,3,4,5")
	require.NoError(t, err)
	assert.Equal(t, sendStamps{1, 2, 3, 4, 5}, st)
	for _, bad := range []string{"", "1,2,3,4", "1,2,3,4,x", "1,2,3,4,5,6"} {
		_, err := parseSendStamps(bad)
		assert.Error(t, err, bad)
	}
}
