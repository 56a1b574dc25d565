package rpc

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
)

// Opcode is the first field of a frame.
type Opcode uint32

// The opcodes of the desktop RPC over IPC.
const (
	OpHandshake Opcode = 0 // client to peer, first frame: {"v":1,"client_id":"..."}
	OpFrame     Opcode = 1 // a command, a reply or an event
	OpClose     Opcode = 2 // either side hangs up: {"code":N,"message":"..."}
	OpPing      Opcode = 3 // answered by OpPong with the same payload
	OpPong      Opcode = 4
)

func (op Opcode) String() string {
	switch op {
	case OpHandshake:
		return "HANDSHAKE"
	case OpFrame:
		return "FRAME"
	case OpClose:
		return "CLOSE"
	case OpPing:
		return "PING"
	case OpPong:
		return "PONG"
	}
	return fmt.Sprintf("opcode(%d)", uint32(op))
}

// HeaderSize is the size of a frame header: opcode then payload length, each a little-endian
// uint32.
const HeaderSize = 8

// MaxPayload is the largest payload either side accepts: 64 KiB. The messages of this protocol
// are far smaller; a larger length is taken for a corrupt or hostile stream, and the connection
// is dropped (and, on the client, re-established).
const MaxPayload = 64 << 10

// Errors of ReadFrame and WriteFrame.
var (
	ErrFrameTooLarge = errors.New("rpc: frame payload larger than 64 KiB")
	ErrBadOpcode     = errors.New("rpc: unknown opcode")
)

// ReadFrame reads one frame. It never allocates more than MaxPayload bytes: a header announcing a
// larger payload returns ErrFrameTooLarge without reading it, and an unknown opcode ErrBadOpcode;
// either leaves the stream unusable. A stream that ends inside a frame returns
// io.ErrUnexpectedEOF; one that ends between frames, io.EOF.
func ReadFrame(r io.Reader) (Opcode, []byte, error) {
	var h [HeaderSize]byte
	if _, err := io.ReadFull(r, h[:]); err != nil {
		return 0, nil, err
	}
	op := Opcode(binary.LittleEndian.Uint32(h[0:4]))
	n := binary.LittleEndian.Uint32(h[4:8])
	if op > OpPong {
		return op, nil, fmt.Errorf("%w %d", ErrBadOpcode, uint32(op))
	}
	if n > MaxPayload {
		return op, nil, fmt.Errorf("%w (%d bytes)", ErrFrameTooLarge, n)
	}
	payload := make([]byte, n)
	if _, err := io.ReadFull(r, payload); err != nil {
		if err == io.EOF {
			err = io.ErrUnexpectedEOF
		}
		return op, nil, err
	}
	return op, payload, nil
}

// AppendFrame appends the encoding of one frame to b, without checking the payload's size.
func AppendFrame(b []byte, op Opcode, payload []byte) []byte {
	b = binary.LittleEndian.AppendUint32(b, uint32(op))
	b = binary.LittleEndian.AppendUint32(b, uint32(len(payload)))
	return append(b, payload...)
}

// WriteFrame writes one frame with a single Write. A payload larger than MaxPayload returns
// ErrFrameTooLarge and writes nothing.
func WriteFrame(w io.Writer, op Opcode, payload []byte) error {
	if len(payload) > MaxPayload {
		return fmt.Errorf("%w (%d bytes)", ErrFrameTooLarge, len(payload))
	}
	_, err := w.Write(AppendFrame(make([]byte, 0, HeaderSize+len(payload)), op, payload))
	return err
}
