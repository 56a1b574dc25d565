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
// the same two device hops with a plain wire instead of the engines, period by period and in
// whole 20 ms frames, all with the same probe: a playback and a capture device opened as the
// engines' devices are, timing each burst by the wall clock from the callback that plays it to
// the callback that hears it.
func measurePulse(bursts int, peers []peer, onlyPeers bool) (p pulsePaths, err error) {
	srv, c, ids, err := startPulse()
	if err != nil {
		return p, err
	}
	defer srv.Close()
	defer c.Close()

	if p.loopback, err = probe(c, ids.mouth, ids.mouthMon, bursts); err != nil {
		return p, fmt.Errorf("device loopback: %w", err)
	}
	hops := func() ([]float64, error) { return probe(c, ids.mouth, ids.earMon, bursts) }
	if p.wire, err = wired(c, ids.mouthMon, ids.ear, period, hops); err != nil {
		return p, fmt.Errorf("plain wire: %w", err)
	}
	if p.frameWire, err = wired(c, ids.mouthMon, ids.ear, pcm.FrameSamples, hops); err != nil {
		return p, fmt.Errorf("one-frame wire: %w", err)
	}

	for _, gp := range peers {
		ms, err := retry(func() ([]float64, error) {
			return runPeer(gp, [4]string{"mouth.monitor", "ear", "void.monitor", "void"}, hops)
		})
		if errors.Is(err, errNoGStreamer) {
			return p, err
		}
		// A peer that failed three times is reported as such; the engines are measured still.
		p.peers = append(p.peers, peerResult{gp, ms, err})
	}
	if onlyPeers {
		return p, nil
	}
	for _, err := range measureEngines(c, ids, bursts, &p, probe) {
		if err != nil {
			return p, err // the first failure, as the paths are measured in turn
		}
	}
	return p, nil
}

// measurePulseEngines measures the engines' paths alone, each whether or not the others could be
// measured; errs holds each path's failure (engines, relay, relayLow).
func measurePulseEngines(bursts int) (p pulsePaths, errs [3]error) {
	srv, c, ids, err := startPulse()
	if err != nil {
		return p, [3]error{err, err, err}
	}
	defer srv.Close()
	defer c.Close()
	return p, measureEngines(c, ids, bursts, &p, collect)
}

// collect is probe for a loaded machine, where now and then a burst goes unheard on any path:
// it measures the bursts five at a time and keeps the runs in which each was heard, trying up to
// three times as many runs as it needs. Both builds compared lose the same share of runs.
func collect(c *device.Context, playID, captureID string, bursts int) ([]float64, error) {
	const run = 5
	var ms []float64
	var err error
	for tries := 0; len(ms) < bursts && tries < 3*(bursts+run-1)/run; tries++ {
		var got []float64
		if got, err = probe(c, playID, captureID, run); err != nil {
			fmt.Fprintf(os.Stderr, "bench/voice: a run of %d bursts left out: %v\n", run, firstLine(err))
			continue
		}
		ms = append(ms, got...)
	}
	if len(ms) < bursts {
		return nil, fmt.Errorf("%d of %d bursts measured: %w", len(ms), bursts, err)
	}
	return ms, nil
}

// pulseIDs are the device IDs of the private sound server's sinks and their monitors.
type pulseIDs struct{ mouth, mouthMon, ear, earMon, void, voidMon string }

// startPulse starts a private sound server with the sinks "mouth", "ear" and "void", points this
// process at it and opens a device context on it.
func startPulse() (srv *pulseserver.Server, c *device.Context, ids pulseIDs, err error) {
	srv, err = pulseserver.Start("mouth", "ear", "void")
	if err != nil {
		return nil, nil, ids, err
	}
	for _, kv := range srv.Env() {
		if k, v, ok := strings.Cut(kv, "="); ok {
			os.Setenv(k, v)
		}
	}
	c, err = device.NewContext(device.Options{Backend: device.BackendPulseAudio, PollInterval: -1})
	if err != nil {
		srv.Close()
		return nil, nil, ids, err
	}
	list, err := c.Devices()
	if err != nil {
		c.Close()
		srv.Close()
		return nil, nil, ids, err
	}
	id := func(infos []device.Info, name string) (string, error) {
		for _, d := range infos {
			if d.Name == name {
				return d.ID, nil
			}
		}
		return "", fmt.Errorf("no device %q", name)
	}
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
			c.Close()
			srv.Close()
			return nil, nil, ids, err
		}
	}
	return srv, c, ids, nil
}

