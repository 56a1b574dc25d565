package gateway

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"sdkpp/core/internal/testwait"
	"sdkpp/core/tunnel"

	"github.com/coder/websocket"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// scriptedConn is a net.Conn whose writes are recorded, one entry per system call, and wait
// for the test to release them when gated.
type scriptedConn struct {
	net.Conn // nil: only the methods below are used

	mu        sync.Mutex
	writes    []string
	deadlines []time.Time
	closed    bool

	gated   bool
	entered chan struct{} // a value when a gated write starts
	release chan error    // the gated write's result
	fail    error         // every write's result when not gated

	incoming chan string // what each Read returns, in turn
}

func newScriptedConn(gated bool) *scriptedConn {
	return &scriptedConn{gated: gated, entered: make(chan struct{}, 1), release: make(chan error), incoming: make(chan string)}
}

// Read returns the next string sent to incoming, waiting for it as a socket would.
func (s *scriptedConn) Read(p []byte) (int, error) {
	in, ok := <-s.incoming
	if !ok {
		return 0, io.EOF
	}
	return copy(p, in), nil
}

func (s *scriptedConn) Write(p []byte) (int, error) {
	s.mu.Lock()
	s.writes = append(s.writes, string(p))
	gated, fail := s.gated, s.fail
	s.mu.Unlock()
	if gated {
		s.entered <- struct{}{}
		fail = <-s.release
	}
	if fail != nil {
		return 0, fail
	}
	return len(p), nil
}

func (s *scriptedConn) SetWriteDeadline(t time.Time) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.deadlines = append(s.deadlines, t)
	return nil
}

func (s *scriptedConn) Close() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.closed = true
	return nil
}

func (s *scriptedConn) recorded() ([]string, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.writes...), s.closed
}

// busy starts heldWrite(c, frame) on another goroutine and returns once its system call is in
// progress on s (gated), with where its result will come.
func busy(c *holdConn, s *scriptedConn, frame string) <-chan error {
	done := make(chan error, 1)
	go func() { done <- heldWrite(c, frame) }()
	<-s.entered
	return done
}

// The tunnel's requests sent while others wait go out with SendRawLater.
var _ tunnel.LaterSender = (*Client)(nil)

// heldWrite is writeRaw's use of a holdConn: the frame is kept under hold, then flushed.
func heldWrite(c *holdConn, frame string) error { return heldWriteWith(c, frame, false) }

// laterWrite is heldWrite with FlushLater, as SendRawLater writes.
func laterWrite(c *holdConn, frame string) error { return heldWriteWith(c, frame, true) }

func heldWriteWith(c *holdConn, frame string, later bool) error {
	c.Hold(true)
	_, err := c.Write([]byte(frame))
	c.Hold(false)
	if err != nil {
		return err
	}
	if later {
		return c.FlushLater()
	}
	return c.Flush()
}

// A held write is kept until Flush, so that the system call happens outside the library's lock;
// a lone write then goes out at once in its own call, on the writing goroutine, with a write
// deadline, which moves only when less than half the timeout is left of it.
func TestHoldConnLoneWriteGoesOutAtOnce(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := newScriptedConn(false)
		c := newHoldConn(s, 10*time.Second)
		c.Hold(true)
		_, err := c.Write([]byte("a"))
		require.NoError(t, err)
		c.Hold(false)
		writes, _ := s.recorded()
		assert.Empty(t, writes, "kept while held")
		require.NoError(t, c.Flush())
		writes, _ = s.recorded()
		assert.Equal(t, []string{"a"}, writes)
		require.NoError(t, heldWrite(c, "b"))
		n, err := c.Write([]byte("c")) // not held: the library's own frame
		require.NoError(t, err)
		assert.Equal(t, 1, n)
		writes, _ = s.recorded()
		assert.Equal(t, []string{"a", "b", "c"}, writes)
		start := time.Now()
		time.Sleep(4 * time.Second)
		require.NoError(t, heldWrite(c, "d")) // 6 s of the deadline left: it stays
		time.Sleep(2 * time.Second)
		require.NoError(t, heldWrite(c, "e")) // 4 s left, under half the timeout: it moves
		s.mu.Lock()
		defer s.mu.Unlock()
		assert.Equal(t, []time.Time{start.Add(10 * time.Second), start.Add(16 * time.Second)}, s.deadlines,
			"set by the first write, then moved once less than half the timeout was left")
	})
}

