package core

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"sdkpp/core/rpc"
	"sdkpp/core/rpc/peer"
	"sdkpp/core/voice"
	"sdkpp/server/servertest"
)

// startDesktop runs the stand-in desktop client in a directory of its own, which the Client looks
// in.
func startDesktop(t *testing.T, vs *rpc.VoiceSettings) *peer.Peer {
	t.Helper()
	dir := t.TempDir()
	t.Setenv("XDG_RUNTIME_DIR", dir)
	p, err := peer.Listen(peer.Config{Dir: dir, Index: 0, VoiceSettings: vs})
	require.NoError(t, err)
	t.Cleanup(func() { p.Close() })
	return p
}

// getVoiceSettings calls GetVoiceSettings and waits for its callback.
func getVoiceSettings(t *testing.T, c *Client) (*ClientResult, *VoiceSettings) {
	t.Helper()
	var res *ClientResult
	var vs *VoiceSettings
	c.GetVoiceSettings(Func(func(r *ClientResult, v *VoiceSettings) { res, vs = r, v }))
	waitFor(t, "the GetVoiceSettings callback", func() bool { return res != nil })
	return res, vs
}

// VS-1: GetVoiceSettings reads the desktop client's voice settings as they are there.
func TestVS1GetVoiceSettingsFromTheDesktopClient(t *testing.T) {
	p := startDesktop(t, &rpc.VoiceSettings{
		Mute: true, Mode: rpc.VoiceMode{Type: rpc.VoiceModePushToTalk, Shortcut: "SHIFT + F"},
		Input: rpc.VoiceVolume{Volume: 80}, Output: rpc.VoiceVolume{Volume: 150},
		EchoCancellation: true, NoiseCancellation: true,
	})
	c := NewClient()
	defer c.Close()
	c.SetApplicationId(42)
	res, vs := getVoiceSettings(t, c)
	require.True(t, res.Successful(), "VS-1: %s", res.Error())
	require.NotNil(t, vs, "VS-1: a running desktop client gives settings")
	assert.True(t, vs.SelfMute())
	assert.False(t, vs.SelfDeaf())
	assert.Equal(t, VoiceInputModeTypePushToTalk, vs.InputMode())
	assert.Equal(t, "SHIFT + F", vs.PttKey())
	assert.EqualValues(t, 80, vs.InputVolume())
	assert.EqualValues(t, 150, vs.OutputVolume())
	assert.True(t, vs.EchoCancellation())
	assert.False(t, vs.NoiseSuppression())
	assert.True(t, vs.NoiseCancellation())
	assert.False(t, vs.AutomaticGainControl())
	assert.Equal(t, vs, vs.Clone())
	_ = p
}

// VS-1: the settings are read-only: VoiceSettings has no setter, and the desktop client refuses a
// write over the RPC.
func TestVS1VoiceSettingsAreReadOnly(t *testing.T) {
	typ := reflect.TypeOf(&VoiceSettings{})
	for i := range typ.NumMethod() {
		assert.False(t, strings.HasPrefix(typ.Method(i).Name, "Set"), "VS-1: VoiceSettings has a setter %s", typ.Method(i).Name)
	}

	p := startDesktop(t, nil)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	rc, err := rpc.Dial(ctx, rpc.Config{ApplicationID: 42, Dir: filepath.Dir(p.Path())})
	require.NoError(t, err)
	defer rc.Close()
	_, err = rc.Command(ctx, rpc.CmdSetVoiceSettings, rpc.VoiceSettings{Deaf: true})
	var re *rpc.Error
	require.ErrorAs(t, err, &re, "VS-1: a write is refused")
	assert.Equal(t, rpc.CodeReadOnly, re.Code, "VS-1: %v", err)
	vs, err := rc.GetVoiceSettings(ctx)
	require.NoError(t, err)
	assert.Equal(t, rpc.DefaultVoiceSettings, vs, "VS-1: the refused write changed nothing")
}