// measureEngines measures the engines' paths into p with probe, in turn, each whether or not the
// one before could be measured, and returns each one's failure: two engines joined in-process,
// then the whole SDK through the relay in the default and the low-latency mode.
func measureEngines(c *device.Context, ids pulseIDs, bursts int, p *pulsePaths,
	probe func(c *device.Context, playID, captureID string, bursts int) ([]float64, error)) (errs [3]error) {
	stop, err := startPair(voice.EngineConfig{InputDevice: ids.mouthMon, OutputDevice: ids.void}, engine.Options{Devices: c},
		voice.EngineConfig{InputDevice: ids.voidMon, OutputDevice: ids.ear}, engine.Options{Devices: c}, true)
	if err == nil {
		p.engines, err = retry(func() ([]float64, error) { return probe(c, ids.mouth, ids.earMon, bursts) })
		stop()
	}
	if err != nil {
		errs[0] = fmt.Errorf("through two engines: %w", err)
	}

	// The whole SDK, as measureRelay runs it, on the same devices: in the default mode, then in
	// the low-latency mode.
	for i, m := range []struct {
		low bool
		dst *[]float64
	}{{false, &p.relay}, {true, &p.relayLow}} {
		*m.dst, err = retry(func() ([]float64, error) {
			return relayCall([2]engineSide{
				{opts: engine.Options{Devices: c}, input: ids.mouthMon, output: ids.void},
				{opts: engine.Options{Devices: c}, input: ids.voidMon, output: ids.ear},
			}, m.low, func(each func()) ([]float64, error) {
				done := make(chan struct{})
				pumped := make(chan struct{})
				go func() { // the game's frames, while the probe waits for its bursts
					defer close(pumped)
					for t := time.NewTicker(10 * time.Millisecond); ; {
						select {
						case <-done:
							t.Stop()
							return
						case <-t.C:
							each()
						}
					}
				}()
				defer func() { close(done); <-pumped }()
				return probe(c, ids.mouth, ids.earMon, bursts)
			})
		})
		if err != nil {
			errs[i+1] = fmt.Errorf("two engines through the relay (low-latency %v): %w", m.low, err)
		}
	}
	return errs
}

// pulsePaths are the PulseAudio measurements, in milliseconds per burst.
type pulsePaths struct {
	loopback  []float64 // one device hop
	wire      []float64 // two hops, copied period by period
	frameWire []float64 // two hops, copied in whole 20 ms frames as the engines send them
	engines   []float64 // two hops, through two engines joined in-process
	relay     []float64 // two hops, through two SDK clients in a call through the relay
	relayLow  []float64 // the same in the low-latency mode
	peers     []peerResult
}

// peerResult is a GStreamer peer's measurement, in milliseconds per burst.
type peerResult struct {
	peer peer
	ms   []float64
	err  error // why it could not be measured
}

// wired runs measure while a plain device stream copies captureID to playbackID chunk samples
// at a time, with no engine: the device layer's own cost of a capture and a playback hop, and
// with chunk a 20 ms frame the cost of framing the voice as the engines do.
func wired(c *device.Context, captureID, playbackID string, chunk int, measure func() ([]float64, error)) ([]float64, error) {
	w, err := c.Open(device.Config{Capture: true, CaptureID: captureID, Playback: true, PlaybackID: playbackID})
	if err != nil {
		return nil, err
	}
	defer w.Close()
	if err := w.Start(); err != nil {
		return nil, err
	}
	stop, done := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(done)
		buf := make([]int16, chunk)
		for w.Capture().WaitData(chunk, stop) {
			w.Capture().Read(buf)
			// Like the engine, keep the playback ring at one period: a period the start-up
			// left over would otherwise stay in the ring for good.
			if w.Playback().Len() < period {
				w.Playback().Write(buf)
			}
		}
	}()
	defer func() { close(stop); <-done }()
	return measure()
}

// burstSignal is the probe's signal: one 40 ms 1 kHz tone burst, then quiet until the next one
// 400 ms after it. A click would not survive the engines' noise suppression and Opus. The bursts
// start 0, 1, ... 19 ms into a device period in turn: every device in the path runs on the same
// clock, so bursts that all started on a period boundary would all meet the talker's 20 ms
// frames at the one phase the streams' start-up happened to set, and the figure would move from
// run to run by up to a frame.
func burstSignal() device.Signal {
	tone := make([]int16, burstLen*period)
	for i := range tone {
		tone[i] = int16(16000 * math.Sin(2*math.Pi*1000*float64(i)/pcm.SampleRate))
	}
	stagger := make([]int, pcm.FrameDurationMs)
	for i := range stagger {
		stagger[i] = i * pcm.SampleRate / 1000
	}
	return device.Signal{Samples: tone, Threshold: loud, Gap: (burstEvery - burstLen) * 10 * time.Millisecond, Stagger: stagger}
}

// probe plays bursts into playID and listens on captureID with a playback and a capture device
// opened as the engine's are, and returns each burst's latency in milliseconds: from the playback
// callback that wrote its first sample to the capture callback that delivered its onset, by the
// wall clock. The first burst, heard while the path may still settle, is dropped.
func probe(c *device.Context, playID, captureID string, bursts int) ([]float64, error) {
	l, err := c.MeasureSignal(playID, captureID, burstSignal(), bursts+1)
	if err != nil {
		return nil, err
	}
	ms := make([]float64, 0, bursts)
	for _, d := range l.Raw[1:] {
		ms = append(ms, float64(d)/float64(time.Millisecond))
	}
	return ms, nil
}

// retry runs a measurement, and on a loaded machine, where a burst now and then goes unheard
// (on the engines' paths as on the peers'), runs it again, twice at most, saying so.
func retry(measure func() ([]float64, error)) (ms []float64, err error) {
	for attempt := 1; ; attempt++ {
		if ms, err = measure(); err == nil || attempt == 3 {
			return ms, err
		}
		fmt.Fprintf(os.Stderr, "bench/voice: attempt %d: %v\n", attempt, firstLine(err))
	}
}

// firstLine is an error's first line (a pipeline's failure carries its whole log).
func firstLine(err error) string {
	s, _, _ := strings.Cut(err.Error(), "\n")
	return s
}
