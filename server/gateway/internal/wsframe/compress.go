package wsframe

import (
	"bytes"
	"compress/zlib"

	"github.com/gobwas/ws"
)

// Compression is how a connection's messages are compressed.
type Compression int

// Compression modes of a connection's messages.
const (
	// CompressNone sends every message as it is, a text frame.
	CompressNone Compression = iota
	// CompressPayload (Identify's compress: true): each dispatch is a binary frame holding a
	// whole zlib stream of its own.
	CompressPayload
	// CompressStream (?compress=zlib-stream): every text message is a binary frame continuing
	// one zlib stream of the connection, each ending with a sync flush (00 00 ff ff), so that
	// the client inflates them with one context.
	CompressStream
)

// compressor compresses a connection's messages; its owner (Conn) guards it.
type compressor struct {
	mode   Compression
	out    bytes.Buffer
	stream *zlib.Writer // CompressStream: the connection's one context
}

// newCompressor returns a compressor of mode.
func newCompressor(mode Compression) *compressor {
	c := &compressor{mode: mode}
	if mode == CompressStream {
		c.stream = zlib.NewWriter(&c.out)
	}
	return c
}

// frame returns the frame to send for a text message p: p itself, or its compressed form as a
// binary frame. dispatch tells whether p is a dispatch (payload compression takes only those).
func (c *compressor) frame(p []byte, dispatch bool) (ws.OpCode, []byte, error) {
	switch {
	case c == nil || c.mode == CompressNone || (c.mode == CompressPayload && !dispatch):
		return ws.OpText, p, nil
	case c.mode == CompressPayload:
		c.out.Reset()
		z := zlib.NewWriter(&c.out)
		if _, err := z.Write(p); err != nil {
			return 0, nil, err
		}
		if err := z.Close(); err != nil {
			return 0, nil, err
		}
	default:
		c.out.Reset()
		if _, err := c.stream.Write(p); err != nil {
			return 0, nil, err
		}
		if err := c.stream.Flush(); err != nil { // a sync flush: ends with 00 00 ff ff
			return 0, nil, err
		}
	}
	return ws.OpBinary, c.out.Bytes(), nil
}
