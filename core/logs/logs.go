// Package logs is where a Client's log messages go: the game's log callbacks (through the
// callback queue, with a bound on what waits), a log file, and the voice log file, which rotates;
// the set of the live clients' logs (Live) that a message tied to no client reaches, and the
// fallback (Fallback) that takes what no client's log took.
// Messages arrive redacted; this package never sees a secret.
package logs

import (
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"time"

	"sdkpp/core/callbacks"
)

// Severity is a message's severity; its values are those of the public LoggingSeverity.
type Severity int32

// The severities, least severe first.
const (
	Verbose Severity = 1 + iota
	Info
	Warning
	Error
	None
)

var severityNames = [...]string{Verbose: "Verbose", Info: "Info", Warning: "Warning", Error: "Error", None: "None"}

// String returns the severity's name, as a log line shows it.
func (s Severity) String() string {
	if s >= Verbose && s <= None {
		return severityNames[s]
	}
	return "unknown"
}

// Sink is one destination of a client's log messages.
type Sink interface {
	// Min is the least severity the sink takes.
	Min() Severity
	// Write writes one message.
	Write(msg string, sev Severity)
	// Close releases the sink.
	Close()
}

// MaxPending bounds the log messages waiting for RunCallbacks per log callback; beyond it
// messages are counted and dropped, and the next delivered message says how many.
const MaxPending = 1000

// callbackSink delivers log messages to a game's log callback through the queue.
type callbackSink struct {
	scope   *callbacks.Scope
	fn      func(string, Severity)
	min     Severity
	pending atomic.Int64
	dropped atomic.Int64
}

// NewCallbackSink returns a sink that queues each message for fn in scope.
func NewCallbackSink(scope *callbacks.Scope, fn func(msg string, sev Severity), min Severity) Sink {
	return &callbackSink{scope: scope, fn: fn, min: min}
}

func (s *callbackSink) Min() Severity { return s.min }

func (s *callbackSink) Write(msg string, sev Severity) {
	if s.pending.Add(1) > MaxPending {
		s.pending.Add(-1)
		s.dropped.Add(1)
		return
	}
	s.scope.Post(func() {
		s.pending.Add(-1)
		if n := s.dropped.Swap(0); n > 0 {
			s.fn(fmt.Sprintf("sdkpp: %d log messages were dropped because RunCallbacks was not called", n), Warning)
		}
		s.fn(msg, sev)
	})
}

func (s *callbackSink) Close() { s.scope.Close() }

// File appends log lines to dir/name. A File opened with a size limit rotates: past the limit the
// file becomes its older name (one older file is kept) and a new one starts.
type File struct {
	dir, name, old string
	maxBytes       int64 // 0: never rotate
	min            Severity
	now            func() time.Time
	onError        func(error)

	mu   sync.Mutex
	f    *os.File
	size int64
}

// OpenFile opens dir/name for appending, creating dir; lines carry now's time.
func OpenFile(dir, name string, min Severity, now func() time.Time) (*File, error) {
	f := &File{dir: dir, name: name, min: min, now: now}
	return f, f.open()
}

// OpenRotating is OpenFile for a file that rotates to dir/old past maxBytes; onError hears of a
// file that cannot be reopened after a rotation.
func OpenRotating(dir, name, old string, maxBytes int64, min Severity, now func() time.Time, onError func(error)) (*File, error) {
	f := &File{dir: dir, name: name, old: old, maxBytes: maxBytes, min: min, now: now, onError: onError}
	return f, f.open()
}

// open opens the current file for appending; f.mu is held or f is new.
func (f *File) open() error {
	if f.dir == "" {
		return fmt.Errorf("empty log directory")
	}
	if err := os.MkdirAll(f.dir, 0o755); err != nil {
		return fmt.Errorf("create log directory: %w", err)
	}
	file, err := os.OpenFile(filepath.Join(f.dir, f.name), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		return fmt.Errorf("open log file: %w", err)
	}
	st, err := file.Stat()
	if err != nil {
		file.Close()
		return fmt.Errorf("open log file: %w", err)
	}
	f.f, f.size = file, st.Size()
	return nil
}

// Dir is the directory of the file.
func (f *File) Dir() string { return f.dir }

// Min is the least severity the file takes.
func (f *File) Min() Severity { return f.min }

