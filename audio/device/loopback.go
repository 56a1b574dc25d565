package device

import (
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

// Settings of MeasureLoopback.
const (
	clickLevel     = 16000
	clickSamples   = 4
	clickThreshold = clickLevel / 2
	loopbackWarmUp = 200 * time.Millisecond
	clickTimeout   = 2 * time.Second
)

// Click states: the measuring goroutine arms, the playback callback sends, the capture callback
// finds.
const (
	clickIdle int32 = iota
	clickArmed
	clickSent
	clickFound
)

// clicker is the state the two measurement callbacks share, all atomic.
type clicker struct {
	base    time.Time
	state   atomic.Int32
	sentAt  atomic.Int64 // since base, ns
	foundAt atomic.Int64 // since base, ns
	after   atomic.Int64 // samples after the click in its capture buffer
	found   chan struct{}
}

// play is the playback callback: silence, with a click at the start of the buffer when armed.
func (k *clicker) play(out, _ []byte, _ uint32) {
	s := samples(out)
	clear(s)
	if len(s) >= clickSamples && k.state.CompareAndSwap(clickArmed, clickSent) {
		for i := range clickSamples {
			s[i] = clickLevel
		}
		k.sentAt.Store(int64(time.Since(k.base)))
	}
}

// capture is the capture callback: it looks for the click once one has been sent.
func (k *clicker) capture(_, in []byte, _ uint32) {
	if k.state.Load() != clickSent {
		return
	}
	s := samples(in)
	for i, v := range s {
		if v > clickThreshold || v < -clickThreshold {
			k.foundAt.Store(int64(time.Since(k.base)))
			k.after.Store(int64(len(s) - i))
			k.state.Store(clickFound)
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
// The devices are opened for the measurement alone, with the same format and period as streams,
// and closed before it returns. The capture device must hear the playback device (a sink's
// monitor); a click not heard within two seconds fails the measurement.
func (c *Context) MeasureLoopback(playbackID, captureID string, clicks int) (Loopback, error) {
	k := &clicker{base: time.Now(), found: make(chan struct{}, 1)}
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
	if err := capture.dev.Start(); err != nil {
		return Loopback{}, fmt.Errorf("device: loopback: start capture: %w", err)
	}
	if err := playback.dev.Start(); err != nil {
		return Loopback{}, fmt.Errorf("device: loopback: start playback: %w", err)
	}
	time.Sleep(loopbackWarmUp) // let both streams settle before the first click

	var l Loopback
	period := time.Second / pcm.SampleRate
	for i := range clicks {
		k.state.Store(clickArmed)
		select {
		case <-k.found:
		case <-time.After(clickTimeout):
			return l, fmt.Errorf("device: loopback: click %d not heard within %v (state %d)", i, clickTimeout, k.state.Load())
		}
		raw := time.Duration(k.foundAt.Load() - k.sentAt.Load())
		l.Raw = append(l.Raw, raw)
		l.Adjusted = append(l.Adjusted, raw-time.Duration(k.after.Load())*period)
		k.state.Store(clickIdle)
	}
	return l, nil
}

// openClicker opens the measurement's two devices, stopped.
func (c *Context) openClicker(k *clicker, playbackID, captureID string) (capture, playback *side, err error) {
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
	if capture, err = initDevice(c.ctx, Capture, captureRaw, k.capture); err != nil {
		return nil, nil, err
	}
	if playback, err = initDevice(c.ctx, Playback, playbackRaw, k.play); err != nil {
		capture.release()
		return nil, nil, err
	}
	return capture, playback, nil
}
