package gateway

import (
	"net"
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
