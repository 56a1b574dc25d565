// Package bustrace records the way of each message of a cluster's bus from its publisher to the
// nodes that read it, a debugging aid for cross-node latency: when the environment variable
// SDKPP_BUS_TRACE names a file, each publish (its start, and the bus's acknowledgement with
// the message's sequence number) and each message a node's subscription hands to its handler
// (when the subscription received it, and when the handler returned, the node's sessions then
// written to or woken) is written as a line to that file with the process id appended, under a
// header naming the columns. The times are Unix nanoseconds, so that the traces of the nodes of
// one machine join by sequence number. Without the variable every call does nothing.
package bustrace

import (
	"fmt"
	"os"
	"strconv"
	"sync"
	"time"
)

// Header names the columns of the lines a trace writes: a line's kind (Publish or Receive), the
// message's sequence number in the bus, and the two times of its kind.
const Header = "kind seq start end"

// The kinds of lines.
const (
	Publish = "publish" // start: the publish began; end: the bus acknowledged it
	Receive = "receive" // start: the subscription received it; end: the handler returned
)

// Trace is a process's record of its bus messages.
type Trace struct {
	path string

	mu     sync.Mutex
	file   *os.File // opened at the first line
	failed bool     // the file could not be written: nothing more is
}

// Default is the trace the environment variable SDKPP_BUS_TRACE turns on.
var Default = New(os.Getenv("SDKPP_BUS_TRACE"))

// New returns a trace written to path plus "." and the process id; it records nothing with
// path empty.
func New(path string) *Trace { return &Trace{path: path} }

// On tells whether t records: a caller skips reading the clock when it does not.
func (t *Trace) On() bool { return t.path != "" }

// Now is the time to pass to Record: zero when t is off.
func (t *Trace) Now() time.Time {
	if t.path == "" {
		return time.Time{}
	}
	return time.Now()
}

// Record writes a line of kind for the message seq, from start to now.
func (t *Trace) Record(kind string, seq uint64, start time.Time) {
	if t.path == "" {
		return
	}
	end := time.Now()
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.failed {
		return
	}
	if err := t.write(fmt.Sprintln(kind, seq, start.UnixNano(), end.UnixNano())); err != nil {
		t.failed = true
		fmt.Fprintln(os.Stderr, "bustrace:", err) // a debugging aid: told once, where its user looks
	}
}

// write writes line. Call with t.mu held.
func (t *Trace) write(line string) error {
	if t.file == nil {
		f, err := os.Create(t.path + "." + strconv.Itoa(os.Getpid()))
		if err != nil {
			return err
		}
		t.file = f // the process's end closes it
		line = Header + "\n" + line
	}
	_, err := t.file.WriteString(line)
	return err
}
