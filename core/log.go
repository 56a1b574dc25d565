package core

import (
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"time"

	"sdkpp/core/callbacks"
	"sdkpp/core/redact"
)

// Secrets holds every credential value the SDK has handled in this process; log text is
// scrubbed of them before it reaches any sink (rule AU-10).
var Secrets redact.Set

// maxPendingLogs bounds the log messages waiting for RunCallbacks per log callback; beyond it
// messages are counted and dropped, and the next delivered message says how many.
const maxPendingLogs = 1000

// logSink is one destination of a client's log messages.
type logSink interface {
	min() LoggingSeverity
	write(msg string, sev LoggingSeverity)
	close()
}

// callbackSink delivers log messages to a game's log callback through the queue.
type callbackSink struct {
	scope   *callbacks.Scope
	fn      ClientLogCallback
	minSev  LoggingSeverity
	pending atomic.Int64
	dropped atomic.Int64
}

func (s *callbackSink) min() LoggingSeverity { return s.minSev }

func (s *callbackSink) write(msg string, sev LoggingSeverity) {
	if s.pending.Add(1) > maxPendingLogs {
		s.pending.Add(-1)
		s.dropped.Add(1)
		return
	}
	s.scope.Post(func() {
		s.pending.Add(-1)
		if n := s.dropped.Swap(0); n > 0 {
			s.fn(fmt.Sprintf("sdkpp: %d log messages were dropped because RunCallbacks was not called", n), LoggingSeverityWarning)
		}
		s.fn(msg, sev)
	})
}

func (s *callbackSink) close() { s.scope.Close() }

// fileSink appends log lines to a file.
type fileSink struct {
	mu     sync.Mutex
	f      *os.File
	minSev LoggingSeverity
	now    func() time.Time
}

func (s *fileSink) min() LoggingSeverity { return s.minSev }

func (s *fileSink) write(msg string, sev LoggingSeverity) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.f == nil {
		return
	}
	s.f.WriteString(logLine(s.now(), sev, msg))
}

func (s *fileSink) close() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.f != nil {
		s.f.Close()
		s.f = nil
	}
}

// logger fans a client's messages out to its sinks.
type logger struct {
	mu    sync.Mutex
	sinks []logSink
	file  *fileSink
}

func (l *logger) add(s logSink) {
	l.mu.Lock()
	l.sinks = append(l.sinks, s)
	l.mu.Unlock()
}

// setFile replaces the file sink.
func (l *logger) setFile(s *fileSink) {
	l.mu.Lock()
	old := l.file
	l.file = s
	l.mu.Unlock()
	if old != nil {
		old.close()
	}
}

// log writes msg, already redacted, to each sink that wants sev, and reports whether any did.
func (l *logger) log(msg string, sev LoggingSeverity) bool {
	l.mu.Lock()
	sinks := l.sinks
	file := l.file
	l.mu.Unlock()
	took := false
	for _, s := range sinks {
		if sev >= s.min() {
			s.write(msg, sev)
			took = true
		}
	}
	if file != nil && sev >= file.min() {
		file.write(msg, sev)
		took = true
	}
	return took
}

func (l *logger) close() {
	l.mu.Lock()
	sinks := l.sinks
	file := l.file
	l.sinks, l.file = nil, nil
	l.mu.Unlock()
	for _, s := range sinks {
		s.close()
	}
	if file != nil {
		file.close()
	}
}

// logLine is one line of a log file.
func logLine(now time.Time, sev LoggingSeverity, msg string) string {
	return fmt.Sprintf("%s [%s] %s\n", now.UTC().Format(time.RFC3339Nano), sev, msg)
}

// openLogFile opens dir/name for appending, creating dir.
func openLogFile(dir, name string) (*os.File, error) {
	if dir == "" {
		return nil, fmt.Errorf("empty log directory")
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("create log directory: %w", err)
	}
	f, err := os.OpenFile(filepath.Join(dir, name), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		return nil, fmt.Errorf("open log file: %w", err)
	}
	return f, nil
}

// clients is every live Client, so that messages not tied to one client (a refused call on a
// forged handle, say) reach every game log.
var clients struct {
	mu  sync.Mutex
	set map[*Client]struct{}
}

// StderrFallback says whether warnings and errors that no log sink took are written to the
// process's standard error, so that a misuse is never silent.
var StderrFallback atomic.Bool

func init() { StderrFallback.Store(true) }

// Log writes a message that belongs to no particular client to every live client's log, and to
// standard error when no log took it and sev is Warning or above. The text is redacted first.
func Log(sev LoggingSeverity, format string, args ...any) {
	msg := Secrets.String(fmt.Sprintf(format, args...))
	clients.mu.Lock()
	list := make([]*Client, 0, len(clients.set))
	for c := range clients.set {
		list = append(list, c)
	}
	clients.mu.Unlock()
	took := false
	for _, c := range list {
		if c.log.log(msg, sev) {
			took = true
		}
	}
	if !took {
		fallback(msg, sev)
	}
}

func fallback(msg string, sev LoggingSeverity) {
	if sev >= LoggingSeverityWarning && sev < LoggingSeverityNone && StderrFallback.Load() {
		fmt.Fprintf(os.Stderr, "sdkpp: [%s] %s\n", sev, msg)
	}
}
