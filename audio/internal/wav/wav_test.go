package wav

import (
	"bytes"
	"encoding/binary"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestEncodeDecodeRoundTrip(t *testing.T) {
	in := Audio{SampleRate: 48000, Channels: 1, Samples: []int16{0, 1, -1, 32767, -32768, 1234}}
	var b bytes.Buffer
	require.NoError(t, Encode(&b, in))
	assert.Equal(t, 44+2*len(in.Samples), b.Len())
	out, err := Decode(b.Bytes())
	require.NoError(t, err)
	assert.Equal(t, in, out)
}

func TestFileRoundTrip(t *testing.T) {
	path := filepath.Join(t.TempDir(), "a.wav")
	in := Audio{SampleRate: 22050, Channels: 2, Samples: []int16{5, -5, 7, -7}}
	require.NoError(t, WriteFile(path, in))
	out, err := ReadFile(path)
	require.NoError(t, err)
	assert.Equal(t, in, out)
}

func TestDecodeSkipsOtherChunksAndTakesAnUnknownDataSize(t *testing.T) {
	var b bytes.Buffer
	require.NoError(t, Encode(&b, Audio{SampleRate: 48000, Channels: 1, Samples: []int16{1, 2, 3}}))
	raw := b.Bytes()
	// Insert an odd-sized LIST chunk (padded to even) between fmt and data, and give data the
	// size a streaming writer leaves when it cannot seek back.
	list := []byte{'L', 'I', 'S', 'T', 3, 0, 0, 0, 'a', 'b', 'c', 0}
	withList := append(append(append([]byte{}, raw[:36]...), list...), raw[36:]...)
	binary.LittleEndian.PutUint32(withList[36+len(list)+4:], 0xFFFFFFFF)
	out, err := Decode(withList)
	require.NoError(t, err)
	assert.Equal(t, []int16{1, 2, 3}, out.Samples)
}

func TestDecodeRejects(t *testing.T) {
	var b bytes.Buffer
	require.NoError(t, Encode(&b, Audio{SampleRate: 48000, Channels: 1, Samples: []int16{1}}))
	eightBit := bytes.Clone(b.Bytes())
	binary.LittleEndian.PutUint16(eightBit[34:], 8)
	noData := bytes.Clone(b.Bytes()[:36])
	for name, data := range map[string][]byte{
		"empty":   nil,
		"not wav": []byte("RIFF\x00\x00\x00\x00AVI LIST"),
		"8-bit":   eightBit,
		"no data": noData,
	} {
		_, err := Decode(data)
		assert.ErrorIs(t, err, ErrFormat, name)
	}
	assert.Error(t, Encode(&b, Audio{}))
}

func TestWriterStreamsAValidFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "s.wav")
	w, err := Create(path, 48000, 1)
	require.NoError(t, err)
	require.NoError(t, w.Write([]int16{1, -2, 3}))
	require.NoError(t, w.Write([]int16{32767, -32768}))
	require.NoError(t, w.Close())
	a, err := ReadFile(path)
	require.NoError(t, err)
	assert.Equal(t, Audio{SampleRate: 48000, Channels: 1, Samples: []int16{1, -2, 3, 32767, -32768}}, a)
}
