package voice

import (
	"fmt"
	"path/filepath"
	"sync"
	"sync/atomic"
	"time"

	"sdkpp/core/logs"
)

// Voice log files: the current one and, once it reaches LogMaxBytes, one older one.
const (
	LogName     = "sdkpp-voice.log"
	LogOld      = "sdkpp-voice.1.log"
	LogMaxBytes = 8 << 20
)

// Diag is a Client's voice diagnostics: the voice log file, the AEC dump switch and the
// platform settings that are only recorded. It is safe for concurrent use; its lock is a leaf.
type Diag struct {
	mu      sync.Mutex
	file    *logs.File // nil until SetLog
	aecDump bool

	// EngineManaged: the game, not the SDK, owns the platform audio session.
	EngineManaged atomic.Bool
	// OpusHWEncode and OpusHWDecode: the game asked for hardware Opus coding (recorded only).
	OpusHWEncode, OpusHWDecode atomic.Bool
	// CallStarted: a call has started, so the audio session is settled.
	CallStarted atomic.Bool
}

// OpenLog opens the voice log file in dir, creating dir; onError hears write failures.
func OpenLog(dir string, min logs.Severity, now func() time.Time, onError func(error)) (*logs.File, error) {
	return logs.OpenRotating(dir, LogName, LogOld, LogMaxBytes, min, now, onError)
}

// Log writes msg to the voice log file, and reports whether the file took it.
func (d *Diag) Log(msg string, sev logs.Severity) bool {
	d.mu.Lock()
	file := d.file
	d.mu.Unlock()
	return file != nil && logs.WriteTo([]logs.Sink{file}, msg, sev)
}

// SetLog replaces the voice log file with f (nil: none) and closes the previous one.
func (d *Diag) SetLog(f *logs.File) {
	d.mu.Lock()
	old := d.file
	d.file = f
	d.mu.Unlock()
	if old != nil {
		old.Close()
	}
}

// SetAecDump turns the AEC dumps of calls started afterwards on or off; it reports whether
// there is a voice log dir for them to be written to.
func (d *Diag) SetAecDump(on bool) (hasDir bool) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.aecDump = on
	return d.file != nil
}

// AecDumpPrefix is the path prefix of the AEC dump of a lobby's call starting at now, "" for
// none: aec-LOBBY-TIME in the voice log dir.
func (d *Diag) AecDumpPrefix(lobbyID uint64, now time.Time) string {
	d.mu.Lock()
	defer d.mu.Unlock()
	if !d.aecDump || d.file == nil {
		return ""
	}
	return filepath.Join(d.file.Dir(), fmt.Sprintf("aec-%d-%s", lobbyID, now.UTC().Format("20060102T150405.000")))
}
