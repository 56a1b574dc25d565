package main

import (
	"errors"
	"fmt"
	"math"
	"os"
	"strings"
	"time"

	"sdkpp/audio/device"
	"sdkpp/audio/engine"
	"sdkpp/audio/pcm"
	"sdkpp/core/voice"
	"sdkpp/internal/pulseserver"
)

// measurePulse measures, through a private PulseAudio, the capture-to-playback latency of two
// engines joined in-process (the talker captures the sink "mouth" from its monitor, the listener
// plays into the sink "ear") against the device loopback alone ("mouth" into its own monitor), and
// the same two device hops with a plain wire instead of the engines, all with the same probe: a
// stream that plays bursts into "mouth" and listens on a monitor.
func measurePulse(bursts int) (loopback, wire, engines []float64, err error) {
	srv, err := pulseserver.Start("mouth", "ear", "void")
	if err != nil {
		return nil, nil, nil, err
	}
	defer srv.Close()
	for _, kv := range srv.Env() {
		if k, v, ok := strings.Cut(kv, "="); ok {
			os.Setenv(k, v)
		}
	}
	c, err := device.NewContext(device.Options{Backend: device.BackendPulseAudio, PollInterval: -1})
	if err != nil {
		return nil, nil, nil, err
	}
	defer c.Close()
	list, err := c.Devices()
	if err != nil {
		return nil, nil, nil, err
	}
	id := func(infos []device.Info, name string) (string, error) {
		for _, d := range infos {
			if d.Name == name {
				return d.ID, nil
			}
		}
		return "", fmt.Errorf("no device %q", name)
	}
	var ids struct{ mouth, mouthMon, ear, earMon, void, voidMon string }
	for _, x := range []struct {
		dst   *string
		infos []device.Info
		name  string
	}{
		{&ids.mouth, list.Playback, "mouth"}, {&ids.mouthMon, list.Capture, "Monitor of mouth"},
		{&ids.ear, list.Playback, "ear"}, {&ids.earMon, list.Capture, "Monitor of ear"},
		{&ids.void, list.Playback, "void"}, {&ids.voidMon, list.Capture, "Monitor of void"},
	} {
		if *x.dst, err = id(x.infos, x.name); err != nil {
			return nil, nil, nil, err
		}
	}

	if loopback, err = probe(c, ids.mouth, ids.mouthMon, bursts); err != nil {
		return nil, nil, nil, fmt.Errorf("device loopback: %w", err)
	}
	if wire, err = wired(c, ids.mouthMon, ids.ear, func() ([]float64, error) { return probe(c, ids.mouth, ids.earMon, bursts) }); err != nil {
		return nil, nil, nil, fmt.Errorf("plain wire: %w", err)
	}

	stop, err := startPair(voice.EngineConfig{InputDevice: ids.mouthMon, OutputDevice: ids.void}, engine.Options{Devices: c},
		voice.EngineConfig{InputDevice: ids.voidMon, OutputDevice: ids.ear}, engine.Options{Devices: c}, true)
	if err != nil {
		return nil, nil, nil, err
	}
	defer stop()
	if engines, err = probe(c, ids.mouth, ids.earMon, bursts); err != nil {
		return nil, nil, nil, fmt.Errorf("through two engines: %w", err)
	}
	return loopback, wire, engines, nil
}

// wired runs measure while a plain device stream copies captureID to playbackID, period by
// period, with no engine: the device layer's own cost of a capture and a playback hop.
func wired(c *device.Context, captureID, playbackID string, measure func() ([]float64, error)) ([]float64, error) {
	w, err := c.Open(device.Config{Capture: true, CaptureID: captureID, Playback: true, PlaybackID: playbackID})
	if err != nil {
		return nil, err
	}
	defer w.Close()
	w.Playback().Write(make([]int16, period))
	if err := w.Start(); err != nil {
		return nil, err
	}
	stop, done := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(done)
		buf := make([]int16, period)
		for w.Capture().WaitData(period, stop) {
			w.Capture().Read(buf)
			w.Playback().Write(buf)
		}
	}()
	defer func() { close(stop); <-done }()
	return measure()
}

// probe plays a 40 ms tone burst every 400 ms into playID and listens on captureID, one stream
// whose two rings move in step with the devices: the capture ring is read a period at a time and
// the playback ring is written as much, so the sample written n-th plays n samples (plus the
// silence of any underrun before it) after the first, and the sample read n-th was captured n
// samples after the first. A burst's latency is the distance between its first sample played and
// its first loud sample read.
func probe(c *device.Context, playID, captureID string, bursts int) ([]float64, error) {
	s, err := c.Open(device.Config{Playback: true, PlaybackID: playID, Capture: true, CaptureID: captureID})
	if err != nil {
		return nil, err
	}
	defer s.Close()
	lead := make([]int16, 2*period)
	s.Playback().Write(lead) // the playback ring's constant fill
	if err := s.Start(); err != nil {
		return nil, err
	}
	in, out := make([]int16, period), make([]int16, period)
	var sent, heard []int64
	written := int64(len(lead)) // the lead plays first
	read := int64(0)
	inBurst, quiet := false, 0
	stop := make(chan struct{})
	timeout := time.AfterFunc(time.Duration(bursts+10)*burstEvery*40*time.Millisecond, func() { close(stop) })
	defer timeout.Stop()
	for k := 0; len(heard) < bursts+1; k++ {
		if !s.Capture().WaitData(period, stop) {
			return nil, fmt.Errorf("heard %d bursts of %d sent (stats %+v)", len(heard), len(sent), s.Stats())
		}
		s.Capture().Read(in)
		for i, v := range in {
			if v > loud || v < -loud {
				if !inBurst {
					heard = append(heard, read+int64(i))
					inBurst = true
				}
				quiet = 0
			}
		}
		if inBurst {
			if quiet++; quiet > burstEvery/2 {
				inBurst = false
			}
		}
		read += period
		phase := k % burstEvery
		clear(out)
		if phase < burstLen {
			if phase == 0 {
				// Underruns before this burst played silence the ring did not hold: the burst
				// plays that much later than its place in what was written.
				sent = append(sent, written+int64(s.Stats().Playback.UnderrunSamples))
			}
			for i := range out {
				out[i] = int16(16000 * math.Sin(2*math.Pi*1000*float64(phase*period+i)/pcm.SampleRate))
			}
		}
		if n := s.Playback().Write(out); n != len(out) {
			return nil, errors.New("the playback ring is full")
		}
		written += period
	}
	if st := s.Stats(); st.Capture.OverrunSamples > 0 {
		return nil, fmt.Errorf("the probe's capture lost samples, its timeline is off: %+v", st)
	}
	var ms []float64
	for _, h := range heard[1:] {
		var b int64 = -1
		for _, t := range sent {
			if t <= h {
				b = t
			}
		}
		if b >= 0 {
			ms = append(ms, float64(h-b)*1000/pcm.SampleRate)
		}
	}
	return ms, nil
}
