// Package wav reads and writes the one WAV flavour the voice engine's tests use: PCM, signed 16-bit
// little-endian samples, any rate and channel count (the engine's fixtures are 48 kHz mono).
package wav

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"
)

// Audio is decoded PCM: interleaved samples with their rate and channel count.
type Audio struct {
	// SampleRate is the number of frames per second.
	SampleRate int
	// Channels is the number of interleaved channels.
	Channels int
	// Samples holds the interleaved samples.
	Samples []int16
}

// ErrFormat reports a WAV file that is not 16-bit PCM or is malformed.
var ErrFormat = errors.New("wav: not a 16-bit PCM WAV file")

const (
	formatPCM        = 1
	formatExtensible = 0xFFFE
)

// Decode parses a RIFF/WAVE file of 16-bit PCM. Chunks other than "fmt " and "data" are skipped.
func Decode(data []byte) (Audio, error) {
	if len(data) < 12 || string(data[0:4]) != "RIFF" || string(data[8:12]) != "WAVE" {
		return Audio{}, fmt.Errorf("%w: no RIFF/WAVE header", ErrFormat)
	}
	var a Audio
	haveFmt := false
	rest := data[12:]
	for len(rest) >= 8 {
		id := string(rest[0:4])
		size := int(binary.LittleEndian.Uint32(rest[4:8]))
		rest = rest[8:]
		if size > len(rest) {
			// Streaming writers (sox to a pipe, for one) leave a data size they could not know;
			// take what is there.
			if id != "data" {
				return Audio{}, fmt.Errorf("%w: chunk %q runs past the end", ErrFormat, id)
			}
			size = len(rest)
		}
		body := rest[:size]
		switch id {
		case "fmt ":
			if size < 16 {
				return Audio{}, fmt.Errorf("%w: short fmt chunk", ErrFormat)
			}
			format := binary.LittleEndian.Uint16(body[0:2])
			a.Channels = int(binary.LittleEndian.Uint16(body[2:4]))
			a.SampleRate = int(binary.LittleEndian.Uint32(body[4:8]))
			bitsPerSample := binary.LittleEndian.Uint16(body[14:16])
			if (format != formatPCM && format != formatExtensible) || bitsPerSample != 16 || a.Channels < 1 {
				return Audio{}, fmt.Errorf("%w: format %d, %d bits, %d channels", ErrFormat, format, bitsPerSample, a.Channels)
			}
			haveFmt = true
		case "data":
			if !haveFmt {
				return Audio{}, fmt.Errorf("%w: data before fmt", ErrFormat)
			}
			a.Samples = make([]int16, size/2)
			for i := range a.Samples {
				a.Samples[i] = int16(binary.LittleEndian.Uint16(body[2*i:]))
			}
			return a, nil
		}
		// Chunks are padded to an even size.
		rest = rest[min(size+size&1, len(rest)):]
	}
	return Audio{}, fmt.Errorf("%w: no data chunk", ErrFormat)
}

// Encode writes a as a canonical 44-byte-header WAV file of 16-bit PCM.
func Encode(w io.Writer, a Audio) error {
	if a.Channels < 1 || a.SampleRate < 1 {
		return fmt.Errorf("wav: encode %d Hz, %d channels: invalid format", a.SampleRate, a.Channels)
	}
	dataSize := 2 * len(a.Samples)
	b := make([]byte, 44+dataSize)
	le := binary.LittleEndian
	copy(b[0:], "RIFF")
	le.PutUint32(b[4:], uint32(36+dataSize))
	copy(b[8:], "WAVEfmt ")
	le.PutUint32(b[16:], 16)
	le.PutUint16(b[20:], formatPCM)
	le.PutUint16(b[22:], uint16(a.Channels))
	le.PutUint32(b[24:], uint32(a.SampleRate))
	le.PutUint32(b[28:], uint32(a.SampleRate*a.Channels*2))
	le.PutUint16(b[32:], uint16(a.Channels*2))
	le.PutUint16(b[34:], 16)
	copy(b[36:], "data")
	le.PutUint32(b[40:], uint32(dataSize))
	for i, s := range a.Samples {
		le.PutUint16(b[44+2*i:], uint16(s))
	}
	if _, err := w.Write(b); err != nil {
		return fmt.Errorf("wav: write: %w", err)
	}
	return nil
}

// ReadFile loads a WAV file.
func ReadFile(path string) (Audio, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return Audio{}, fmt.Errorf("wav: %w", err)
	}
	a, err := Decode(data)
	if err != nil {
		return Audio{}, fmt.Errorf("%s: %w", path, err)
	}
	return a, nil
}

// WriteFile writes a to path as a WAV file.
func WriteFile(path string, a Audio) error {
	var b bytes.Buffer
	if err := Encode(&b, a); err != nil {
		return err
	}
	if err := os.WriteFile(path, b.Bytes(), 0o644); err != nil {
		return fmt.Errorf("wav: %w", err)
	}
	return nil
}

// Writer streams 16-bit PCM into a WAV file whose length is not known in advance: it writes the
// header with zero sizes, and Close patches them in.
type Writer struct {
	f        *os.File
	w        *bufio.Writer
	channels int
	n        int64 // data bytes written
	buf      []byte
}

// Create creates path and writes the header of a WAV file of the given format.
func Create(path string, sampleRate, channels int) (*Writer, error) {
	if channels < 1 || sampleRate < 1 {
		return nil, fmt.Errorf("wav: create %d Hz, %d channels: invalid format", sampleRate, channels)
	}
	f, err := os.Create(path)
	if err != nil {
		return nil, fmt.Errorf("wav: %w", err)
	}
	w := &Writer{f: f, w: bufio.NewWriter(f), channels: channels}
	var hdr bytes.Buffer
	if err := Encode(&hdr, Audio{SampleRate: sampleRate, Channels: channels}); err != nil {
		f.Close()
		return nil, err
	}
	if _, err := w.w.Write(hdr.Bytes()); err != nil {
		f.Close()
		return nil, fmt.Errorf("wav: write: %w", err)
	}
	return w, nil
}

// Write appends interleaved samples.
func (w *Writer) Write(samples []int16) error {
	w.buf = w.buf[:0]
	for _, s := range samples {
		w.buf = binary.LittleEndian.AppendUint16(w.buf, uint16(s))
	}
	n, err := w.w.Write(w.buf)
	w.n += int64(n)
	if err != nil {
		return fmt.Errorf("wav: write: %w", err)
	}
	return nil
}

// Close writes the sizes into the header and closes the file.
func (w *Writer) Close() error {
	err := w.w.Flush()
	var sizes [4]byte
	for _, at := range []struct {
		off  int64
		size int64
	}{{4, 36 + w.n}, {40, w.n}} {
		binary.LittleEndian.PutUint32(sizes[:], uint32(at.size))
		if _, werr := w.f.WriteAt(sizes[:], at.off); err == nil && werr != nil {
			err = werr
		}
	}
	if cerr := w.f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("wav: close: %w", err)
	}
	return nil
}
