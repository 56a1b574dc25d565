package gateway

import (
	"bufio"
	"context"
	crand "crypto/rand"
	"crypto/sha1"
	"encoding/base64"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"net/http"
	"net/url"
	"sync"
	"time"

	"github.com/gobwas/ws"
	"golang.org/x/net/http/httpguts"
)

// wsConn is the client's side of a WebSocket connection (RFC 6455): the opening handshake is an
// HTTP request made with the client's HTTP client (its transport, proxy and TLS settings), and
// the upgraded connection's frames are read and written with github.com/gobwas/ws's frame
// functions (ws.ReadHeaderBuffer, ws.CheckHeader, ws.WriteHeaderBuffer, ws.Cipher).
//
// It replaces a general-purpose WebSocket library whose read path cost a lobby member's client,
// per message, a lock taken with a select three times, context checks around each frame's header
// and payload and a wrapped reader: about half a microsecond of the two or three a client spends
// on a lobby message. ReadMessage reads a message's frames straight from a buffered reader into
// the caller's buffer.
//
// One goroutine reads (ReadMessage); any goroutine writes, one frame at a time. It answers pings
// with pongs and the service's close frame with its own, and closes the connection on a protocol
// error (1002) or a message over the read limit (1009). It negotiates no extension and no
// subprotocol.
type wsConn struct {
	rwc   io.ReadWriteCloser // the upgraded connection
	br    *bufio.Reader      // over rwc (through drainedReader); the reader's
	limit int64              // a message's most bytes
	// drained, when set, runs on the reader's goroutine before each read from rwc, which may
	// wait: what was read before has been handed over. Set it before the first ReadMessage.
	drained func()

	hdr []byte                              // ws.ReadHeaderBuffer's scratch; the reader's
	ctl [ws.MaxControlFramePayloadSize]byte // a control frame's payload; the reader's

	wmu       sync.Mutex
	wbuf      appender               // the frame being written; guarded by wmu
	whdr      [ws.MaxHeaderSize]byte // its header's scratch; guarded by wmu
	closeSent bool                   // a close frame went out: no other frame follows; guarded by wmu
	// settle, when set, returns once what the connection's writes handed to it is written: a
	// close frame must be out before the connection is closed (holdConn.Settle).
	settle func() error

	closeOnce sync.Once
	closed    chan struct{} // closed by CloseNow
}

// closeTimeout bounds the closing handshake: how long Close waits for the service's answer.
const closeTimeout = 5 * time.Second

// readBufferSize is the reader's buffer: several lobby messages, which under fan-out arrive
// together, per system call. A client that falls behind a busy lobby finds more than 8 KiB
// waiting: with 8 KiB, the realtime bench's 10 members and sender made 1.1 reads per message
// (about ten frames a read, the buffer full), with 32 KiB 0.5, and the sender, whose requests
// the reader writes when it reads on (holdConn), 0.2 writes per message instead of 0.3.
const readBufferSize = 32 << 10

// maxWriteBuffer is the largest frame buffer a connection keeps between writes.
const maxWriteBuffer = 64 << 10

// errMessageTooBig is a message over the read limit.
var errMessageTooBig = errors.New("message too big")

// dialWS opens a WebSocket connection to rawURL (ws, wss, http or https) with hc's transport;
// limit is a message's most bytes.
func dialWS(ctx context.Context, rawURL string, hc *http.Client, limit int64) (*wsConn, error) {
	u, err := url.Parse(rawURL)
	if err != nil {
		return nil, fmt.Errorf("gateway: bad URL: %w", err)
	}
	switch u.Scheme {
	case "ws":
		u.Scheme = "http"
	case "wss":
		u.Scheme = "https"
	case "http", "https":
	default:
		return nil, fmt.Errorf("gateway: unexpected URL scheme %q", u.Scheme)
	}
	hc = handshakeClient(hc)
	if hc.Timeout > 0 {
		// The client's timeout bounds the handshake; on the client itself it would also end the
		// upgraded connection, its response's body.
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, hc.Timeout)
		defer cancel()
		hc.Timeout = 0
	}
	var nonce [16]byte
	if _, err := crand.Read(nonce[:]); err != nil {
		return nil, fmt.Errorf("gateway: no random key for the handshake: %w", err)
	}
	key := base64.StdEncoding.EncodeToString(nonce[:])
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u.String(), nil)
	if err != nil {
		return nil, fmt.Errorf("gateway: bad handshake request: %w", err)
	}
	req.Header.Set("Connection", "Upgrade")
	req.Header.Set("Upgrade", "websocket")
	req.Header.Set("Sec-WebSocket-Version", "13")
	req.Header.Set("Sec-WebSocket-Key", key)
	resp, err := hc.Do(req)
	if err != nil {
		return nil, fmt.Errorf("gateway: WebSocket handshake failed: %w", err)
	}
	if err := checkUpgrade(resp, key); err != nil {
		resp.Body.Close()
		return nil, fmt.Errorf("gateway: WebSocket handshake failed: %w", err)
	}
	rwc, ok := resp.Body.(io.ReadWriteCloser)
	if !ok {
		resp.Body.Close()
		return nil, fmt.Errorf("gateway: WebSocket handshake failed: the upgraded connection is a %T", resp.Body)
	}
	return newWSConn(rwc, limit), nil
}

