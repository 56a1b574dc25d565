// Package speechscore scores speech that went through a live voice call against what was sent:
// the voice engine issue's log-spectral distance, beside the same voice through Opus alone as the
// engine configures it, measured in the same run. The end-to-end tests of every binding use it.
package speechscore

import (
	"fmt"

	"sdkpp/audio/codec"
	"sdkpp/audio/pcm"
	"sdkpp/audio/quality"
)

// Margin is how far, in dB of log-spectral distance, speech one player hears may be from what
// another played, beyond the codec's own floor for that voice. On a quiet machine the live path
// measures at or below the floor; 2 dB leaves room for a burst of concealed frames on a busy one
// (+1.5 dB seen once under a concurrent stress run) and still fails on speech that is missing,
// misaligned or garbled (10 dB and more above).
const Margin = 2.0

// Score is one listener's hearing of one sender.
type Score struct {
	LSD   float64 // log-spectral distance of what was heard, in dB
	Floor float64 // the same voice through Opus alone
	Lag   int     // samples between the two after alignment
}

// OK reports whether the score is within Margin of its floor.
func (s Score) OK() bool { return s.LSD <= s.Floor+Margin }

// String describes the score for a test log.
func (s Score) String() string {
	return fmt.Sprintf("%.2f dB log-spectral distance (Opus alone %.2f dB, bound %.2f; aligned %d ms)",
		s.LSD, s.Floor, s.Floor+Margin, s.Lag*1000/pcm.SampleRate)
}

// Segment and MaxShift are how Compare aligns: again every half second of what was sent, within
// 100 ms either way of the alignment of the whole. A jitter buffer that stretches its delay by a
// frame on a busy machine moves all that follows; aligned once, the rest would score as noise.
const (
	Segment  = pcm.SampleRate / 2
	MaxShift = pcm.SampleRate / 10
)

// Compare scores heard against sent, both 48 kHz mono.
func Compare(sent, heard []int16) (Score, error) {
	floor, err := OpusRoundTrip(sent)
	if err != nil {
		return Score{}, err
	}
	return Score{
		LSD:   quality.LogSpectralDistanceSegmented(sent, heard, pcm.SampleRate, Segment, MaxShift),
		Floor: quality.LogSpectralDistanceSegmented(sent, floor, pcm.SampleRate, Segment, MaxShift),
		Lag:   quality.Align(sent, heard),
	}, nil
}

// OpusRoundTrip encodes samples with the engine's codec settings and decodes every packet.
func OpusRoundTrip(samples []int16) ([]int16, error) {
	enc, err := codec.NewEncoder()
	if err != nil {
		return nil, err
	}
	dec, err := codec.NewDecoder()
	if err != nil {
		return nil, err
	}
	out := make([]int16, 0, len(samples))
	frame, decoded := make([]int16, pcm.FrameSamples), make([]int16, pcm.FrameSamples)
	packet := make([]byte, codec.MaxPacketBytes)
	for at := 0; at+pcm.FrameSamples <= len(samples); at += pcm.FrameSamples {
		copy(frame, samples[at:])
		n, err := enc.Encode(frame, packet)
		if err != nil {
			return nil, fmt.Errorf("speechscore: encode: %w", err)
		}
		if _, err := dec.Decode(packet[:n], decoded); err != nil {
			return nil, fmt.Errorf("speechscore: decode: %w", err)
		}
		out = append(out, decoded...)
	}
	return out, nil
}
