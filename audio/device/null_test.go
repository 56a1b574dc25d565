package device_test

import (
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"sdkpp/audio/device"
	"sdkpp/audio/pcm"
)

// TestNullBackendPacesTenMillisecondPeriods runs a capture and playback stream on miniaudio's null
// backend until fifty capture periods have arrived and checks that they came one 10 ms period per
// callback at real-time pace: never faster, and not grossly slower even on a busy machine. The
// null backend catches up after a late wake (it reads the periods it owes without waiting), so
// two periods may come closer than 10 ms apart; what it guarantees is that capture period k is
// not read before its device has run about k-1 periods, counted from its start.
func TestNullBackendPacesTenMillisecondPeriods(t *testing.T) {
	c := newContext(t, device.Options{Backend: device.BackendNull, PollInterval: -1})
	list, err := c.Devices()
	require.NoError(t, err)
	require.Len(t, list.Capture, 1)
	require.Len(t, list.Playback, 1)

	const periods = 50
	s, err := c.Open(device.Config{Capture: true, Playback: true, RingSamples: 2 * periods * pcm.PeriodSamples})
	require.NoError(t, err)
	assert.Equal(t, list.Capture[0], s.Info().Capture, "the default device is the one in use")
	assert.Equal(t, list.Playback[0], s.Info().Playback)

	start := time.Now() // before the device's clock starts
	require.NoError(t, s.Start())
	// Wait for the first period, then for the next periods-1.
	require.True(t, s.Capture().WaitData(pcm.PeriodSamples, nil))
	first := time.Now()
	require.True(t, s.Capture().WaitData(periods*pcm.PeriodSamples, nil))
	all := time.Since(start)
	elapsed := time.Since(first)
	require.NoError(t, s.Stop())
	st := s.Stats()

	t.Logf("first period after %v; %d more periods in %v; all %d in %v; stats %+v",
		first.Sub(start), periods-1, elapsed, periods, all, st)
	// Measured, the fiftieth period comes about a period early (490 ms after the start at the
	// least, in 80 runs beside a CPU stress). Being late only makes periods later, so three
	// periods of slack cannot be used up; a backend running 7% fast or more fails.
	assert.GreaterOrEqual(t, all, (periods-3)*10*time.Millisecond, "periods never run ahead of the device's clock")
	nominal := (periods - 1) * 10 * time.Millisecond
	assert.Less(t, elapsed, 3*nominal, "periods keep up with real time")
	assert.Equal(t, st.CapturePeriods*pcm.PeriodSamples, st.CaptureSamples, "one 10 ms period per capture callback")
	assert.Equal(t, st.PlaybackPeriods*pcm.PeriodSamples, st.PlaybackSamples, "one 10 ms period per playback callback")
	assert.GreaterOrEqual(t, st.CapturePeriods, uint64(periods))
	assert.Positive(t, st.PlaybackPeriods)
	assert.Zero(t, st.Capture.Overruns)

	// A stopped stream's callbacks have ended: the counts stay put.
	after := s.Stats()
	assert.Equal(t, st.CapturePeriods, after.CapturePeriods)
	assert.Equal(t, st.PlaybackPeriods, after.PlaybackPeriods)

	require.NoError(t, s.Close())
	assert.ErrorIs(t, s.Start(), device.ErrClosed)
}

func TestContextCloseEndsEventsAndRefusesWork(t *testing.T) {
	c, err := device.NewContext(device.Options{Backend: device.BackendNull, PollInterval: time.Millisecond})
	require.NoError(t, err)
	s, err := c.Open(device.Config{Capture: true})
	require.NoError(t, err)
	require.NoError(t, s.Start())

	require.NoError(t, c.Close(), "closes the poller and the stream still open")
	for range c.Events() {
		// The null backend's devices never change; drain until closed.
	}
	assert.ErrorIs(t, s.Start(), device.ErrClosed)
	_, err = c.Devices()
	assert.ErrorIs(t, err, device.ErrClosed)
	_, err = c.Open(device.Config{Playback: true})
	assert.ErrorIs(t, err, device.ErrClosed)
	_, err = c.Open(device.Config{})
	assert.ErrorIs(t, err, device.ErrNothingToOpen)
	require.NoError(t, c.Close())
}

// startNullStream opens and starts a capture and playback stream on the null backend.
func startNullStream(t *testing.T) device.Stream {
	t.Helper()
	c := newContext(t, device.Options{Backend: device.BackendNull, PollInterval: -1})
	s, err := c.Open(device.Config{Capture: true, Playback: true})
	require.NoError(t, err)
	require.NoError(t, s.Start())
	return s
}