// Frames written while another goroutine's system call is in progress return at once and go out
// together, in order, in the next call of that goroutine, which returns only after it.
func TestHoldConnWritesWhileBusyShareOneCall(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := newScriptedConn(true)
		c := newHoldConn(s, 0)
		first := busy(c, s, "1")
		for _, f := range []string{"2", "3", "4"} {
			require.NoError(t, heldWrite(c, f), "a write while busy returns at once")
		}
		_, err := c.Write([]byte("5")) // the library's own frame, not held, joins them too
		require.NoError(t, err)
		synctest.Wait()
		select {
		case <-first:
			t.Fatal("the writing goroutine returned with frames still kept")
		default:
		}
		s.release <- nil
		<-s.entered // its second round: everything kept meanwhile
		s.release <- nil
		require.NoError(t, <-first)
		writes, _ := s.recorded()
		assert.Equal(t, []string{"1", "2345"}, writes)
	})
}

// While the reader is between reads (it read bytes and dispatches them), writes flushed with
// FlushLater are kept and return at once, and the reader writes them in one system call when it
// reads again, before it waits for the socket; while it waits in the socket, they go out at once
// on their writers, and so do writes flushed with Flush whenever they are made.
func TestHoldConnReaderWritesWhatWasLeftToIt(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := newScriptedConn(false)
		c := newHoldConn(s, 0)
		require.NoError(t, laterWrite(c, "hello"), "no read yet: at once")
		buf := make([]byte, 16)
		read := make(chan string)
		reader := func() {
			n, err := c.Read(buf)
			if err != nil {
				read <- err.Error()
				return
			}
			read <- string(buf[:n])
		}
		go reader()
		synctest.Wait() // the reader waits in the socket
		require.NoError(t, laterWrite(c, "lone"))
		writes, _ := s.recorded()
		assert.Equal(t, []string{"hello", "lone"}, writes, "a write while the reader waits goes out at once")

		s.incoming <- "answers"
		assert.Equal(t, "answers", <-read)
		for _, f := range []string{"1", "2", "3"} {
			require.NoError(t, laterWrite(c, f), "a write between reads returns at once")
		}
		writes, _ = s.recorded()
		assert.Equal(t, []string{"hello", "lone"}, writes, "kept for the reader")

		go reader()
		synctest.Wait()
		writes, _ = s.recorded()
		assert.Equal(t, []string{"hello", "lone", "123"}, writes, "written by the reader before it waits, in one call")
		require.NoError(t, laterWrite(c, "4"))
		writes, _ = s.recorded()
		assert.Equal(t, []string{"hello", "lone", "123", "4"}, writes)
		close(s.incoming)
		assert.Equal(t, io.EOF.Error(), <-read)
	})
}

// Between the reader's reads, a write flushed with Flush, or the library's own (a pong), goes
// out at once, with whatever FlushLater left to the reader before it.
func TestHoldConnFlushDoesNotWaitForTheReader(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s, c := betweenReads(t)
		require.NoError(t, laterWrite(c, "a"))
		require.NoError(t, heldWrite(c, "b"))
		_, err := c.Write([]byte("c"))
		require.NoError(t, err)
		writes, _ := s.recorded()
		assert.Equal(t, []string{"ab", "c"}, writes)
	})
}

// betweenReads returns a holdConn over a scriptedConn whose reader has read bytes and not yet
// asked for more.
func betweenReads(t *testing.T) (*scriptedConn, *holdConn) {
	s := newScriptedConn(false)
	c := newHoldConn(s, 0)
	go func() { s.incoming <- "answers" }()
	_, err := c.Read(make([]byte, 16))
	require.NoError(t, err)
	return s, c
}

