// Package speech holds the voice engine's speech fixtures: a few seconds of synthetic speech per
// speaker (espeak-ng, converted with sox), 48 kHz mono signed 16-bit, for loopback, codec and
// multi-party tests. `go generate` remakes them with gen.sh.
package speech

//go:generate bash gen.sh

import (
	"embed"
	"fmt"

	"sdkpp/audio/internal/wav"
	"sdkpp/audio/pcm"
)

//go:embed testdata/*.wav
var files embed.FS

// The fixtures, one speaker each with a different voice and sentences.
const (
	// Alice is an American female voice.
	Alice = "alice"
	// Bob is a British male voice.
	Bob = "bob"
	// Carol is an American male voice.
	Carol = "carol"
)

// Names lists every fixture.
var Names = []string{Alice, Bob, Carol}

// Load returns a fixture's samples (48 kHz mono). Each call returns a fresh copy.
func Load(name string) ([]int16, error) {
	data, err := files.ReadFile("testdata/" + name + ".wav")
	if err != nil {
		return nil, fmt.Errorf("speech: fixture %q: %w", name, err)
	}
	a, err := wav.Decode(data)
	if err != nil {
		return nil, fmt.Errorf("speech: fixture %q: %w", name, err)
	}
	if a.SampleRate != pcm.SampleRate || a.Channels != pcm.Channels {
		return nil, fmt.Errorf("speech: fixture %q is %d Hz, %d channels; want %d Hz mono", name, a.SampleRate, a.Channels, pcm.SampleRate)
	}
	return a.Samples, nil
}

// MustLoad is Load for tests and benchmarks, panicking on a missing or malformed fixture.
func MustLoad(name string) []int16 {
	s, err := Load(name)
	if err != nil {
		panic(err)
	}
	return s
}