// newWSConn returns the client's side of the WebSocket connection rwc, upgraded already.
func newWSConn(rwc io.ReadWriteCloser, limit int64) *wsConn {
	c := &wsConn{rwc: rwc, limit: limit, hdr: make([]byte, 0, ws.MaxHeaderSize-2), closed: make(chan struct{})}
	c.br = bufio.NewReaderSize(drainedReader{c}, readBufferSize)
	return c
}

// drainedReader reads c's connection for its buffered reader, calling c.drained first.
type drainedReader struct{ c *wsConn }

func (r drainedReader) Read(p []byte) (int, error) {
	if r.c.drained != nil {
		r.c.drained()
	}
	return r.c.rwc.Read(p)
}

// handshakeClient is a copy of hc (nil: the default client) that follows redirects of the
// handshake's ws and wss URLs as http and https.
func handshakeClient(hc *http.Client) *http.Client {
	if hc == nil {
		hc = http.DefaultClient
	}
	c := *hc
	check := hc.CheckRedirect
	c.CheckRedirect = func(req *http.Request, via []*http.Request) error {
		switch req.URL.Scheme {
		case "ws":
			req.URL.Scheme = "http"
		case "wss":
			req.URL.Scheme = "https"
		}
		if check != nil {
			return check(req, via)
		}
		if len(via) >= 10 {
			return errors.New("stopped after 10 redirects")
		}
		return nil
	}
	return &c
}

// checkUpgrade checks the handshake's answer: 101, the upgrade to websocket, the accept key of
// key, and no extension or subprotocol (none was offered).
func checkUpgrade(resp *http.Response, key string) error {
	if resp.StatusCode != http.StatusSwitchingProtocols {
		return fmt.Errorf("expected HTTP status 101, got %d", resp.StatusCode)
	}
	if !httpguts.HeaderValuesContainsToken(resp.Header.Values("Connection"), "upgrade") {
		return fmt.Errorf("the Connection header %q does not upgrade", resp.Header.Get("Connection"))
	}
	if !httpguts.HeaderValuesContainsToken(resp.Header.Values("Upgrade"), "websocket") {
		return fmt.Errorf("the Upgrade header %q is not websocket", resp.Header.Get("Upgrade"))
	}
	sum := sha1.Sum([]byte(key + "258EAFA5-E914-47DA-95CA-C5AB0DC85B11"))
	if got := resp.Header.Get("Sec-WebSocket-Accept"); got != base64.StdEncoding.EncodeToString(sum[:]) {
		return fmt.Errorf("invalid Sec-WebSocket-Accept %q", got)
	}
	if ext := resp.Header.Get("Sec-WebSocket-Extensions"); ext != "" {
		return fmt.Errorf("unexpected extensions %q", ext)
	}
	if p := resp.Header.Get("Sec-WebSocket-Protocol"); p != "" {
		return fmt.Errorf("unexpected subprotocol %q", p)
	}
	return nil
}

// ReadMessage reads the next data message (text or binary, whole: one frame or a fragmented
// message's frames) and returns it, valid until the next ReadMessage: in place, in the reader's
// own buffer, when it is one frame that the buffer holds whole already (inBuf false), else
// copied into buf's storage, grown as needed (inBuf true: the caller may keep msg's storage to
// pass as buf again). On the way it answers pings and ignores pongs. The service's close frame
// is answered and becomes a *CloseError (1005 when it has no code). A frame that breaks RFC 6455
// closes the connection with 1002, a message longer than the read limit with 1009; either is an
// error. Only one goroutine reads.
func (c *wsConn) ReadMessage(buf []byte) (msg []byte, inBuf bool, err error) {
	if p, ok := c.buffered(); ok {
		return p, false, nil
	}
	buf, err = c.readMessage(buf)
	return buf, true, err
}