// What the reader keeps is bounded too: a write that would keep more than maxHeld goes out at
// once, with what was kept before it.
func TestHoldConnReaderKeepsABoundedAmount(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s, c := betweenReads(t)
		require.NoError(t, laterWrite(c, "a"))
		big := strings.Repeat("b", maxHeld)
		require.NoError(t, laterWrite(c, big))
		writes, _ := s.recorded()
		assert.Equal(t, []string{"a" + big}, writes)
	})
}

// A write that failed fails the reader's next Read too, and what the reader kept is dropped.
func TestHoldConnReaderSeesTheWriteError(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s, c := betweenReads(t)
		require.NoError(t, laterWrite(c, "a"))
		boom := errors.New("boom")
		s.mu.Lock()
		s.fail = boom
		s.mu.Unlock()
		_, err := c.Read(make([]byte, 16))
		require.ErrorIs(t, err, boom)
		_, closed := s.recorded()
		assert.True(t, closed)
		require.ErrorIs(t, heldWrite(c, "b"), boom)
	})
}

// A write error is reported to the writer of the failing call and to every later write, and it
// closes the connection.
func TestHoldConnWriteErrorIsStickyAndCloses(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := newScriptedConn(true)
		c := newHoldConn(s, 0)
		broken := errors.New("connection reset")
		first := busy(c, s, "1")
		require.NoError(t, heldWrite(c, "2"), "kept for the writing goroutine")
		s.release <- broken
		require.ErrorIs(t, <-first, broken)
		writes, closed := s.recorded()
		assert.Equal(t, []string{"1"}, writes, "the kept frame is not written after the failure")
		assert.True(t, closed, "a failed write closes the connection")
		require.ErrorIs(t, heldWrite(c, "3"), broken)
		require.ErrorIs(t, c.Flush(), broken)
		_, err := c.Write([]byte("4"))
		require.ErrorIs(t, err, broken)
		writes, _ = s.recorded()
		assert.Equal(t, []string{"1"}, writes)
	})
}

// Close drops what is kept, fails later writes, and ends a write in progress (its connection's
// Close does); holdConn starts no goroutine, so nothing is left running.
func TestHoldConnClose(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := newScriptedConn(true)
		c := newHoldConn(s, 0)
		first := busy(c, s, "1")
		require.NoError(t, heldWrite(c, "2"))
		require.NoError(t, c.Close())
		s.release <- net.ErrClosed // the connection's Close ends the call in progress
		require.ErrorIs(t, <-first, net.ErrClosed)
		writes, closed := s.recorded()
		assert.Equal(t, []string{"1"}, writes, "what was kept is dropped")
		assert.True(t, closed)
		require.ErrorIs(t, heldWrite(c, "3"), net.ErrClosed)
	})
}

// What is kept while a call is in progress is bounded: a write that would keep more than maxHeld
// waits for that call to take what is kept.
func TestHoldConnBoundsWhatIsKept(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := newScriptedConn(true)
		c := newHoldConn(s, 0)
		first := busy(c, s, "1")
		big := strings.Repeat("x", maxHeld)
		require.NoError(t, heldWrite(c, big))
		waiting := make(chan error, 1)
		go func() { waiting <- heldWrite(c, "y") }()
		synctest.Wait()
		select {
		case <-waiting:
			t.Fatal("a write beyond maxHeld did not wait")
		default:
		}
		s.release <- nil // the first round ends; the next takes the big frame, and "y" is kept
		<-s.entered
		require.NoError(t, <-waiting)
		s.release <- nil
		<-s.entered
		s.release <- nil
		require.NoError(t, <-first)
		writes, _ := s.recorded()
		assert.Equal(t, []string{"1", big, "y"}, writes)
	})
}

// roundTripper is an http.RoundTripper that is not an *http.Transport, which holdingClient
// cannot copy: the connections it makes are not holdConns.
type roundTripper struct{ http.RoundTripper }

