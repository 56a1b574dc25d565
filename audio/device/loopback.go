package device

import (
	"errors"
	"fmt"
	"slices"
	"sync/atomic"
	"time"

	"sdkpp/audio/pcm"
)

// Loopback is a measurement of the device path alone: how long a click written by the playback
// callback takes to reach the capture callback, through the sound system and back (for instance a
// PulseAudio null sink and its monitor).
type Loopback struct {
	// Raw holds, per click, the time from the playback callback that wrote the click to the capture
	// callback that delivered it.
	Raw []time.Duration
	// Adjusted holds, per click, Raw less the time the click had already spent in the capture
	// buffer when its callback ran (the samples after it in that buffer).
	Adjusted []time.Duration
}

// MedianRaw returns the median of Raw.
func (l Loopback) MedianRaw() time.Duration { return median(l.Raw) }

// MedianAdjusted returns the median of Adjusted.
func (l Loopback) MedianAdjusted() time.Duration { return median(l.Adjusted) }

func median(d []time.Duration) time.Duration {
	if len(d) == 0 {
		return 0
	}
	s := slices.Clone(d)
	slices.Sort(s)
	return s[len(s)/2]
}

// Signal is what MeasureSignal plays and listens for.
type Signal struct {
	// Samples is played from the start of a playback buffer, across as many buffers as it takes.
	Samples []int16
	// Threshold: the first captured sample above it (or below its negation) is the signal's onset.
	Threshold int16
	// Gap is how long to wait after an onset is heard before playing the next signal, so that
	// the rest of it (and whatever it set ringing) has passed.
	Gap time.Duration
	// Timeout bounds how long one signal may take to be heard; zero means two seconds.
	Timeout time.Duration
	// Stagger, when set, delays the i-th signal by Stagger[i%len(Stagger)] samples of silence
	// after the start of its first buffer (the delay is not measured), so that the signals'
	// onsets fall at different points of the buffers and of any framing further down the path.
	Stagger []int
}

// Click is the signal MeasureLoopback plays: four samples at half of full scale, no gap.
var Click = Signal{Samples: []int16{16000, 16000, 16000, 16000}, Threshold: 8000}

// Settings of MeasureSignal.
const (
	loopbackWarmUp = 200 * time.Millisecond
	signalTimeout  = 2 * time.Second
)

// Signal states: the measuring goroutine arms, the playback callback starts playing, the capture
// callback finds.
const (
	signalIdle int32 = iota
	signalArmed
	signalPlaying
	signalFound
)

// clicker is the state the two measurement callbacks share. The playback callback alone writes
// pos; the rest is atomic.
type clicker struct {
	base    time.Time
	signal  []int16
	level   int16
	lead    atomic.Int64 // samples of silence before the next signal
	pos     int          // samples of signal played so far, negative during the lead (playback callback only)
	state   atomic.Int32
	sentAt  atomic.Int64 // since base, ns
	foundAt atomic.Int64 // since base, ns
	after   atomic.Int64 // samples after the onset in its capture buffer
	found   chan struct{}
}

// play is the playback callback: silence, with the signal from the start of the buffer once
// armed, continued over the next buffers until it has all been played.
func (k *clicker) play(out, _ []byte, _ uint32) {
	s := samples(out)
	clear(s)
	if len(s) > 0 && k.state.CompareAndSwap(signalArmed, signalPlaying) {
		lead := k.lead.Load()
		k.pos = -int(lead)
		k.sentAt.Store(int64(time.Since(k.base) + time.Duration(lead)*time.Second/pcm.SampleRate))
	}
	if k.pos < len(k.signal) && k.state.Load() != signalIdle {
		if k.pos < 0 {
			skip := min(-k.pos, len(s))
			k.pos += skip
			s = s[skip:]
		}
		if k.pos >= 0 {
			k.pos += copy(s, k.signal[k.pos:])
		}
	}
}

// capture is the capture callback: it looks for the signal's onset while it plays.
func (k *clicker) capture(_, in []byte, _ uint32) {
	if k.state.Load() != signalPlaying {
		return
	}
	s := samples(in)
	for i, v := range s {
		if v > k.level || v < -k.level {
			k.foundAt.Store(int64(time.Since(k.base)))
			k.after.Store(int64(len(s) - i))
			k.state.Store(signalFound)
			select {
			case k.found <- struct{}{}:
			default:
			}
			return
		}
	}
}

