package main

import (
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"sdkpp/core/gateway"
)

// logDir, when set (-log-dir), is where the sdkpp children write their service's log (Debug
// level) and this program the life of its fan-out's gateway clients (statuses, drops, their
// causes), for the cause of a fan-out that fell short.
var logDir string

// serviceLogger is the log of an sdkpp child: discarded, or at Debug level into logDir.
func serviceLogger(dir string) (*slog.Logger, func(), error) {
	if dir == "" {
		return slog.New(slog.NewTextHandler(io.Discard, nil)), func() {}, nil
	}
	f, err := os.Create(filepath.Join(dir, "sdkpp-"+strconv.Itoa(os.Getpid())+".log"))
	if err != nil {
		return nil, nil, err
	}
	return slog.New(slog.NewTextHandler(f, &slog.HandlerOptions{Level: slog.LevelDebug})), func() { f.Close() }, nil
}

// clientLog is this program's log of its gateway clients (logDir); nil writes nothing.
type clientLog struct {
	mu sync.Mutex
	w  io.Writer
}

var clients = &clientLog{}

// open starts writing the log into logDir, when it is set.
func (l *clientLog) open() (close func(), err error) {
	if logDir == "" {
		return func() {}, nil
	}
	f, err := os.Create(filepath.Join(logDir, "clients-"+strconv.Itoa(os.Getpid())+".log"))
	if err != nil {
		return nil, err
	}
	l.mu.Lock()
	l.w = f
	l.mu.Unlock()
	return func() {
		l.mu.Lock()
		l.w = nil
		l.mu.Unlock()
		f.Close()
	}, nil
}

func (l *clientLog) printf(format string, args ...any) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.w != nil {
		fmt.Fprintf(l.w, time.Now().UTC().Format("15:04:05.000000")+" "+format+"\n", args...)
	}
}

// watch is what a fan-out's member's gateway client went through: how many sessions it was
// given (READY: more than one means it identified anew, and what was dispatched between its
// sessions is gone), how often its connection dropped, and why it dropped last. Its counts are
// written on the client's goroutine and read by the bench's.
type watch struct {
	player  uint64
	readies atomic.Int32
	drops   atomic.Int32
	last    atomic.Pointer[string] // the last drop's reason
	invalid atomic.Int32           // message dispatches whose data was not valid JSON (dropped)
}

// status is the gateway client's OnStatus.
func (w *watch) status(s gateway.Status, err error) {
	if s == gateway.Ready {
		w.readies.Add(1)
	}
	if err != nil {
		w.drops.Add(1)
		reason := err.Error()
		w.last.Store(&reason)
	}
	clients.printf("player %d: %v %v", w.player, s, err)
}

// memberState is one fan-out member's state when a turn fell short.
type memberState struct {
	index, got, want int
	player           uint64
	status           gateway.Status
	readies, drops   int
	invalid          int // dispatches dropped for invalid data
	lastDrop         string
}

// shortfall describes the members that got fewer than want deliveries of a turn, each with what
// its gateway client went through, so that a fan-out that fell short says whose messages are
// missing and why: a member whose client identified anew lost what was dispatched meanwhile
// (its session's replay could not cover it); one that never dropped and still lacks them was
// not sent them.
func shortfall(ms []memberState) string {
	var b strings.Builder
	for _, m := range ms {
		if m.got >= m.want {
			continue
		}
		fmt.Fprintf(&b, "; member %d (user %d) got %d of %d: client %v, %d sessions, %d drops", m.index, m.player,
			m.got, m.want, m.status, m.readies, m.drops)
		if m.lastDrop != "" {
			fmt.Fprintf(&b, " (last: %s)", m.lastDrop)
		}
		if m.invalid > 0 {
			fmt.Fprintf(&b, ", %d dispatches dropped for data that is not valid JSON", m.invalid)
		}
		if m.readies > 1 {
			b.WriteString(", identified anew: what was sent between its sessions is gone")
		}
	}
	if b.Len() == 0 {
		return "; every member got its deliveries (counted late)"
	}
	return b.String()
}
