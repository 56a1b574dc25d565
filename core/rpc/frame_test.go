package rpc

import (
	"bytes"
	"encoding/binary"
	"errors"
	"io"
	"regexp"
	"strings"
	"testing"
	"time"
)

func TestFrameRoundTrip(t *testing.T) {
	var buf bytes.Buffer
	payload := []byte(`{"v":1,"client_id":"42"}`)
	if err := WriteFrame(&buf, OpHandshake, payload); err != nil {
		t.Fatal(err)
	}
	want := append([]byte{0, 0, 0, 0, byte(len(payload)), 0, 0, 0}, payload...)
	if !bytes.Equal(buf.Bytes(), want) {
		t.Fatalf("encoded % x, want % x", buf.Bytes(), want)
	}
	op, got, err := ReadFrame(&buf)
	if err != nil || op != OpHandshake || !bytes.Equal(got, payload) {
		t.Fatalf("ReadFrame = %v %q %v", op, got, err)
	}
	if _, _, err := ReadFrame(&buf); err != io.EOF {
		t.Fatalf("at the end: %v, want io.EOF", err)
	}
}

func TestFrameLimits(t *testing.T) {
	if err := WriteFrame(io.Discard, OpFrame, make([]byte, MaxPayload+1)); !errors.Is(err, ErrFrameTooLarge) {
		t.Fatalf("writing an oversize frame: %v", err)
	}
	if err := WriteFrame(io.Discard, OpFrame, make([]byte, MaxPayload)); err != nil {
		t.Fatalf("writing a frame of MaxPayload: %v", err)
	}
	big := binary.LittleEndian.AppendUint32(binary.LittleEndian.AppendUint32(nil, 1), 1<<31)
	if _, _, err := ReadFrame(bytes.NewReader(big)); !errors.Is(err, ErrFrameTooLarge) {
		t.Fatalf("reading a 2 GiB header: %v", err)
	}
	bad := AppendFrame(nil, 9, []byte("{}"))
	if _, _, err := ReadFrame(bytes.NewReader(bad)); !errors.Is(err, ErrBadOpcode) {
		t.Fatalf("reading opcode 9: %v", err)
	}
	short := AppendFrame(nil, OpFrame, []byte("{}"))[:9]
	if _, _, err := ReadFrame(bytes.NewReader(short)); err != io.ErrUnexpectedEOF {
		t.Fatalf("reading a truncated frame: %v", err)
	}
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
			if len(payload) > MaxPayload || op > OpPong {
				t.Fatalf("accepted opcode %d with %d bytes", op, len(payload))
			}
			again = AppendFrame(again, op, payload)
			if m, err := ParseMessage(payload); err == nil {
				if m.Cmd == "" {
					t.Fatal("parsed a message without cmd")
				}
				ErrorOf(m)
			}
		}
		if !bytes.HasPrefix(data, again) {
			t.Fatalf("re-encoding differs: % x is not a prefix of % x", again, data)
		}
	})
}

func TestParseMessage(t *testing.T) {
	for _, bad := range []string{``, `{`, `[]`, `"x"`, `{}`, `{"cmd":""}`, `{"cmd":1}`} {
		if _, err := ParseMessage([]byte(bad)); err == nil {
			t.Errorf("ParseMessage(%q) accepted", bad)
		}
	}
	m, err := ParseMessage([]byte(`{"cmd":"SUBSCRIBE","evt":"ERROR","data":{"code":4004,"message":"Invalid event"},"nonce":"n1"}`))
	if err != nil {
		t.Fatal(err)
	}
	e := ErrorOf(m)
	if e == nil || e.Code != 4004 || e.Cmd != "SUBSCRIBE" || !strings.Contains(e.Error(), "SUBSCRIBE failed: 4004") {
		t.Fatalf("ErrorOf = %#v", e)
	}
	m, _ = ParseMessage([]byte(`{"cmd":"DISPATCH","evt":"READY","data":{},"nonce":null}`))
	if ErrorOf(m) != nil || m.Nonce != "" {
		t.Fatalf("READY: %#v", m)
	}
}

func TestNewNonceIsUUIDv4(t *testing.T) {
	re := regexp.MustCompile(`^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$`)
	seen := map[string]bool{}
	for range 100 {
		n := NewNonce()
		if !re.MatchString(n) || seen[n] {
			t.Fatalf("nonce %q", n)
		}
		seen[n] = true
	}
}

func TestBackoffDelay(t *testing.T) {
	b := Backoff{Initial: 100 * time.Millisecond, Max: time.Second, Jitter: 0.5}
	want := []time.Duration{100, 200, 400, 800, 1000, 1000}
	for i, w := range want {
		if got := b.Delay(i, 0); got != w*time.Millisecond {
			t.Errorf("Delay(%d, 0) = %v, want %v", i, got, w*time.Millisecond)
		}
	}
	if got := b.Delay(2, 0.999999); got <= 200*time.Millisecond || got > 201*time.Millisecond {
		t.Errorf("Delay(2, ~1) = %v, want about half of 400ms", got)
	}
	if got := b.Delay(1000, 0); got != time.Second {
		t.Errorf("Delay(1000, 0) = %v, want the cap", got)
	}
}

func TestPath(t *testing.T) {
	p := Path("d", "", 3)
	if !strings.HasSuffix(p, DefaultPrefix+"3") {
		t.Fatalf("Path = %q", p)
	}
	t.Setenv("XDG_RUNTIME_DIR", "")
	t.Setenv("TMPDIR", "")
	if DefaultDir() != "/tmp" && DefaultDir() != "" {
		t.Fatalf("DefaultDir without variables = %q", DefaultDir())
	}
	t.Setenv("TMPDIR", "tmpdir")
	t.Setenv("XDG_RUNTIME_DIR", "xdg")
	if d := DefaultDir(); d != "xdg" && d != "" {
		t.Fatalf("DefaultDir = %q, want XDG_RUNTIME_DIR first", d)
	}
}