// buffered is ReadMessage's path for the frames that arrive together (under fan-out, most of
// them): when the reader's buffer holds the next frame whole and it is a lone final text or
// binary frame, unmasked, with a 7- or 16-bit length within the read limit, it returns the
// frame's payload where it is and consumes the frame. It neither reads from the connection nor
// fails: anything else (a frame not buffered whole, a control frame, a fragment, any frame
// CheckHeader might refuse) is left unread, for readMessage, which reads it as it always has.
// Such a frame is one CheckHeader accepts in a client's unfragmented state (FIN, no RSV bit,
// a data opcode, no mask), so that no check is skipped.
func (c *wsConn) buffered() ([]byte, bool) {
	avail := c.br.Buffered()
	if avail < 2 {
		return nil, false
	}
	h, _ := c.br.Peek(2) // buffered already: no read, no error
	if (h[0] != 0x80|byte(ws.OpText) && h[0] != 0x80|byte(ws.OpBinary)) || h[1]&0x80 != 0 {
		return nil, false
	}
	n, hl := int(h[1]), 2
	switch n {
	case 126:
		if avail < 4 {
			return nil, false
		}
		h, _ = c.br.Peek(4)
		n, hl = int(binary.BigEndian.Uint16(h[2:4])), 4
	case 127:
		return nil, false
	}
	if int64(n) > c.limit || avail < hl+n {
		return nil, false
	}
	f, _ := c.br.Peek(hl + n)
	_, _ = c.br.Discard(hl + n) // what Peek returned stays valid until the next read
	// Capped at the payload's end: an append to it must not write over the frames after it.
	return f[hl : hl+n : hl+n], true
}

// readMessage is ReadMessage for every message, into buf's storage.
func (c *wsConn) readMessage(buf []byte) ([]byte, error) {
	buf = buf[:0]
	state := ws.StateClientSide
	for {
		h, err := ws.ReadHeaderBuffer(c.br, c.hdr)
		if err != nil {
			return nil, c.readError("failed to read a frame header", err)
		}
		if err := ws.CheckHeader(h, state); err != nil {
			c.fail(ws.StatusProtocolError, err.Error())
			return nil, fmt.Errorf("gateway: WebSocket protocol error: %w", err)
		}
		if h.OpCode.IsControl() {
			p := c.ctl[:h.Length] // CheckHeader allows at most 125 bytes
			if _, err := io.ReadFull(c.br, p); err != nil {
				return nil, c.readError("failed to read a control frame", err)
			}
			switch h.OpCode {
			case ws.OpPing:
				if err := c.writeFrame(ws.OpPong, p); err != nil && !errors.Is(err, errCloseSent) {
					return nil, fmt.Errorf("gateway: failed to answer a ping: %w", err)
				}
			case ws.OpClose:
				return nil, c.peerClosed(p)
			}
			continue
		}
		if h.Length > c.limit-int64(len(buf)) {
			reason := fmt.Sprintf("read limited at %d bytes", c.limit)
			c.fail(ws.StatusMessageTooBig, reason)
			return nil, fmt.Errorf("gateway: %s: %w", reason, errMessageTooBig)
		}
		start, n := len(buf), int(h.Length)
		if cap(buf)-start < n {
			grown := make([]byte, start, start+n+start/2)
			copy(grown, buf)
			buf = grown
		}
		buf = buf[:start+n]
		if _, err := io.ReadFull(c.br, buf[start:]); err != nil {
			return nil, c.readError("failed to read a frame's payload", err)
		}
		if !h.Fin {
			state = state.Set(ws.StateFragmented)
			continue
		}
		return buf, nil
	}
}

// readError is err, a failed read, or net.ErrClosed when the connection was closed meanwhile.
func (c *wsConn) readError(what string, err error) error {
	select {
	case <-c.closed:
		return fmt.Errorf("gateway: %s: %w", what, net.ErrClosed)
	default:
	}
	return fmt.Errorf("gateway: %s: %w", what, err)
}

// peerClosed answers the service's close frame with payload p, unless the client's own close
// frame went out first, closes the connection and returns the close as a *CloseError.
func (c *wsConn) peerClosed(p []byte) error {
	code, reason := ws.ParseCloseFrameData(p)
	switch {
	case len(p) == 0:
		code = ws.StatusNoStatusRcvd
		_ = c.writeFrame(ws.OpClose, nil)
	case len(p) == 1 || ws.CheckCloseFrameData(code, reason) != nil:
		c.fail(ws.StatusProtocolError, "invalid close frame")
		return fmt.Errorf("gateway: WebSocket protocol error: invalid close frame %q", p)
	default:
		_ = c.writeFrame(ws.OpClose, p) // echoes the code and reason
	}
	c.CloseNow()
	return &CloseError{Code: int(code), Reason: reason}
}