// Write appends one line, rotating first when the file is full.
func (f *File) Write(msg string, sev Severity) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.f == nil {
		return
	}
	line := fmt.Sprintf("%s [%s] %s\n", f.now().UTC().Format(time.RFC3339Nano), sev, msg)
	if f.maxBytes > 0 && f.size > 0 && f.size+int64(len(line)) > f.maxBytes {
		f.f.Close()
		f.f = nil
		// A failed rename leaves the full file to be reopened and appended to.
		_ = os.Rename(filepath.Join(f.dir, f.name), filepath.Join(f.dir, f.old))
		if err := f.open(); err != nil {
			if f.onError != nil {
				f.onError(err)
			}
			return
		}
	}
	n, _ := f.f.WriteString(line)
	f.size += int64(n)
}

// Close closes the file; later writes are dropped.
func (f *File) Close() {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.f != nil {
		f.f.Close()
		f.f = nil
	}
}

// Logger fans a client's messages out to its sinks and its one log file.
type Logger struct {
	mu    sync.Mutex
	sinks []Sink
	file  *File
}

// Add adds a sink.
func (l *Logger) Add(s Sink) {
	l.mu.Lock()
	l.sinks = append(l.sinks, s)
	l.mu.Unlock()
}

// SetFile replaces the log file; the old one is closed.
func (l *Logger) SetFile(f *File) {
	l.mu.Lock()
	old := l.file
	l.file = f
	l.mu.Unlock()
	if old != nil {
		old.Close()
	}
}

// Log writes msg to each sink that takes sev, and reports whether any did.
func (l *Logger) Log(msg string, sev Severity) bool {
	l.mu.Lock()
	sinks := l.sinks
	file := l.file
	l.mu.Unlock()
	if file != nil {
		sinks = append(sinks[:len(sinks):len(sinks)], file)
	}
	return WriteTo(sinks, msg, sev)
}

// WriteTo writes msg to each of sinks that takes sev, and reports whether any did.
func WriteTo(sinks []Sink, msg string, sev Severity) bool {
	took := false
	for _, s := range sinks {
		if s != nil && sev >= s.Min() {
			s.Write(msg, sev)
			took = true
		}
	}
	return took
}

// Close closes every sink and the file.
func (l *Logger) Close() {
	l.mu.Lock()
	sinks := l.sinks
	file := l.file
	l.sinks, l.file = nil, nil
	l.mu.Unlock()
	for _, s := range sinks {
		s.Close()
	}
	if file != nil {
		file.Close()
	}
}

// Live is a set of loggers, a process's live clients', so that a message tied to no one client
// (a refused call on a forged handle, say) reaches every one. Its lock is a leaf.
type Live struct {
	mu  sync.Mutex
	set map[*Logger]struct{}
}

// Add puts l in the set.
func (v *Live) Add(l *Logger) {
	v.mu.Lock()
	defer v.mu.Unlock()
	if v.set == nil {
		v.set = map[*Logger]struct{}{}
	}
	v.set[l] = struct{}{}
}

// Remove takes l out of the set.
func (v *Live) Remove(l *Logger) {
	v.mu.Lock()
	defer v.mu.Unlock()
	delete(v.set, l)
}

// Len is the number of loggers in the set.
func (v *Live) Len() int {
	v.mu.Lock()
	defer v.mu.Unlock()
	return len(v.set)
}

// Log writes msg to every logger in the set, without the set's lock, and reports whether any
// took it.
func (v *Live) Log(msg string, sev Severity) bool {
	v.mu.Lock()
	list := make([]*Logger, 0, len(v.set))
	for l := range v.set {
		list = append(list, l)
	}
	v.mu.Unlock()
	took := false
	for _, l := range list {
		if l.Log(msg, sev) {
			took = true
		}
	}
	return took
}

// Fallback takes the messages that no client's log took: a sink the game set (the fallback log
// callback), else standard error for warnings and errors, so that a misuse is never silent. The
// zero Fallback writes nothing to standard error until Stderr is set; its methods are safe for
// concurrent use.
type Fallback struct {
	sink atomic.Pointer[Sink]
	// Stderr says whether warnings and errors go to standard error when no sink is set.
	Stderr atomic.Bool
}

// SetSink makes s (nil: none) take the messages in place of standard error; the sink it replaces
// is closed.
func (f *Fallback) SetSink(s Sink) {
	var p *Sink
	if s != nil {
		p = &s
	}
	if old := f.sink.Swap(p); old != nil {
		(*old).Close()
	}
}

// Write gives msg to the sink if one is set (at or above its minimum), else writes it to standard
// error if sev is Warning or Error and Stderr is set.
func (f *Fallback) Write(msg string, sev Severity) {
	if p := f.sink.Load(); p != nil {
		if s := *p; sev >= s.Min() && sev < None {
			s.Write(msg, sev)
		}
		return
	}
	if sev >= Warning && sev < None && f.Stderr.Load() {
		fmt.Fprintf(os.Stderr, "sdkpp: [%s] %s\n", sev, msg)
	}
}
