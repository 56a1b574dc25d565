package gateway

import (
	"encoding/json"
	"net"
	"strings"
	"testing"
	"time"
)

// A held batchConn writes nothing until release, then everything it kept in one write; outside
// hold it writes through.
func TestBatchConnWritesHeldFramesTogether(t *testing.T) {
	a, b := net.Pipe() // synchronous: each Write is exactly one Read on the other end
	defer a.Close()
	defer b.Close()
	bc := &batchConn{Conn: a}
	reads := make(chan string, 4)
	go func() { // ends when the pipe closes
		buf := make([]byte, 1024)
		for {
			n, err := b.Read(buf)
			if err != nil {
				close(reads)
				return
			}
			reads <- string(buf[:n])
		}
	}()
	bc.hold(time.Second)
	for _, p := range []string{"one", "two", "three"} {
		if n, err := bc.Write([]byte(p)); err != nil || n != len(p) {
			t.Fatalf("held write: %d %v", n, err)
		}
	}
	select {
	case r := <-reads:
		t.Fatalf("a held write reached the peer: %q", r)
	case <-time.After(20 * time.Millisecond):
	}
	if err := bc.release(); err != nil {
		t.Fatal(err)
	}
	if r := <-reads; r != "onetwothree" {
		t.Fatalf("released %q, want the three writes in one", r)
	}
	if _, err := bc.Write([]byte("four")); err != nil {
		t.Fatal(err)
	}
	if r := <-reads; r != "four" {
		t.Fatalf("write-through %q", r)
	}
	b.Close()
	bc.hold(time.Second)
	bc.Write([]byte("lost"))
	if err := bc.release(); err == nil {
		t.Fatal("release to a closed peer must fail")
	}
}

// Dispatches leave as frames the gateway writes itself (appendTextHeader, appendDispatch): every length encoding
// of RFC 6455 (7-bit, 16-bit, 64-bit) reaches a standard client intact.
func TestDispatchFrameLengths(t *testing.T) {
	e := newEnv(t, nil)
	c := e.dial()
	c.identify("user-1")
	seq := int64(1)
	for _, n := range []int{0, 100, 125 - 40, 126 - 40, 200, 65535 - 40, 65536 - 40, 70000, 200000} {
		s := strings.Repeat("x", n)
		e.hub.Dispatch(1, "TEST_EVENT", map[string]string{"s": s})
		seq++
		p := c.expectDispatch("TEST_EVENT", seq)
		var got map[string]string
		if err := json.Unmarshal(p.D, &got); err != nil || got["s"] != s {
			t.Fatalf("payload of %d bytes arrived as %d bytes (%v)", n, len(got["s"]), err)
		}
	}
	c.heartbeat()
}