// VS-1: a change in the desktop client reaches the update callback with the new settings.
func TestVS1VoiceSettingsUpdatedCallbackFiresOnAChange(t *testing.T) {
	p := startDesktop(t, nil)
	c := NewClient()
	defer c.Close()
	c.SetApplicationId(42)
	var got []*VoiceSettings
	released := 0
	c.SetVoiceSettingsUpdatedCallback(Callback[ClientVoiceSettingsUpdatedCallback]{
		Fn: func(v *VoiceSettings) { got = append(got, v) }, Release: func() { released++ }})
	waitFor(t, "the subscription", func() bool { return p.Subscribers(rpc.EvtVoiceSettingsUpdate) == 1 })
	reply, err := p.Exec("voice deaf true")
	require.NoError(t, err)
	assert.Equal(t, "sent VOICE_SETTINGS_UPDATE to 1", reply)
	p.UpdateVoiceSettings(func(v *rpc.VoiceSettings) { v.Output.Volume = 200 })
	waitFor(t, "two updates", func() bool { return len(got) == 2 })
	assert.True(t, got[0].SelfDeaf(), "VS-1: the first update carries the change")
	assert.EqualValues(t, 100, got[0].OutputVolume())
	assert.True(t, got[1].SelfDeaf(), "VS-1: each update is the whole snapshot")
	assert.EqualValues(t, 200, got[1].OutputVolume())
	c.Close()
	assert.Equal(t, 1, released, "Close releases the callback")
}

// Without a desktop client GetVoiceSettings succeeds with no settings.
func TestVS1GetVoiceSettingsWithoutDesktopClient(t *testing.T) {
	t.Setenv("XDG_RUNTIME_DIR", t.TempDir()) // nobody listens there
	c := NewClient()
	defer c.Close()
	c.SetApplicationId(42)
	res, vs := getVoiceSettings(t, c)
	assert.True(t, res.Successful(), "no desktop client is not a failure: %s", res.Error())
	assert.Nil(t, vs, "no desktop client: no settings")
}

// A link lost while reading fails the result cleanly; without an application id it fails at once.
func TestVS1GetVoiceSettingsFailures(t *testing.T) {
	p := startDesktop(t, nil)
	p.Handle(rpc.CmdGetVoiceSettings, func(*rpc.Message) (any, error) {
		p.Kick() // the desktop client goes away before it answers
		return nil, peer.ErrNoReply
	})
	c := NewClient()
	defer c.Close()
	res, vs := getVoiceSettings(t, c)
	assert.False(t, res.Successful(), "without an application id")
	assert.Contains(t, res.Error(), "SetApplicationId")
	assert.Nil(t, vs)

	c.SetApplicationId(42)
	res, vs = getVoiceSettings(t, c)
	assert.False(t, res.Successful(), "a lost link fails the result")
	assert.Contains(t, res.Error(), "lost")
	assert.Nil(t, vs)
}

// SetVoiceLogDir writes voice messages to a file in the directory, redacted; a bad path is a
// logged error.
func TestSetVoiceLogDir(t *testing.T) {
	c := NewClient()
	defer c.Close()
	logs := captureLogs(c, LoggingSeverityError)
	dir := filepath.Join(t.TempDir(), "voice")
	c.SetVoiceLogDir(dir, LoggingSeverityInfo)
	const token = "voice-log-secret-token-0123456789"
	Secrets.Add(token)
	c.voiceLogf(LoggingSeverityInfo, "call 7: joined with %s", token)
	c.voiceLogf(LoggingSeverityVerbose, "below the minimum severity")
	c.Close()
	b, err := os.ReadFile(filepath.Join(dir, voice.LogName))
	require.NoError(t, err, "the voice log file exists")
	assert.Contains(t, string(b), "call 7: joined with")
	assert.NotContains(t, string(b), token, "no token in the voice log")
	assert.NotContains(t, string(b), "below the minimum")
	assert.Empty(t, logs())

	c2 := NewClient()
	defer c2.Close()
	logs2 := captureLogs(c2, LoggingSeverityError)
	file := filepath.Join(t.TempDir(), "a-file")
	require.NoError(t, os.WriteFile(file, nil, 0o600))
	c2.SetVoiceLogDir(file, LoggingSeverityInfo) // not a directory
	c2.SetVoiceLogDir("", LoggingSeverityInfo)
	l := logs2()
	require.Len(t, l, 2, "each bad path is logged: %q", l)
	assert.Contains(t, l[0], "SetVoiceLogDir")
}

