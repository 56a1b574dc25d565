package main

import (
	"bufio"
	"errors"
	"flag"
	"fmt"
	"math"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"
)

// clusterTrace turns on (d)'s timeline of the sending node's lobby sends (SDKPP_SEND_TRACE,
// server/lobbies/internal/sendtrace): where each send of the fan-out waited.
var clusterTrace = flag.Bool("cluster-trace", false, "(d): print where the latency rounds' time went (SDKPP_SEND_TRACE, SDKPP_BUS_TRACE) and the timeline of the sending node's lobby sends during the fan-out")

// The columns of a send's line in the trace (sendtrace's header, which readSendTrace checks):
// its stamps, then its group's size, number in its hold of the lock, kept lock and number.
const traceHeader = "accepted grouped locked commit_start committed published answered group_size group_in_hold lock_kept group"

// The stamps' columns.
const (
	tAccepted = iota
	tGrouped
	tLocked
	tCommitStart
	tCommitted
	tPublished
	tAnswered
	tStamps
)

// tracedSend is a send of the trace.
type tracedSend struct {
	at    [tStamps]int64 // Unix nanoseconds; 0: not stamped
	n     int            // its group's number in its hold of the lock
	kept  bool           // its hold's lock was kept from an earlier group (no round trip to take it)
	group int64
}

// readSendTrace reads the last last sends of the trace the node pid wrote to path.pid.
func readSendTrace(path string, pid, last int) ([]tracedSend, error) {
	f, err := os.Open(path + "." + strconv.Itoa(pid))
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var sends []tracedSend
	in := bufio.NewScanner(f)
	if !in.Scan() || in.Text() != traceHeader {
		return nil, fmt.Errorf("send trace: not the columns this program reads: %q", in.Text())
	}
	for in.Scan() {
		fs := strings.Fields(in.Text())
		if len(fs) != tStamps+4 {
			return nil, fmt.Errorf("send trace: %d fields in %q", len(fs), in.Text())
		}
		var s tracedSend
		for i := range tStamps {
			if s.at[i], err = strconv.ParseInt(fs[i], 10, 64); err != nil {
				return nil, fmt.Errorf("send trace: %w", err)
			}
		}
		s.n, _ = strconv.Atoi(fs[tStamps+1])
		s.kept = fs[tStamps+2] == "true"
		s.group, _ = strconv.ParseInt(fs[tStamps+3], 10, 64)
		sends = append(sends, s)
	}
	if err := in.Err(); err != nil {
		return nil, err
	}
	return sends[max(len(sends)-last, 0):], nil
}

// printSendTimeline prints, for the sends of a fan-out that took perMessage a message, the
// median and 90th percentile of each step of a send, and the time the node's send goroutine
// spent per message taking the lock, committing and publishing.
func printSendTimeline(sends []tracedSend, perMessage time.Duration) {
	if len(sends) == 0 {
		return
	}
	step := func(from, to int, firstOnly bool) string {
		var ds []time.Duration
		for _, s := range sends {
			if s.at[from] != 0 && s.at[to] != 0 && (!firstOnly || s.n == 1) {
				ds = append(ds, time.Duration(s.at[to]-s.at[from]))
			}
		}
		if len(ds) == 0 {
			return "-"
		}
		slices.Sort(ds)
		return fmt.Sprintf("%v / %v", ds[len(ds)/2].Round(time.Microsecond), ds[len(ds)*9/10].Round(time.Microsecond))
	}
	// Each group once: its lock (a hold's first), commit and publish, from its first send.
	var lock, commit, publish time.Duration
	groups := map[int64]bool{}
	for _, s := range sends {
		if groups[s.group] {
			continue
		}
		groups[s.group] = true
		if s.n == 1 && s.at[tLocked] != 0 {
			lock += time.Duration(s.at[tLocked] - s.at[tGrouped])
		}
		if s.at[tCommitted] != 0 && s.at[tCommitStart] != 0 {
			commit += time.Duration(s.at[tCommitted] - s.at[tCommitStart])
		}
		if s.at[tPublished] != 0 && s.at[tCommitted] != 0 {
			publish += time.Duration(s.at[tPublished] - s.at[tCommitted])
		}
	}
	n := time.Duration(len(sends))
	fmt.Printf("        the sending node's sends (%d, in %d groups, %.1f each), p50 / p90: before its group %s, the lock (a hold's first group) %s,\n",
		len(sends), len(groups), float64(len(sends))/float64(len(groups)), step(tAccepted, tGrouped, false), step(tGrouped, tLocked, true))
	fmt.Printf("          commit %s, publish %s, answer after the commit %s, in all %s\n",
		step(tCommitStart, tCommitted, false), step(tCommitted, tPublished, false), step(tCommitted, tAnswered, false), step(tAccepted, tAnswered, false))
	fmt.Printf("          its send goroutine per message: lock %v, commit %v, publish %v, of %v a message\n",
		(lock / n).Round(time.Microsecond), (commit / n).Round(time.Microsecond), (publish / n).Round(time.Microsecond), perMessage.Round(time.Microsecond))
}

// The columns of the bus's trace (SDKPP_BUS_TRACE, server/internal/bustrace), which
// readBusTrace checks.
const busTraceHeader = "kind seq start end"

// busStep is a line of the bus's trace: a publish (start, acknowledged) or a message a node's
// subscription handed to its handler (received, handler returned), in Unix nanoseconds.
type busStep struct {
	seq        uint64
	start, end int64
}

