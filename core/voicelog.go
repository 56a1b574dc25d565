package core

import (
	"fmt"
	"path/filepath"
	"sync"
	"sync/atomic"
	"time"

	"sdkpp/core/logs"
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
	file    *logs.File // nil until SetVoiceLogDir
	aecDump bool

	engineManaged atomic.Bool
	opusHWEncode  atomic.Bool // SetOpusHardwareCoding, recorded only
	opusHWDecode  atomic.Bool
	callStarted   atomic.Bool // a call has started: the audio session is settled
}

// openVoiceLog opens the voice log file in dir, creating dir.
func openVoiceLog(dir string, min LoggingSeverity, now func() time.Time) (*logs.File, error) {
	return logs.OpenRotating(dir, voiceLogName, voiceLogOld, voiceLogMaxBytes, logs.Severity(min), now,
		func(err error) { fallback(Secrets.String(err.Error()), LoggingSeverityError) })
}

// voiceLogf writes a voice message (calls and the audio engine) to the Client's log and to the
// voice log file, both redacted.
func (c *Client) voiceLogf(sev LoggingSeverity, format string, args ...any) {
	msg := Secrets.String(fmt.Sprintf(format, args...))
	c.voice.mu.Lock()
	file := c.voice.file
	c.voice.mu.Unlock()
	took := c.log.Log(msg, logs.Severity(sev))
	if file != nil && logs.WriteTo([]logs.Sink{file}, msg, logs.Severity(sev)) {
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
		old.Close()
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
	return filepath.Join(c.voice.file.Dir(), fmt.Sprintf("aec-%d-%s", lobbyID, c.clock.Now().UTC().Format("20060102T150405.000")))
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
		f.Close()
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
