package main

import (
	"bufio"
	"flag"
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"
)

// clusterTrace turns on (d)'s timeline of the sending node's lobby sends (SDKPP_SEND_TRACE,
// server/lobbies/internal/sendtrace): where each send of the fan-out waited.
var clusterTrace = flag.Bool("cluster-trace", false, "(d): print the timeline of the sending node's lobby sends during the fan-out (SDKPP_SEND_TRACE)")

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
	at    [tStamps]int64 // nanoseconds since the node started; 0: not stamped
	n     int            // its group's number in its hold of the lock
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
