package engine

import (
	"errors"
	"fmt"

	"sdkpp/audio/internal/wav"
	"sdkpp/audio/pcm"
)

// aecDumpFrames is how many 20 ms frames (1.28 s) the dump ring holds for its writer; a frame
// that finds it full is dropped and counted.
const aecDumpFrames = 64

// aecFrame is one step's echo-cancellation signals.
type aecFrame struct {
	near, far, out [pcm.FrameSamples]int16
	n              int // samples of each that the frame holds (10 ms in low-latency mode)
}

// aecDump writes the echo canceller's signals to three WAV files from a goroutine of its own.
// The processing step takes a free frame, fills it and hands it over without blocking or
// allocating; the writer does the file I/O and returns the frame.
type aecDump struct {
	free    chan *aecFrame
	full    chan *aecFrame
	done    chan struct{}
	dropped int // frames the step could not hand over; owned by the processing goroutine
	logf    func(format string, args ...any)
}

// startAecDump creates the three files of prefix and starts their writer.
func startAecDump(prefix string, logf func(string, ...any)) (*aecDump, error) {
	var ws [3]*wav.Writer
	for i, name := range []string{"-near.wav", "-far.wav", "-out.wav"} {
		w, err := wav.Create(prefix+name, pcm.SampleRate, 1)
		if err != nil {
			for _, o := range ws[:i] {
				_ = o.Close()
			}
			return nil, fmt.Errorf("aec dump: %w", err)
		}
		ws[i] = w
	}
	d := &aecDump{free: make(chan *aecFrame, aecDumpFrames), full: make(chan *aecFrame, aecDumpFrames),
		done: make(chan struct{}), logf: logf}
	for range aecDumpFrames {
		d.free <- new(aecFrame)
	}
	go d.write(ws)
	return d, nil
}

// take returns a free frame, or nil (counting a drop) when the writer is behind.
func (d *aecDump) take() *aecFrame {
	select {
	case f := <-d.free:
		return f
	default:
		d.dropped++
		return nil
	}
}

// put hands a filled frame to the writer; it never blocks, as full has room for every frame.
func (d *aecDump) put(f *aecFrame) { d.full <- f }

// write is the writer goroutine: it ends when stop closes full.
func (d *aecDump) write(ws [3]*wav.Writer) {
	defer close(d.done)
	var err error
	for f := range d.full {
		if err == nil {
			err = errors.Join(ws[0].Write(f.near[:f.n]), ws[1].Write(f.far[:f.n]), ws[2].Write(f.out[:f.n]))
			if err != nil {
				d.logf("aec dump: %v (no more frames are written)", err)
			}
		}
		d.free <- f
	}
	for _, w := range ws {
		if cerr := w.Close(); cerr != nil {
			d.logf("aec dump: %v", cerr)
		}
	}
}

// stop ends the writer once it has written every frame handed over, and closes the files. The
// processing goroutine has ended.
func (d *aecDump) stop() {
	close(d.full)
	<-d.done
	if d.dropped > 0 {
		d.logf("aec dump: %d frames dropped because the writer fell behind", d.dropped)
	}
}
