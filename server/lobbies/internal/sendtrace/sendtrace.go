// Package sendtrace records a timeline of a cluster's lobby sends, a debugging aid for the
// fan-out's waits: when the environment variable SDKPP_SEND_TRACE names a file, each send's
// steps are stamped (Unix nanoseconds, so that the bus's trace, package bustrace, joins it) and,
// once it has been both answered and published, written as one line to that file with the
// process id appended, under a header naming the columns. A send that fails before its publish
// is not written. Without the variable every call does nothing.
package sendtrace

import (
	"fmt"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"
)

// Stamp is a step of a send.
type Stamp int

// The steps of a send, in their order.
const (
	Accepted    Stamp = iota // the request handed the message to the send queue
	Grouped                  // it was taken into a group (a send of its group began)
	Locked                   // its hold of the lobby's order lock began (the hold's first group only)
	CommitStart              // its group's commit began
	Committed                // its group committed and its senders are answered
	Published                // its group's publish ended
	Answered                 // its request was answered
	stamps
)

// Header names the columns of the lines a trace writes.
const Header = "accepted grouped locked commit_start committed published answered group_size group_in_hold lock_kept group"

// Send is one send's record; a nil *Send records nothing. Work that embeds one is Traced.
type Send struct {
	at      [stamps]int64
	size    int   // its group's size
	n       int   // its group's number in its hold of the lock
	kept    bool  // its hold took a lock the node kept (package lockpark)
	group   int64 // its group's number in the process
	written bool
}

// Record returns s: a type that embeds a *Send is Traced.
func (s *Send) Record() *Send { return s }

// Traced is work that carries its send's record (nil: none).
type Traced interface{ Record() *Send }

// Trace is a process's record of its sends.
type Trace struct {
	path string

	mu     sync.Mutex
	file   *os.File // opened at the first line
	failed bool     // the file could not be written: nothing more is
	groups int64
}

// Default is the trace the environment variable SDKPP_SEND_TRACE turns on.
var Default = New(os.Getenv("SDKPP_SEND_TRACE"))

// New returns a trace written to path plus "." and the process id; it records nothing with
// path empty.
func New(path string) *Trace { return &Trace{path: path} }

// Send returns a new send's record, stamped Accepted; nil when the trace is off.
func (t *Trace) Send() *Send {
	if t.path == "" {
		return nil
	}
	return &Send{at: [stamps]int64{Accepted: t.now()}}
}

func (t *Trace) now() int64 { return time.Now().UnixNano() }

// record is v's record: nil unless v is Traced and carries one.
func record(v any) *Send {
	if tr, ok := v.(Traced); ok {
		return tr.Record()
	}
	return nil
}

// Stamp stamps step st of v's send (if v is Traced) now, unless it was stamped already.
func (t *Trace) Stamp(v any, st Stamp) {
	if t.path == "" {
		return
	}
	if s := record(v); s != nil {
		t.mu.Lock()
		defer t.mu.Unlock()
		t.stamp(s, st, t.now())
	}
}

// Mark stamps step st of each send of group (those Traced) now, unless it was stamped already.
func Mark[T any](t *Trace, group []T, st Stamp) {
	if t.path == "" {
		return
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	now := t.now()
	for _, v := range group {
		if s := record(v); s != nil {
			t.stamp(s, st, now)
		}
	}
}

// Group numbers group, the n-th group of a hold of the lock (kept: taken from the node's park),
// records its size with each of its sends, and stamps them Grouped unless they are already, and
// Locked when n is 1.
func Group[T any](t *Trace, group []T, n int, kept bool) {
	if t.path == "" {
		return
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	t.groups++
	now := t.now()
	for _, v := range group {
		if s := record(v); s != nil {
			s.size, s.n, s.kept, s.group = len(group), n, kept, t.groups
			t.stamp(s, Grouped, now)
			if n == 1 {
				t.stamp(s, Locked, now)
			}
		}
	}
}

// stamp stamps st of s at now unless it is stamped, and writes s once it has been answered and
// published. Call with t.mu held.
func (t *Trace) stamp(s *Send, st Stamp, now int64) {
	if s.at[st] == 0 {
		s.at[st] = now
	}
	if s.written || s.at[Answered] == 0 || s.at[Published] == 0 {
		return
	}
	s.written = true
	if err := t.write(s); err != nil && !t.failed {
		t.failed = true
		fmt.Fprintln(os.Stderr, "sendtrace:", err) // a debugging aid: told once, where its user looks
	}
}

// write writes s's line. Call with t.mu held.
func (t *Trace) write(s *Send) error {
	if t.failed {
		return nil
	}
	var b strings.Builder
	if t.file == nil {
		f, err := os.Create(t.path + "." + strconv.Itoa(os.Getpid()))
		if err != nil {
			return err
		}
		t.file = f // the process's end closes it
		b.WriteString(Header + "\n")
	}
	for _, at := range s.at {
		b.WriteString(strconv.FormatInt(at, 10) + " ")
	}
	fmt.Fprintln(&b, s.size, s.n, s.kept, s.group)
	_, err := t.file.WriteString(b.String())
	return err
}