// readBusTrace reads the publishes (in their order) and the receptions (by sequence number) of
// the trace the node pid wrote to path.pid.
func readBusTrace(path string, pid int) (pubs []busStep, recv map[uint64]busStep, err error) {
	f, err := os.Open(path + "." + strconv.Itoa(pid))
	if err != nil {
		return nil, nil, err
	}
	defer f.Close()
	in := bufio.NewScanner(f)
	if !in.Scan() || in.Text() != busTraceHeader {
		return nil, nil, fmt.Errorf("bus trace: not the columns this program reads: %q", in.Text())
	}
	recv = map[uint64]busStep{}
	for in.Scan() {
		fs := strings.Fields(in.Text())
		if len(fs) != 4 {
			return nil, nil, fmt.Errorf("bus trace: %d fields in %q", len(fs), in.Text())
		}
		var s busStep
		var err1, err2, err3 error
		s.seq, err1 = strconv.ParseUint(fs[1], 10, 64)
		s.start, err2 = strconv.ParseInt(fs[2], 10, 64)
		s.end, err3 = strconv.ParseInt(fs[3], 10, 64)
		if err := errors.Join(err1, err2, err3); err != nil {
			return nil, nil, fmt.Errorf("bus trace: %w", err)
		}
		switch fs[0] {
		case "publish":
			pubs = append(pubs, s)
		case "receive":
			recv[s.seq] = s
		}
	}
	return pubs, recv, in.Err()
}

// latencyRound is a round of (d)'s latency: when its send began and its callback ran, in Unix
// nanoseconds.
type latencyRound struct{ sent, called int64 }

// The steps of a latency round printLatencyTimeline prints, in their order.
const (
	stepRequest   = iota // the HTTP send to the send queue
	stepQueue            // to the commit's start
	stepCommit           // the commit
	stepToPublish        // from the commit to the publish's start
	stepBus              // from the publish's start to the receiving node's handler
	stepAck              // the publish's acknowledgement, beside the bus's way
	stepHandler          // the receiving node's handler
	stepCallback         // from the handler's end to the callback
	latencySteps
)

// stepNames name the steps.
var stepNames = [latencySteps]string{"request", "to commit", "commit", "to publish", "bus to the receiving node",
	"(publish acked)", "its handler", "to the callback"}

// latencyTimeline joins each round to its send (accepted during the round), the send to its
// publish (the sender's first to start after the send's commit, during the round) and the
// publish to the receiving node's reception of it (by sequence number), and returns each step's
// durations, of the rounds it could join, and how many of those rounds' sends took their lobby's
// order lock (a round trip to PostgreSQL before the commit) rather than finding it kept.
func latencyTimeline(rounds []latencyRound, sends []tracedSend, pubs []busStep, recv map[uint64]busStep) (ds [latencySteps][]time.Duration, took int) {
	for _, r := range rounds {
		i := slices.IndexFunc(sends, func(s tracedSend) bool { return s.at[tAccepted] >= r.sent && s.at[tAccepted] <= r.called })
		if i < 0 {
			continue
		}
		s := sends[i]
		j := slices.IndexFunc(pubs, func(p busStep) bool { return p.start >= s.at[tCommitted] && p.start <= r.called })
		if j < 0 {
			continue
		}
		p := pubs[j]
		got, ok := recv[p.seq]
		if !ok {
			continue
		}
		if s.n == 1 && !s.kept {
			took++
		}
		for k, d := range [latencySteps]int64{s.at[tAccepted] - r.sent, s.at[tCommitStart] - s.at[tAccepted],
			s.at[tCommitted] - s.at[tCommitStart], p.start - s.at[tCommitted], got.start - p.start, p.end - p.start,
			got.end - got.start, r.called - got.end} {
			ds[k] = append(ds[k], time.Duration(d))
		}
	}
	return ds, took
}

// printLatencyTimeline prints where (d)'s latency rounds spent their time, step by step (p50 /
// p90), from the sending node's send trace and bus trace (sender) and the receiving node's bus
// trace (receiver), written to path and path+"-bus": the request to the send queue, the wait for
// the commit, the commit, the wait for the publish, the bus to the receiving node's handler (the
// publish's acknowledgement beside it), the handler (decode, push, the writes it does itself),
// and the rest to the callback (the socket, the SDK).
func printLatencyTimeline(path string, sender, receiver int, rounds []latencyRound) error {
	sends, err := readSendTrace(path, sender, math.MaxInt)
	if err != nil {
		return err
	}
	pubs, _, err := readBusTrace(path+"-bus", sender)
	if err != nil {
		return err
	}
	_, recv, err := readBusTrace(path+"-bus", receiver)
	if err != nil {
		return err
	}
	ds, took := latencyTimeline(rounds, sends, pubs, recv)
	joined := len(ds[0])
	if joined == 0 {
		return fmt.Errorf("latency timeline: no round found in the traces")
	}
	// The node keeps a lobby's order lock a moment after a group (lobbies.Service.LockLinger):
	// rounds further apart take it again each time, in the wait before the commit.
	fmt.Printf("        where a round's time went (%d of %d rounds traced; %d of them took the lobby's order lock, the others found it kept), p50 / p90:\n",
		joined, len(rounds), took)
	printSteps("          ", ds, stepNames)
	return nil
}

// printSteps prints each step's p50 / p90 of ds, on two lines after indent, with names; a step
// without durations is left out.
func printSteps(indent string, ds [latencySteps][]time.Duration, names [latencySteps]string) {
	fmt.Print(indent)
	for k := range ds {
		if len(ds[k]) > 0 {
			slices.Sort(ds[k])
			fmt.Printf("%s %v / %v; ", names[k], ds[k][len(ds[k])/2].Round(time.Microsecond), ds[k][len(ds[k])*9/10].Round(time.Microsecond))
		}
		if k == stepToPublish {
			fmt.Printf("\n%s", indent)
		}
	}
	fmt.Println()
}
