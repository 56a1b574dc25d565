package rpc

import (
	"bytes"
	"encoding/binary"
	"io"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestFrameRoundTrip(t *testing.T) {
	var buf bytes.Buffer
	payload := []byte(`{"v":1,"client_id":"42"}`)
	require.NoError(t, WriteFrame(&buf, OpHandshake, payload))
	want := append([]byte{0, 0, 0, 0, byte(len(payload)), 0, 0, 0}, payload...)
	require.Equal(t, want, buf.Bytes(), "encoded % x, want % x", buf.Bytes(), want)
	op, got, err := ReadFrame(&buf)
	require.NoError(t, err, "ReadFrame = %v %q", op, got)
	require.Equal(t, OpHandshake, op, "ReadFrame = %v %q %v", op, got, err)
	require.Equal(t, payload, got, "ReadFrame = %v %q %v", op, got, err)
	_, _, err = ReadFrame(&buf)
	assert.Equal(t, io.EOF, err, "at the end: %v, want io.EOF", err)
}

func TestFrameLimits(t *testing.T) {
	err := WriteFrame(io.Discard, OpFrame, make([]byte, MaxPayload+1))
	require.ErrorIs(t, err, ErrFrameTooLarge, "writing an oversize frame: %v", err)
	require.NoError(t, WriteFrame(io.Discard, OpFrame, make([]byte, MaxPayload)), "writing a frame of MaxPayload")
	big := binary.LittleEndian.AppendUint32(binary.LittleEndian.AppendUint32(nil, 1), 1<<31)
	_, _, err = ReadFrame(bytes.NewReader(big))
	require.ErrorIs(t, err, ErrFrameTooLarge, "reading a 2 GiB header: %v", err)
	bad := AppendFrame(nil, 9, []byte("{}"))
	_, _, err = ReadFrame(bytes.NewReader(bad))
	require.ErrorIs(t, err, ErrBadOpcode, "reading opcode 9: %v", err)
	short := AppendFrame(nil, OpFrame, []byte("{}"))[:9]
	_, _, err = ReadFrame(bytes.NewReader(short))
	assert.Equal(t, io.ErrUnexpectedEOF, err, "reading a truncated frame: %v", err)
}

// FuzzReadFrame feeds arbitrary bytes to the decoder and the message parser: they never panic,
// never return more than MaxPayload, and what they accept encodes back to the same bytes.
func FuzzReadFrame(f *testing.F) {
	f.Add(AppendFrame(nil, OpFrame, []byte(`{"cmd":"DISPATCH","evt":"READY","data":{"v":1}}`)))
	f.Add(AppendFrame(nil, OpFrame, []byte(`{"cmd":"GET_GUILD","evt":"ERROR","data":{"code":4003,"message":"x"},"nonce":"n"}`)))
	f.Add(AppendFrame(nil, OpClose, []byte(`{"code":4000,"message":"bye"}`)))
	f.Add(AppendFrame(nil, OpPing, []byte(`"p"`)))
	f.Add(AppendFrame(nil, OpFrame, []byte(`{not json`)))
	f.Add(AppendFrame(nil, OpFrame, []byte(`[]`)))
	f.Add([]byte{1, 0, 0, 0, 0, 0, 1, 0})
	f.Add([]byte{255, 255, 255, 255, 255, 255, 255, 255})
	f.Add([]byte{1, 0, 0})
	f.Fuzz(func(t *testing.T, data []byte) {
		r := bytes.NewReader(data)
		var again []byte
		for {
			op, payload, err := ReadFrame(r)
			if err != nil {
				break
			}
			require.LessOrEqual(t, len(payload), MaxPayload, "accepted opcode %d with %d bytes", op, len(payload))
			require.LessOrEqual(t, op, OpPong, "accepted opcode %d with %d bytes", op, len(payload))
			again = AppendFrame(again, op, payload)
			if m, err := ParseMessage(payload); err == nil {
				require.NotEqual(t, "", m.Cmd, "parsed a message without cmd")
				ErrorOf(m)
			}
		}
		require.True(t, bytes.HasPrefix(data, again), "re-encoding differs: % x is not a prefix of % x", again, data)
	})
}

func TestParseMessage(t *testing.T) {
	for _, bad := range []string{``, `{`, `[]`, `"x"`, `{}`, `{"cmd":""}`, `{"cmd":1}`} {
		_, err := ParseMessage([]byte(bad))
		assert.Error(t, err, "ParseMessage(%q) accepted", bad)
	}
	m, err := ParseMessage([]byte(`{"cmd":"SUBSCRIBE","evt":"ERROR","data":{"code":4004,"message":"Invalid event"},"nonce":"n1"}`))
	require.NoError(t, err)
	e := ErrorOf(m)
	require.NotNil(t, e, "ErrorOf = %#v", e)
	require.EqualValues(t, 4004, e.Code, "ErrorOf = %#v", e)
	require.Equal(t, "SUBSCRIBE", e.Cmd, "ErrorOf = %#v", e)
	require.Contains(t, e.Error(), "SUBSCRIBE failed: 4004", "ErrorOf = %#v", e)
	m, _ = ParseMessage([]byte(`{"cmd":"DISPATCH","evt":"READY","data":{},"nonce":null}`))
	assert.Nil(t, ErrorOf(m), "READY: %#v", m)
	assert.Equal(t, "", m.Nonce, "READY: %#v", m)
}

func TestNewNonceIsUUIDv4(t *testing.T) {
	re := regexp.MustCompile(`^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$`)
	seen := map[string]bool{}
	for range 100 {
		n := NewNonce()
		require.True(t, re.MatchString(n), "nonce %q", n)
		require.False(t, seen[n], "nonce %q", n)
		seen[n] = true
	}
}

func TestPath(t *testing.T) {
	p := Path("d", "", 3)
	require.True(t, strings.HasSuffix(p, DefaultPrefix+"3"), "Path = %q", p)
	t.Setenv("XDG_RUNTIME_DIR", "")
	t.Setenv("TMPDIR", "")
	require.Contains(t, []string{"/tmp", ""}, DefaultDir(), "DefaultDir without variables")
	t.Setenv("TMPDIR", "tmpdir")
	t.Setenv("XDG_RUNTIME_DIR", "xdg")
	assert.Contains(t, []string{"xdg", ""}, DefaultDir(), "DefaultDir: XDG_RUNTIME_DIR first")
}
