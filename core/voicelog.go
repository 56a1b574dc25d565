package core

import (
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"time"
)

// Voice log files: the current one and, once it reaches voiceLogMaxBytes, one older one.
const (
	voiceLogName     = "sdkpp-voice.log"
	voiceLogOld      = "sdkpp-voice.1.log"
	voiceLogMaxBytes = 8 << 20
)

// voiceDiag is the Client's voice diagnostics settings: the voice log file, the AEC dump switch
// and the mobile audio-session setting.
type voiceDiag struct {
	mu      sync.Mutex
	file    *voiceLogFile // nil until SetVoiceLogDir
	aecDump bool

	engineManaged atomic.Bool
	opusHWEncode  atomic.Bool // SetOpusHardwareCoding, recorded only
	opusHWDecode  atomic.Bool
	callStarted   atomic.Bool // a call has started: the audio session is settled
}

// voiceLogFile appends voice log lines to dir/sdkpp-voice.log, rotating it to sdkpp-voice.1.log
// when it grows past voiceLogMaxBytes.
type voiceLogFile struct {
	mu     sync.Mutex
	dir    string
	f      *os.File
	size   int64
	minSev LoggingSeverity
	now    func() time.Time
}

// openVoiceLog opens the voice log file in dir, creating dir.
func openVoiceLog(dir string, min LoggingSeverity, now func() time.Time) (*voiceLogFile, error) {
	v := &voiceLogFile{dir: dir, minSev: min, now: now}
	if err := v.open(); err != nil {
		return nil, err
	}
	return v, nil
}

// open opens the current file for appending; v.mu is held or v is new.
func (v *voiceLogFile) open() error {
	f, err := openLogFile(v.dir, voiceLogName)
	if err != nil {
		return err
	}
	st, err := f.Stat()
	if err != nil {
		f.Close()
		return fmt.Errorf("open voice log file: %w", err)
	}
	v.f, v.size = f, st.Size()
	return nil
}

// write appends one line, already redacted, rotating first when the file is full.
func (v *voiceLogFile) write(msg string, sev LoggingSeverity) {
	if sev < v.minSev {
		return
	}
	v.mu.Lock()
	defer v.mu.Unlock()
	if v.f == nil {
		return
	}
	line := logLine(v.now(), sev, msg)
	if v.size > 0 && v.size+int64(len(line)) > voiceLogMaxBytes {
		v.f.Close()
		v.f = nil
		// A failed rename leaves the full file to be reopened and appended to.
		_ = os.Rename(filepath.Join(v.dir, voiceLogName), filepath.Join(v.dir, voiceLogOld))
		if err := v.open(); err != nil {
			fallback(Secrets.String(err.Error()), LoggingSeverityError)
			return
		}
	}
	n, _ := v.f.WriteString(line)
	v.size += int64(n)
}

func (v *voiceLogFile) close() {
	v.mu.Lock()
	defer v.mu.Unlock()
	if v.f != nil {
		v.f.Close()
		v.f = nil
	}
}

// voiceLogf writes a voice message (calls and the audio engine) to the Client's log and to the
// voice log file, both redacted.
func (c *Client) voiceLogf(sev LoggingSeverity, format string, args ...any) {
	msg := Secrets.String(fmt.Sprintf(format, args...))
	c.voice.mu.Lock()
	file := c.voice.file
	c.voice.mu.Unlock()
	took := c.log.log(msg, sev)
	if file != nil && sev >= file.minSev {
		file.write(msg, sev)
		took = true
	}
	if !took {
		fallback(msg, sev)
	}
}

// SetVoiceLogDir also writes voice log messages at or above minSeverity to sdkpp-voice.log in
// path (rotated to sdkpp-voice.1.log past 8 MiB), redacted as every log line is. A path that
// cannot be used is logged as an error and leaves the previous voice log in place.
func (c *Client) SetVoiceLogDir(path string, minSeverity LoggingSeverity) {
	f, err := openVoiceLog(path, minSeverity, c.clock.Now)
	if err != nil {
		c.logf(LoggingSeverityError, "SetVoiceLogDir(%q): %v", path, err)
		return
	}
	c.voice.mu.Lock()
	old := c.voice.file
	c.voice.file = f
	c.voice.mu.Unlock()
	if old != nil {
		old.close()
	}
}

// SetAecDump turns echo-cancellation diagnostics on or off (default off) for calls started
// afterwards: each writes its engine's near (microphone), far (playback reference) and output
// (processed capture) PCM as WAV files into the voice log dir. Without a voice log dir nothing is
// written, and a warning says so.
func (c *Client) SetAecDump(on bool) {
	c.voice.mu.Lock()
	c.voice.aecDump = on
	noDir := c.voice.file == nil
	c.voice.mu.Unlock()
	if on && noDir {
		c.logf(LoggingSeverityWarning, "SetAecDump: no voice log dir; call SetVoiceLogDir for the dumps to be written")
	}
}

// aecDumpPrefix is the path prefix of the AEC dump of a lobby's call starting now, "" for none:
// aec-LOBBY-TIME in the voice log dir.
func (c *Client) aecDumpPrefix(lobbyID uint64) string {
	c.voice.mu.Lock()
	defer c.voice.mu.Unlock()
	if !c.voice.aecDump || c.voice.file == nil {
		return ""
	}
	return filepath.Join(c.voice.file.dir, fmt.Sprintf("aec-%d-%s", lobbyID, c.clock.Now().UTC().Format("20060102T150405.000")))
}

// SetEngineManagedAudioSession records whether the game, not the SDK, owns the platform audio
// session. It matters on mobile only: on iOS the SDK then leaves the AVAudioSession category,
// mode and activation to the game, and on Android the audio mode and audio focus. On the desktop
// platforms sdkpp runs on there is no audio session, so it is only recorded. It must be called
// before any call starts; afterwards it is refused with a warning.
func (c *Client) SetEngineManagedAudioSession(isEngineManaged bool) {
	if c.voice.callStarted.Load() {
		c.logf(LoggingSeverityWarning, "SetEngineManagedAudioSession(%v) refused: a call has already started", isEngineManaged)
		return
	}
	c.voice.engineManaged.Store(isEngineManaged)
}

// closeVoiceLog closes the voice log file. Called by Close.
func (c *Client) closeVoiceLog() {
	c.voice.mu.Lock()
	f := c.voice.file
	c.voice.file = nil
	c.voice.mu.Unlock()
	if f != nil {
		f.close()
	}
}

// SetOpusHardwareCoding records whether to use a hardware Opus encoder and decoder. No platform
// sdkpp runs on has one, so calls always use the software codec (libopus); the choice is kept
// and logged so that a port to a platform with a hardware codec honours it.
func (c *Client) SetOpusHardwareCoding(encode, decode bool) {
	c.voice.opusHWEncode.Store(encode)
	c.voice.opusHWDecode.Store(decode)
	if encode || decode {
		c.logf(LoggingSeverityInfo, "SetOpusHardwareCoding(%v, %v): no hardware Opus codec on this platform; using libopus", encode, decode)
	}
}
