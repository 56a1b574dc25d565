package gateway

import (
	"bytes"
	"compress/zlib"

	"github.com/gobwas/ws"
)

// Compression modes of a connection's messages.
const (
	compressNone = iota
	// compressPayload (Identify's compress: true): each dispatch is a binary frame holding a
	// whole zlib stream of its own.
	compressPayload
	// compressStream (?compress=zlib-stream): every text message is a binary frame continuing
	// one zlib stream of the connection, each ending with a sync flush (00 00 ff ff), so that
	// the client inflates them with one context.
	compressStream
)

// compressor compresses a connection's messages; its owner (batchConn) guards it.
type compressor struct {
	mode   int
	out    bytes.Buffer
	stream *zlib.Writer // compressStream: the connection's one context
}

// newCompressor returns a compressor of mode.
func newCompressor(mode int) *compressor {
	c := &compressor{mode: mode}
	if mode == compressStream {
		c.stream = zlib.NewWriter(&c.out)
	}
	return c
}

// frame returns the frame to send for a text message p: p itself, or its compressed form as a
// binary frame. dispatch tells whether p is a dispatch (payload compression takes only those).
func (c *compressor) frame(p []byte, dispatch bool) (ws.OpCode, []byte, error) {
	switch {
	case c == nil || c.mode == compressNone || (c.mode == compressPayload && !dispatch):
		return ws.OpText, p, nil
	case c.mode == compressPayload:
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