// The gateway client's connections are holdConns (its handshake's client wraps what it dials)
// unless its HTTPClient's transport is one it cannot copy; either way, frames sent from many
// goroutines at once all arrive, each whole, each goroutine's in its order.
func TestClientWritesOverAHoldConn(t *testing.T) {
	for _, tc := range []struct {
		name string
		http *http.Client
		held bool
	}{
		{"default client", nil, true},
		{"client with an http.Transport", &http.Client{Transport: &http.Transport{}}, true},
		{"client with another transport", &http.Client{Transport: roundTripper{http.DefaultTransport}}, false},
	} {
		t.Run(tc.name, func(t *testing.T) { concurrentSends(t, tc.http, tc.held) })
	}
}

func concurrentSends(t *testing.T, hc *http.Client, wantHeld bool) {
	const senders, each = 8, 50
	got := make(chan string, senders*each)
	srv := readyServer(func(ctx context.Context, ws *websocket.Conn) {
		for {
			_, b, err := ws.Read(ctx)
			if err != nil {
				return
			}
			got <- string(b)
		}
	})
	defer srv.Close()
	rec := &recorder{}
	c, err := New(Config{URL: "ws" + strings.TrimPrefix(srv.URL, "http"), Token: func() string { return "t" },
		OnStatus: rec.status, OnDispatch: rec.dispatch, HTTPClient: hc})
	require.NoError(t, err)
	defer c.Close()
	c.Start()
	testwait.Until(t, "Ready", func() bool { return c.Status() == Ready })
	c.mu.Lock()
	held := c.held
	c.mu.Unlock()
	require.Equal(t, wantHeld, held != nil, "the connection is a holdConn")

	var wg sync.WaitGroup
	for g := range senders {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range each {
				assert.NoError(t, c.SendRaw(context.Background(), 3, []byte(`[`+strconv.Itoa(g)+`,`+strconv.Itoa(i)+`]`)))
			}
		}()
	}
	wg.Wait()
	next := make([]int, senders) // each sender's frames arrive in its order
	for range senders * each {
		var f struct {
			Op int    `json:"op"`
			D  [2]int `json:"d"`
		}
		select {
		case b := <-got:
			require.NoError(t, json.Unmarshal([]byte(b), &f), "frame %q", b)
		case <-time.After(10 * time.Second):
			t.Fatal("a frame did not arrive")
		}
		require.Equal(t, 3, f.Op)
		require.Equal(t, next[f.D[0]], f.D[1], "sender %d's frames out of order", f.D[0])
		next[f.D[0]]++
	}
}

// Settle returns only once what is kept has gone out: while another goroutine's system call is in
// progress it waits for that goroutine's rounds, which take what was kept; with no goroutine
// writing, it writes what was left to the reader itself. A close frame settled this way is not
// dropped by the Close that follows it.
func TestHoldConnSettle(t *testing.T) {
	t.Run("busy", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			s := newScriptedConn(true)
			c := newHoldConn(s, 0)
			first := busy(c, s, "1")
			_, err := c.Write([]byte("close")) // left to the writing goroutine
			require.NoError(t, err)
			settled := make(chan error, 1)
			go func() { settled <- c.Settle() }()
			synctest.Wait()
			select {
			case <-settled:
				t.Fatal("Settle returned with a frame still kept")
			default:
			}
			s.release <- nil
			<-s.entered // the round that takes the kept frame
			s.release <- nil
			require.NoError(t, <-first)
			require.NoError(t, <-settled)
			require.NoError(t, c.Close())
			writes, _ := s.recorded()
			assert.Equal(t, []string{"1", "close"}, writes)
		})
	})
	t.Run("left to the reader", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			s := newScriptedConn(false)
			c := newHoldConn(s, 0)
			go func() { s.incoming <- "in" }()
			_, err := c.Read(make([]byte, 8)) // between reads from here
			require.NoError(t, err)
			require.NoError(t, laterWrite(c, "later"))
			writes, _ := s.recorded()
			require.Empty(t, writes, "left to the reader")
			require.NoError(t, c.Settle())
			writes, _ = s.recorded()
			assert.Equal(t, []string{"later"}, writes)
		})
	})
}
