// Package sendtrace records a timeline of a cluster's lobby sends, a debugging aid for the
// fan-out's waits: when the environment variable SDKPP_SEND_TRACE names a file, each send's
// steps are stamped (nanoseconds since the process started) and Flush writes them to that file
// with the process id appended, one line per send under a header naming the columns. Without
// it every call does nothing.
package sendtrace

import (
	"bufio"
	"fmt"
	"os"
	"sync"
	"time"
)

// Stamp is a step of a send.
type Stamp int

// The steps of a send, in their order.
const (
	Accepted    Stamp = iota // the request handed the message to the send queue
	Grouped                  // a send of its group began
	Locked                   // its hold of the lobby's order lock began (the hold's first group only)
	CommitStart              // its group's commit began
	Committed                // its group committed and its senders are answered
	Published                // its group's publish ended
	Answered                 // its request was answered
	stamps
)

// header names the columns Flush writes.
const header = "accepted grouped locked commit_start committed published answered group_size group_in_hold lock_kept group"

// Send is one send's record; a nil *Send records nothing.
type Send struct {
	at    [stamps]int64
	size  int   // its group's size
	n     int   // its group's number in its hold of the lock
	kept  bool  // its hold took a lock the node kept (package lockpark)
	group int64 // its group's number in the process
}

// Trace is a process's record of its sends.
type Trace struct {
	path  string
	start time.Time

	mu     sync.Mutex
	sends  []*Send
	groups int64
}

// Default is the trace the environment variable SDKPP_SEND_TRACE turns on.
var Default = New(os.Getenv("SDKPP_SEND_TRACE"))

// New returns a trace written to path plus the process id; it records nothing with path empty.
func New(path string) *Trace { return &Trace{path: path, start: time.Now()} }

// MaxSends bounds the sends a trace holds between flushes: past it, sends are not recorded.
const MaxSends = 1 << 20

// Send returns a new send's record, stamped Accepted; nil when the trace is off or full.
func (t *Trace) Send() *Send {
	if t.path == "" {
		return nil
	}
	s := &Send{}
	t.mu.Lock()
	defer t.mu.Unlock()
	if len(t.sends) >= MaxSends {
		return nil
	}
	s.at[Accepted] = t.now()
	t.sends = append(t.sends, s)
	return s
}

func (t *Trace) now() int64 { return int64(time.Since(t.start)) }

// Mark stamps step st of each send of group (each's record by rec) now, unless it was stamped
// already.
func Mark[T any](t *Trace, group []T, rec func(T) *Send, st Stamp) {
	if t.path == "" {
		return
	}
	now := t.now()
	for _, v := range group {
		if s := rec(v); s != nil && s.at[st] == 0 {
			s.at[st] = now
		}
	}
}

// Group numbers group, the n-th group of a hold of the lock (kept: taken from the node's park),
// records its size with each of its sends, and stamps them Grouped unless they are already.
func Group[T any](t *Trace, group []T, rec func(T) *Send, n int, kept bool) {
	if t.path == "" {
		return
	}
	t.mu.Lock()
	t.groups++
	g := t.groups
	t.mu.Unlock()
	Mark(t, group, rec, Grouped)
	for _, v := range group {
		if s := rec(v); s != nil {
			s.size, s.n, s.kept, s.group = len(group), n, kept, g
		}
	}
}

// Flush writes the sends recorded so far, and forgets them.
func (t *Trace) Flush() error {
	if t.path == "" {
		return nil
	}
	t.mu.Lock()
	sends := t.sends
	t.sends = nil
	t.mu.Unlock()
	f, err := os.Create(fmt.Sprintf("%s.%d", t.path, os.Getpid()))
	if err != nil {
		return fmt.Errorf("sendtrace: %w", err)
	}
	w := bufio.NewWriter(f)
	fmt.Fprintln(w, header)
	for _, s := range sends {
		for _, at := range s.at {
			fmt.Fprint(w, at, " ")
		}
		fmt.Fprintln(w, s.size, s.n, s.kept, s.group)
	}
	if err := w.Flush(); err != nil {
		f.Close()
		return fmt.Errorf("sendtrace: %w", err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("sendtrace: %w", err)
	}
	return nil
}

// Stamp stamps step st of s now.
func (t *Trace) Stamp(s *Send, st Stamp) {
	if s != nil {
		s.at[st] = t.now()
	}
}
