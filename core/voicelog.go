package core

import (
	"fmt"

	"sdkpp/core/logs"
	"sdkpp/core/voice"
)

// voiceLogf writes a voice message (calls and the audio engine) to the Client's log and to the
// voice log file, both redacted.
func (c *Client) voiceLogf(sev LoggingSeverity, format string, args ...any) {
	msg := Secrets.String(fmt.Sprintf(format, args...))
	took := c.log.Log(msg, logs.Severity(sev))
	if c.voice.Log(msg, logs.Severity(sev)) {
		took = true
	}
	if !took {
		fallbackLog.Write(msg, logs.Severity(sev))
	}
}

// SetVoiceLogDir also writes voice log messages at or above minSeverity to sdkpp-voice.log in
// path (rotated to sdkpp-voice.1.log past 8 MiB), redacted as every log line is. A path that
// cannot be used is logged as an error and leaves the previous voice log in place.
func (c *Client) SetVoiceLogDir(path string, minSeverity LoggingSeverity) {
	f, err := voice.OpenLog(path, logs.Severity(minSeverity), c.clock.Now,
		func(err error) { fallbackLog.Write(Secrets.String(err.Error()), logs.Error) })
	if err != nil {
		c.logf(LoggingSeverityError, "SetVoiceLogDir(%q): %v", path, err)
		return
	}
	c.voice.SetLog(f)
}

// SetAecDump turns echo-cancellation diagnostics on or off (default off) for calls started
// afterwards: each writes its engine's near (microphone), far (playback reference) and output
// (processed capture) PCM as WAV files into the voice log dir. Without a voice log dir nothing is
// written, and a warning says so.
func (c *Client) SetAecDump(on bool) {
	if hasDir := c.voice.SetAecDump(on); on && !hasDir {
		c.logf(LoggingSeverityWarning, "SetAecDump: no voice log dir; call SetVoiceLogDir for the dumps to be written")
	}
}

// SetEngineManagedAudioSession records whether the game, not the SDK, owns the platform audio
// session. It matters on mobile only: on iOS the SDK then leaves the AVAudioSession category,
// mode and activation to the game, and on Android the audio mode and audio focus. On the desktop
// platforms sdkpp runs on there is no audio session, so it is only recorded. It must be called
// before any call starts; afterwards it is refused with a warning.
func (c *Client) SetEngineManagedAudioSession(isEngineManaged bool) {
	if c.voice.CallStarted.Load() {
		c.logf(LoggingSeverityWarning, "SetEngineManagedAudioSession(%v) refused: a call has already started", isEngineManaged)
		return
	}
	c.voice.EngineManaged.Store(isEngineManaged)
}

// SetOpusHardwareCoding records whether to use a hardware Opus encoder and decoder. No platform
// sdkpp runs on has one, so calls always use the software codec (libopus); the choice is kept
// and logged so that a port to a platform with a hardware codec honours it.
func (c *Client) SetOpusHardwareCoding(encode, decode bool) {
	c.voice.OpusHWEncode.Store(encode)
	c.voice.OpusHWDecode.Store(decode)
	if encode || decode {
		c.logf(LoggingSeverityInfo, "SetOpusHardwareCoding(%v, %v): no hardware Opus codec on this platform; using libopus", encode, decode)
	}
}
