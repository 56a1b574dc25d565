package rpc

import (
	"encoding/json"
	"fmt"
	"io"
	"sync"
	"time"
)

// conn is one IPC connection: its writer lock, the commands awaiting replies, and the
// subscriptions sent on it.
type conn struct {
	rwc          io.ReadWriteCloser
	writeTimeout time.Duration
	ready        chan Ready    // the first READY, from the reader
	done         chan struct{} // closed when the reader has exited; err is set by then

	wmu sync.Mutex

	mu      sync.Mutex
	pending map[string]chan *Message // by nonce; nil once done
	err     error
	once    sync.Once

	subscribed map[string]bool // subscription keys sent (or being sent) here; guarded by Client.mu
}

func newConn(rwc io.ReadWriteCloser, writeTimeout time.Duration) *conn {
	return &conn{
		rwc:          rwc,
		writeTimeout: writeTimeout,
		ready:        make(chan Ready, 1),
		done:         make(chan struct{}),
		pending:      map[string]chan *Message{},
		subscribed:   map[string]bool{},
	}
}

// send encodes m and writes it as one frame.
func (cn *conn) send(op Opcode, m any) error {
	b, err := json.Marshal(m)
	if err != nil {
		return err
	}
	return cn.sendRaw(op, b)
}

// sendRaw writes one frame, within the write timeout where the connection has deadlines.
func (cn *conn) sendRaw(op Opcode, payload []byte) error {
	cn.wmu.Lock()
	defer cn.wmu.Unlock()
	if d, ok := cn.rwc.(interface{ SetWriteDeadline(time.Time) error }); ok {
		d.SetWriteDeadline(time.Now().Add(cn.writeTimeout))
	}
	return WriteFrame(cn.rwc, op, payload)
}

// close ends the connection for reason err (the first reason given is kept). The reader then
// exits and finish fails the commands in flight.
func (cn *conn) close(err error) {
	cn.once.Do(func() {
		cn.mu.Lock()
		cn.err = err
		cn.mu.Unlock()
		cn.rwc.Close()
	})
}

// finish is the reader's last act.
func (cn *conn) finish() {
	cn.close(fmt.Errorf("reader stopped"))
	cn.mu.Lock()
	cn.pending = nil
	cn.mu.Unlock()
	close(cn.done)
}

// lost is the error of a command the connection's end interrupted.
func (cn *conn) lost() error {
	cn.mu.Lock()
	defer cn.mu.Unlock()
	if cn.err == ErrClosed {
		return fmt.Errorf("%w: %w", ErrDisconnected, ErrClosed)
	}
	return fmt.Errorf("%w: %v", ErrDisconnected, cn.err)
}

// await registers ch for the reply to nonce; false if the connection has ended.
func (cn *conn) await(nonce string, ch chan *Message) bool {
	cn.mu.Lock()
	defer cn.mu.Unlock()
	if cn.pending == nil || cn.err != nil {
		return false
	}
	cn.pending[nonce] = ch
	return true
}

func (cn *conn) forget(nonce string) {
	cn.mu.Lock()
	defer cn.mu.Unlock()
	delete(cn.pending, nonce)
}

// deliver hands a reply to the command awaiting its nonce; false if none does.
func (cn *conn) deliver(m *Message) bool {
	cn.mu.Lock()
	ch, ok := cn.pending[m.Nonce]
	delete(cn.pending, m.Nonce)
	cn.mu.Unlock()
	if ok {
		ch <- m
	}
	return ok
}
