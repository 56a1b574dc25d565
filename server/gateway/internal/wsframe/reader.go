package wsframe

import (
	"bufio"
	"encoding/binary"
	"io"
	"time"
	"unicode/utf8"

	"github.com/gobwas/ws"

	gwire "sdkpp/wire/gateway"
)

// Close says how a connection ends: Code 0 means the peer is gone (no close frame is sent);
// End means its session ends too instead of waiting to be resumed.
type Close struct {
	Code   int
	Reason string
	End    bool
}

// Gone is the end of a connection whose peer is gone: no close frame.
var Gone = Close{}

// Reader reads a client's frames (RFC 6455, the server's side) from the buffered reader of the
// upgraded connection, with ws.ReadHeaderBuffer and ws.CheckHeader; it answers the client's
// control frames through the connection's Conn. One goroutine uses it.
type Reader struct {
	br  *bufio.Reader
	out *Conn
	// timeout bounds writing a pong or the answer to the client's close frame.
	timeout time.Duration

	hdr []byte                              // scratch for ws.ReadHeaderBuffer
	ctl [ws.MaxControlFramePayloadSize]byte // a control frame's payload
	// skip is what is left unread of the frame that ReadMessage refused, so that Drain finds
	// the next frame.
	skip int64
}

// NewReader returns a Reader of the client's frames from br that answers its control frames
// through out, each within timeout.
func NewReader(br *bufio.Reader, out *Conn, timeout time.Duration) *Reader {
	return &Reader{br: br, out: out, timeout: timeout, hdr: make([]byte, 0, ws.MaxHeaderSize-2)}
}

// Buffered reports how many bytes of the client's frames have arrived and are not read yet: a
// caller may then read on before it answers what it read.
func (r *Reader) Buffered() int { return r.br.Buffered() }

// MessageBuffered reports whether a whole message of the client has arrived and is not read yet
// (one unfragmented data frame, after any whole control frames): ReadMessage then returns it
// without waiting for the client. A caller that answers what it read once nothing more waits
// asks this rather than Buffered, which also counts the start of a frame still arriving.
func (r *Reader) MessageBuffered() bool {
	b, _ := r.br.Peek(r.br.Buffered()) // what has arrived: no read
	for {
		if len(b) < 2 {
			return false
		}
		n, size := int64(b[1]&0x7f), 2
		switch n {
		case 126:
			if len(b) < 4 {
				return false
			}
			n, size = int64(binary.BigEndian.Uint16(b[2:])), 4
		case 127:
			if len(b) < 10 {
				return false
			}
			n, size = int64(binary.BigEndian.Uint64(b[2:])), 10
		}
		if b[1]&0x80 != 0 {
			size += 4 // the mask
		}
		if n < 0 || n > int64(len(b)-size) {
			return false // still arriving
		}
		op, fin := ws.OpCode(b[0]&0x0f), b[0]&0x80 != 0
		if !op.IsControl() {
			return fin && op != ws.OpContinuation
		}
		b = b[size+int(n):]
	}
}

// ReadMessage reads frames until a whole text message (one frame, or a fragmented message's
// frames) has arrived, and returns its payload, unmasked. On the way it answers pings with pongs
// and ignores pongs. stopped reports that a message did not come, and stop how the connection
// ends:
//
//   - the connection failed (the peer is gone): code 0;
//   - the client's close frame: answered with a close frame that echoes its code (1002 when the
//     frame was malformed); code 0, and end when the code is 1000 or 1001;
//   - a frame that breaks RFC 6455 (unmasked, reserved bits or opcodes, a control frame that is
//     fragmented or longer than 125 bytes, a continuation out of place): 1002;
//   - a text message that is not UTF-8: 1007 (RFC 6455 8.1);
//   - a binary message, or a message longer than max bytes: gwire.CloseDecodeError, without
//     reading the rest of it.
func (r *Reader) ReadMessage(max int) (data []byte, stop Close, stopped bool) {
	state := ws.StateServerSide
	for {
		h, err := ws.ReadHeaderBuffer(r.br, r.hdr)
		if err != nil {
			return nil, Gone, true
		}
		if err := ws.CheckHeader(h, state); err != nil {
			r.skip = h.Length
			return nil, Close{Code: int(ws.StatusProtocolError), Reason: "protocol error"}, true
		}
		if h.OpCode.IsControl() {
			p := r.ctl[:h.Length] // CheckHeader allows at most 125 bytes
			if _, err := io.ReadFull(r.br, p); err != nil {
				return nil, Gone, true
			}
			ws.Cipher(p, h.Mask, 0)
			switch h.OpCode {
			case ws.OpPing:
				if r.out.WriteFrame(ws.OpPong, p, r.timeout) != nil {
					return nil, Gone, true
				}
			case ws.OpClose:
				return nil, r.answerClose(p), true
			}
			continue
		}
		if h.OpCode == ws.OpBinary {
			r.skip = h.Length
			return nil, Close{Code: gwire.CloseDecodeError, Reason: "binary payloads are not accepted"}, true
		}
		if h.Length > int64(max-len(data)) {
			r.skip = h.Length
			return nil, Close{Code: gwire.CloseDecodeError, Reason: "payload too large"}, true
		}
		start, n := len(data), int(h.Length)
		if data == nil && h.Fin {
			data = make([]byte, n) // the usual message: one frame, read into a buffer of its size
		} else {
			data = append(data, make([]byte, n)...)
		}
		if _, err := io.ReadFull(r.br, data[start:]); err != nil {
			return nil, Gone, true
		}
		ws.Cipher(data[start:], h.Mask, 0)
		if !h.Fin {
			state = state.Set(ws.StateFragmented)
			continue
		}
		if !utf8.Valid(data) {
			return nil, Close{Code: int(ws.StatusInvalidFramePayloadData), Reason: "invalid UTF-8"}, true
		}
		return data, Close{}, false
	}
}

// answerClose answers the client's close frame with payload p (unmasked) and says how the
// connection ends. When the server has sent its own close frame first, the client's is the
// answer, and nothing more is written.
func (r *Reader) answerClose(p []byte) Close {
	var reply []byte
	code, reason := ws.ParseCloseFrameData(p)
	switch {
	case len(p) == 0: // no status code (1005): answered without one
	case len(p) == 1 || ws.CheckCloseFrameData(code, reason) != nil:
		code, reply = 0, ws.NewCloseFrameBody(ws.StatusProtocolError, "")
	default:
		reply = p[:2]
	}
	_ = r.out.WriteFrame(ws.OpClose, reply, r.timeout) // ErrCloseSent: this frame answered the server's
	return Close{End: code == ws.StatusNormalClosure || code == ws.StatusGoingAway}
}

// Drain reads and drops the client's frames until its close frame (the answer to the server's)
// or the end of the connection, without keeping any payload. It starts after the frame
// ReadMessage refused; the caller bounds it (by cutting the connection).
func (r *Reader) Drain() {
	if _, err := io.CopyN(io.Discard, r.br, r.skip); err != nil {
		return
	}
	for {
		h, err := ws.ReadHeaderBuffer(r.br, r.hdr)
		if err != nil || h.OpCode == ws.OpClose {
			return
		}
		if _, err := io.CopyN(io.Discard, r.br, h.Length); err != nil {
			return
		}
	}
}