// TestPauseCaptureStopsOnlyTheMicrophone pauses the capture side of a running stream on the null
// backend: its callbacks end while the playback side's go on, and resuming brings them back.
func TestPauseCaptureStopsOnlyTheMicrophone(t *testing.T) {
	s := startNullStream(t)
	p, ok := s.(device.CapturePauser)
	require.True(t, ok, "a device stream can pause its capture side")
	require.True(t, s.Capture().WaitData(pcm.PeriodSamples, nil))

	require.NoError(t, p.PauseCapture(true))
	require.NoError(t, p.PauseCapture(true), "pausing twice is harmless")
	paused := s.Stats()
	playing := func() bool { return s.Stats().PlaybackPeriods >= paused.PlaybackPeriods+5 }
	require.Eventually(t, playing, 5*time.Second, time.Millisecond, "the speaker plays on")
	assert.Equal(t, paused.CapturePeriods, s.Stats().CapturePeriods, "no capture callback while paused")

	s.Capture().Discard(s.Capture().Len())
	require.NoError(t, p.PauseCapture(false))
	require.True(t, s.Capture().WaitData(pcm.PeriodSamples, nil), "capture resumes")
	require.NoError(t, s.Close())
	assert.ErrorIs(t, p.PauseCapture(false), device.ErrClosed)
}

// TestPausePlaybackStopsOnlyTheSpeaker pauses the playback side of a running stream on the null
// backend: its callbacks end while the capture side's go on, and resuming brings them back; the
// restarted speaker takes first what the ring held.
func TestPausePlaybackStopsOnlyTheSpeaker(t *testing.T) {
	s := startNullStream(t)
	p, ok := s.(device.PlaybackPauser)
	require.True(t, ok, "a device stream can pause its playback side")
	require.Eventually(t, func() bool { return s.Stats().PlaybackPeriods >= 5 }, 5*time.Second, time.Millisecond, "the speaker plays")

	require.NoError(t, p.PausePlayback(true))
	require.NoError(t, p.PausePlayback(true), "pausing twice is harmless")
	paused := s.Stats()
	listening := func() bool { return s.Stats().CapturePeriods >= paused.CapturePeriods+5 }
	require.Eventually(t, listening, 5*time.Second, time.Millisecond, "the microphone runs on")
	assert.Equal(t, paused.PlaybackPeriods, s.Stats().PlaybackPeriods, "no playback callback while paused")

	period := make([]int16, pcm.PeriodSamples)
	require.Equal(t, len(period), s.Playback().Write(period))
	require.NoError(t, p.PausePlayback(false))
	require.True(t, s.Playback().WaitSpace(s.Playback().Cap(), nil), "the restarted speaker takes what the ring held")
	st := s.Stats()
	lacked := st.Playback.UnderrunSamples - paused.Playback.UnderrunSamples
	taken := st.PlaybackSamples - paused.PlaybackSamples
	assert.Equal(t, taken-uint64(len(period)), lacked, "it lacked nothing of that period, only what the ring did not hold after it")
	require.NoError(t, s.Close())
	assert.ErrorIs(t, p.PausePlayback(false), device.ErrClosed)
}

// TestLogHearsBothMiniaudioContexts checks that Options.Log receives the messages of the context
// that lists devices (malgo's) and of the one that opens them (the package's own): each announces
// the backend it tries while NewContext runs, on the calling goroutine.
func TestLogHearsBothMiniaudioContexts(t *testing.T) {
	var mu sync.Mutex
	var tries int
	log := func(message string) {
		mu.Lock()
		defer mu.Unlock()
		if strings.Contains(message, "Attempting to initialize Null backend") {
			tries++
		}
	}
	newContext(t, device.Options{Backend: device.BackendNull, PollInterval: -1, Log: log})
	mu.Lock()
	defer mu.Unlock()
	assert.Equal(t, 2, tries)
}

// TestNullBackendStampsPlaybackTakes checks a miniaudio stream's take clock against its
// counters: one take per playback callback, stamped when it ran, never ahead of the device's
// clock. miniaudio's null backend catches up after a late wake (it writes the periods it owes
// without waiting), so two takes may come closer than a period apart; what it guarantees is that
// period k is not written before the device has run about k-1 periods, counted from its start.
func TestNullBackendStampsPlaybackTakes(t *testing.T) {
	c := newContext(t, device.Options{Backend: device.BackendNull, PollInterval: -1})
	s, err := c.Open(device.Config{Playback: true})
	require.NoError(t, err)
	defer s.Close()
	clock, ok := s.(device.PlaybackClock)
	require.True(t, ok, "a miniaudio stream has a take clock")
	n, last := clock.PlaybackTakes()
	assert.Zero(t, n)
	assert.True(t, last.IsZero(), "no take before the start")

	start := time.Now()
	require.NoError(t, s.Start())
	for n < 20 {
		select {
		case <-s.Playback().SpaceSignal(): // each take wakes it
		case <-time.After(10 * time.Second): // a hang: a take is due every 10 ms
			t.Fatalf("no take within 10 s; %d so far", n)
		}
		n, last = clock.PlaybackTakes()
	}
	require.NoError(t, s.Stop())
	end := time.Now()
	n, last = clock.PlaybackTakes()
	assert.Equal(t, s.Stats().PlaybackPeriods, n, "one take per playback callback")
	assert.False(t, last.Before(start) || last.After(end), "the last take is stamped while the stream ran")
	// Measured, the twentieth take comes about 2.8 periods early (172 ms after the start): the
	// first writes need no wait and the null backend waits for the start of the period it writes,
	// not its end. Being late only makes takes later, so four periods of slack cannot be used up.
	owed := time.Duration(n-4) * 10 * time.Millisecond
	assert.GreaterOrEqual(t, last.Sub(start), owed, "takes never run ahead of the device's clock")
}