// fail closes the connection with code and reason, without waiting for an answer: what the
// service sent cannot be read on.
func (c *wsConn) fail(code ws.StatusCode, reason string) {
	_ = c.writeFrame(ws.OpClose, ws.NewCloseFrameBody(code, reason))
	c.CloseNow()
}

// WriteText writes p as one text message.
func (c *wsConn) WriteText(p []byte) error { return c.writeFrame(ws.OpText, p) }

// WriteTextParts writes head, p and tail, in this order, as one text message: a payload's
// envelope goes into the frame around its data without being put together first.
func (c *wsConn) WriteTextParts(head, p, tail []byte) error {
	return c.writeFrameParts(ws.OpText, head, p, tail)
}

// errCloseSent is a frame written after the close frame.
var errCloseSent = errors.New("gateway: the connection is closing")

// writeFrame writes one frame, masked, with one write on the connection; a failed write closes
// the connection (a frame written in part would corrupt the stream).
func (c *wsConn) writeFrame(op ws.OpCode, p []byte) error { return c.writeFrameParts(op, nil, p, nil) }

// writeFrameParts is writeFrame with the payload head, p and tail, copied once, into the frame.
func (c *wsConn) writeFrameParts(op ws.OpCode, head, p, tail []byte) error {
	c.wmu.Lock()
	defer c.wmu.Unlock()
	if c.closeSent {
		return errCloseSent
	}
	if op == ws.OpClose {
		c.closeSent = true
	}
	var mask [4]byte
	binary.LittleEndian.PutUint32(mask[:], rand.Uint32())
	n := len(head) + len(p) + len(tail)
	h := ws.Header{Fin: true, OpCode: op, Masked: true, Mask: mask, Length: int64(n)}
	w := &c.wbuf
	if cap(w.b) < ws.MaxHeaderSize+n {
		w.b = make([]byte, 0, ws.MaxHeaderSize+n)
	}
	w.b = w.b[:0]
	if err := ws.WriteHeaderBuffer(w, h, c.whdr[:]); err != nil {
		return fmt.Errorf("gateway: failed to write a frame: %w", err)
	}
	start := len(w.b)
	w.b = append(append(append(w.b, head...), p...), tail...)
	ws.Cipher(w.b[start:], mask, 0)
	_, err := c.rwc.Write(w.b)
	if err == nil && op == ws.OpClose && c.settle != nil {
		err = c.settle()
	}
	if cap(w.b) > maxWriteBuffer {
		w.b = nil
	}
	if err != nil {
		c.CloseNow()
		return fmt.Errorf("gateway: failed to write a frame: %w", err)
	}
	return nil
}

// appender is an io.Writer that appends to b.
type appender struct{ b []byte }

func (a *appender) Write(p []byte) (int, error) {
	a.b = append(a.b, p...)
	return len(p), nil
}

// Close starts the closing handshake with code and reason, then waits until the connection is
// closed (by its reader, which reads the service's answer, or CloseNow), at most closeTimeout,
// and closes it. The reader must be reading, on another goroutine, for the answer to be read.
func (c *wsConn) Close(code ws.StatusCode, reason string) error {
	err := c.writeFrame(ws.OpClose, ws.NewCloseFrameBody(code, reason))
	if err == nil {
		t := time.NewTimer(closeTimeout)
		select {
		case <-c.closed:
		case <-t.C:
		}
		t.Stop()
	}
	c.CloseNow()
	if errors.Is(err, errCloseSent) {
		return nil
	}
	return err
}

// CloseFromReader is Close for the connection's reader: it reads the service's answer itself,
// dropping the messages that arrive before it.
func (c *wsConn) CloseFromReader(code ws.StatusCode, reason string) error {
	err := c.writeFrame(ws.OpClose, ws.NewCloseFrameBody(code, reason))
	if err == nil {
		t := time.AfterFunc(closeTimeout, c.CloseNow)
		for {
			if _, _, err := c.ReadMessage(nil); err != nil {
				break // the answer (a *CloseError), or the end of the connection
			}
		}
		t.Stop()
	}
	c.CloseNow()
	if errors.Is(err, errCloseSent) {
		return nil
	}
	return err
}

// CloseNow closes the connection without a closing handshake; a read or write in progress
// fails. It can be called more than once.
func (c *wsConn) CloseNow() {
	c.closeOnce.Do(func() {
		close(c.closed)
		c.rwc.Close()
	})
}