// MeasureLoopback plays clicks on the playback device playbackID and finds them on the capture
// device captureID (empty IDs select the defaults), one at a time, and returns the delay of each.
// It is MeasureSignal with Click.
func (c *Context) MeasureLoopback(playbackID, captureID string, clicks int) (Loopback, error) {
	return c.MeasureSignal(playbackID, captureID, Click, clicks)
}

// MeasureSignal plays sig n times on the playback device playbackID and finds each onset on the
// capture device captureID (empty IDs select the defaults), one at a time, and returns the delay
// of each, from the playback callback that wrote the signal's first sample to the capture
// callback that delivered its onset. The devices are opened for the measurement alone, with the
// same configuration as streams, and closed before it returns. Whatever lies between the two
// devices (a sink's monitor, or other streams and engines relaying the sound) is measured; a
// signal not heard within sig.Timeout fails the measurement.
func (c *Context) MeasureSignal(playbackID, captureID string, sig Signal, n int) (Loopback, error) {
	if len(sig.Samples) == 0 || sig.Threshold <= 0 {
		return Loopback{}, errors.New("device: loopback: the signal needs samples and a positive threshold")
	}
	if slices.ContainsFunc(sig.Stagger, func(n int) bool { return n < 0 }) {
		return Loopback{}, errors.New("device: loopback: a negative stagger")
	}
	timeout := sig.Timeout
	if timeout <= 0 {
		timeout = signalTimeout
	}
	k := &clicker{base: time.Now(), signal: sig.Samples, level: sig.Threshold, found: make(chan struct{}, 1)}
	capture, playback, err := c.openClicker(k, playbackID, captureID)
	if err != nil {
		return Loopback{}, err
	}
	defer func() {
		c.mu.Lock()
		defer c.mu.Unlock()
		playback.release()
		capture.release()
	}()
	if err := capture.start(); err != nil {
		return Loopback{}, fmt.Errorf("device: loopback: %w", err)
	}
	if err := playback.start(); err != nil {
		return Loopback{}, fmt.Errorf("device: loopback: %w", err)
	}
	time.Sleep(loopbackWarmUp) // let both streams settle before the first signal

	var l Loopback
	period := time.Second / pcm.SampleRate
	for i := range n {
		if len(sig.Stagger) > 0 {
			k.lead.Store(int64(sig.Stagger[i%len(sig.Stagger)]))
		}
		k.state.Store(signalArmed)
		select {
		case <-k.found:
		case <-time.After(timeout):
			return l, fmt.Errorf("device: loopback: signal %d not heard within %v (state %d)", i, timeout, k.state.Load())
		}
		raw := time.Duration(k.foundAt.Load() - k.sentAt.Load())
		l.Raw = append(l.Raw, raw)
		l.Adjusted = append(l.Adjusted, raw-time.Duration(k.after.Load())*period)
		time.Sleep(sig.Gap)
		k.state.Store(signalIdle)
	}
	return l, nil
}

// openClicker opens the measurement's two devices, stopped.
func (c *Context) openClicker(k *clicker, playbackID, captureID string) (capture, playback *cdevice, err error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed {
		return nil, nil, fmt.Errorf("device: loopback: %w", ErrClosed)
	}
	list, err := c.devicesLocked()
	if err != nil {
		return nil, nil, fmt.Errorf("device: loopback: %w", err)
	}
	_, captureRaw, err := lookup(list, Capture, captureID)
	if err != nil {
		return nil, nil, err
	}
	_, playbackRaw, err := lookup(list, Playback, playbackID)
	if err != nil {
		return nil, nil, err
	}
	if capture, err = c.openDevice(Capture, captureRaw, pcm.Channels, nil, k.capture); err != nil {
		return nil, nil, err
	}
	if playback, err = c.openDevice(Playback, playbackRaw, pcm.Channels, nil, k.play); err != nil {
		capture.release()
		return nil, nil, err
	}
	return capture, playback, nil
}
