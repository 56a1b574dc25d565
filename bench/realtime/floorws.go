package main

import (
	"bufio"
	"crypto/rand"
	"crypto/sha1"
	"encoding/base64"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
)

// The floor side of (b) (floor.go) speaks WebSocket with the least framing RFC 6455 allows for
// its traffic: unfragmented text frames, server frames unmasked, client frames masked. Frames are
// appended to a buffer so that a batch of them leaves in one write.

// wsGUID is the key suffix of RFC 6455's handshake.
const wsGUID = "258EAFA5-E914-47DA-95CA-C5AB0DC85B11"

// wsAcceptKey is the Sec-WebSocket-Accept value for a Sec-WebSocket-Key.
func wsAcceptKey(key string) string {
	h := sha1.Sum([]byte(key + wsGUID))
	return base64.StdEncoding.EncodeToString(h[:])
}

// WebSocket opcodes the floor uses.
const (
	wsText  = 0x1
	wsClose = 0x8
)

// appendFrame appends one final text frame carrying payload; a client's frame (masked) is masked
// with key.
func appendFrame(b, payload []byte, masked bool, key [4]byte) []byte {
	b = append(b, 0x80|wsText)
	var m byte
	if masked {
		m = 0x80
	}
	switch n := len(payload); {
	case n < 126:
		b = append(b, m|byte(n))
	case n <= 0xffff:
		b = append(b, m|126)
		b = binary.BigEndian.AppendUint16(b, uint16(n))
	default:
		b = append(b, m|127)
		b = binary.BigEndian.AppendUint64(b, uint64(n))
	}
	if !masked {
		return append(b, payload...)
	}
	b = append(b, key[:]...)
	start := len(b)
	b = append(b, payload...)
	for i := range payload {
		b[start+i] ^= key[i&3]
	}
	return b
}

// errWSClosed is readFrame's error for a close frame.
var errWSClosed = errors.New("websocket: closed by the peer")

// readFrame reads one frame from r and returns its payload, unmasked, in buf's storage (valid
// until the next call). It accepts only unfragmented text frames (what the floor sends) and
// reports a close frame as errWSClosed.
func readFrame(r *bufio.Reader, buf []byte) ([]byte, error) {
	var h [14]byte
	if _, err := io.ReadFull(r, h[:2]); err != nil {
		return buf, err
	}
	fin, op := h[0]&0x80 != 0, h[0]&0x0f
	masked, n := h[1]&0x80 != 0, uint64(h[1]&0x7f)
	switch n {
	case 126:
		if _, err := io.ReadFull(r, h[2:4]); err != nil {
			return buf, err
		}
		n = uint64(binary.BigEndian.Uint16(h[2:4]))
	case 127:
		if _, err := io.ReadFull(r, h[2:10]); err != nil {
			return buf, err
		}
		n = binary.BigEndian.Uint64(h[2:10])
	}
	if n > 1<<20 {
		return buf, fmt.Errorf("websocket: a frame of %d bytes", n)
	}
	var key [4]byte
	if masked {
		if _, err := io.ReadFull(r, key[:]); err != nil {
			return buf, err
		}
	}
	if cap(buf) < int(n) {
		buf = make([]byte, n)
	}
	buf = buf[:n]
	if _, err := io.ReadFull(r, buf); err != nil {
		return buf, err
	}
	if op == wsClose {
		return buf, errWSClosed
	}
	if !fin || op != wsText {
		return buf, fmt.Errorf("websocket: frame opcode %#x, final %v: not an unfragmented text frame", op, fin)
	}
	if masked {
		for i := range buf {
			buf[i] ^= key[i&3]
		}
	}
	return buf, nil
}

// wsUpgrade completes a WebSocket handshake on a server's request and returns the connection
// with its reader (which may already hold the client's first frames).
func wsUpgrade(w http.ResponseWriter, r *http.Request) (net.Conn, *bufio.Reader, error) {
	key := r.Header.Get("Sec-WebSocket-Key")
	if key == "" || !strings.EqualFold(r.Header.Get("Upgrade"), "websocket") {
		http.Error(w, "a WebSocket handshake is expected", http.StatusBadRequest)
		return nil, nil, errors.New("websocket: not a handshake")
	}
	hj, ok := w.(http.Hijacker)
	if !ok {
		return nil, nil, errors.New("websocket: the connection cannot be hijacked")
	}
	c, brw, err := hj.Hijack()
	if err != nil {
		return nil, nil, fmt.Errorf("websocket: hijack: %w", err)
	}
	if _, err := io.WriteString(c, "HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"+
		"Sec-WebSocket-Accept: "+wsAcceptKey(key)+"\r\n\r\n"); err != nil {
		c.Close()
		return nil, nil, fmt.Errorf("websocket: handshake answer: %w", err)
	}
	return c, brw.Reader, nil
}

// wsDial opens a WebSocket connection to ws://addr+path and returns it with its reader.
func wsDial(addr, path string) (net.Conn, *bufio.Reader, error) {
	c, err := net.Dial("tcp", addr)
	if err != nil {
		return nil, nil, err
	}
	var k [16]byte
	rand.Read(k[:])
	key := base64.StdEncoding.EncodeToString(k[:])
	req := "GET " + path + " HTTP/1.1\r\nHost: " + addr + "\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n" +
		"Sec-WebSocket-Key: " + key + "\r\nSec-WebSocket-Version: 13\r\n\r\n"
	if _, err := io.WriteString(c, req); err != nil {
		c.Close()
		return nil, nil, err
	}
	r := bufio.NewReaderSize(c, 64<<10)
	resp, err := http.ReadResponse(r, nil)
	if err != nil {
		c.Close()
		return nil, nil, fmt.Errorf("websocket: handshake: %w", err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusSwitchingProtocols || resp.Header.Get("Sec-WebSocket-Accept") != wsAcceptKey(key) {
		c.Close()
		return nil, nil, fmt.Errorf("websocket: handshake refused: %s", resp.Status)
	}
	return c, r, nil
}