// SetAecDump names a dump in the voice log dir for calls that start while it is on, and warns
// when there is no voice log dir.
func TestSetAecDump(t *testing.T) {
	c := NewClient()
	defer c.Close()
	logs := captureLogs(c, LoggingSeverityWarning)
	assert.Empty(t, c.voice.AecDumpPrefix(1, c.clock.Now()), "off by default")
	c.SetAecDump(true)
	assert.Empty(t, c.voice.AecDumpPrefix(1, c.clock.Now()), "no voice log dir: no dump")
	require.Len(t, logs(), 1, "the missing dir is a warning")
	dir := t.TempDir()
	c.SetVoiceLogDir(dir, LoggingSeverityInfo)
	p := c.voice.AecDumpPrefix(77, c.clock.Now())
	assert.Equal(t, dir, filepath.Dir(p))
	assert.True(t, strings.HasPrefix(filepath.Base(p), "aec-77-"), p)
	c.SetAecDump(false)
	assert.Empty(t, c.voice.AecDumpPrefix(1, c.clock.Now()))
}

// SetEngineManagedAudioSession is recorded before any call, and refused with a warning after.
func TestSetEngineManagedAudioSession(t *testing.T) {
	c := NewClient()
	defer c.Close()
	logs := captureLogs(c, LoggingSeverityWarning)
	c.SetEngineManagedAudioSession(true)
	assert.True(t, c.voice.EngineManaged.Load())
	assert.Empty(t, logs())
	c.voice.CallStarted.Store(true) // as StartCall does
	c.SetEngineManagedAudioSession(false)
	assert.True(t, c.voice.EngineManaged.Load(), "refused once a call has started")
	l := logs()
	require.Len(t, l, 1)
	assert.Contains(t, l[0], "refused")
}

// SetOpusHardwareCoding is recorded, and says that the software codec is used.
func TestSetOpusHardwareCoding(t *testing.T) {
	c := NewClient()
	defer c.Close()
	logs := captureLogs(c, LoggingSeverityInfo)
	c.SetOpusHardwareCoding(true, false)
	assert.True(t, c.voice.OpusHWEncode.Load())
	assert.False(t, c.voice.OpusHWDecode.Load())
	l := logs()
	require.Len(t, l, 1)
	assert.Contains(t, l[0], "libopus")
}

// A real call's voice messages reach the voice log file with no credential in it; with the AEC
// dump on, its engine is told to dump into the voice log dir; the audio session setting is
// refused once the call has started.
func TestVoiceDiagnosticsOfACall(t *testing.T) {
	env := servertest.Start(t)
	p1, p2 := newCaller(t, env, "diag-p1"), newCaller(t, env, "diag-p2")
	dir := t.TempDir()
	p1.SetVoiceLogDir(dir, LoggingSeverityVerbose)
	p1.SetAecDump(true)
	p1.SetEngineManagedAudioSession(true)
	lobby := lobbyOf(t, "diag-secret", p1, p2)
	c1, c2 := p1.start(t, lobby), p2.start(t, lobby)
	for _, c := range []*Call{c1, c2} {
		await(t, "Connected", func() bool { return c.GetStatus() == CallStatusConnected && len(c.GetParticipants()) == 2 })
	}
	prefix := p1.engine.cfg.AecDump
	assert.Equal(t, dir, filepath.Dir(prefix), "the dump goes into the voice log dir")
	assert.True(t, strings.HasPrefix(filepath.Base(prefix), fmt.Sprintf("aec-%d-", lobby)), prefix)
	assert.Empty(t, p2.engine.cfg.AecDump, "off by default")
	require.NotNil(t, p1.engine.cfg.Logf, "the engine logs into the voice log")
	p1.engine.cfg.Logf("engine: a diagnostic")

	p1.SetEngineManagedAudioSession(false)
	assert.True(t, p1.voice.EngineManaged.Load(), "refused once a call has started")

	var ended bool
	p1.EndCall(lobby, Func(func() { ended = true }))
	await(t, "EndCall", func() bool { return ended })
	p1.Close()
	b, err := os.ReadFile(filepath.Join(dir, voice.LogName))
	require.NoError(t, err)
	log := string(b)
	assert.Contains(t, log, fmt.Sprintf("call %d: status Connected", lobby), "the call's messages")
	assert.Contains(t, log, "engine: a diagnostic", "the engine's messages")
	assert.NotRegexp(t, `eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}|(Bearer|Bot) [A-Za-z0-9_\-.]{20,}`, log, "no token in the voice log")
}
