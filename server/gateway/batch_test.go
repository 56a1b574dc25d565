package gateway

import (
	"bytes"
	"encoding/json"
	"io"
	"net"
	"strings"
	"testing"
	"time"

	"sdkpp/wire"
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

// writeNow writes what the socket takes without waiting; when the peer does not read, the rest
// is kept and goes first with the loop's next write, so the peer reads every frame once, in
// order. A held connection, or one that keeps bytes, writes nothing now and keeps the frames
// after what it kept.
func TestBatchConnWriteNowKeepsWhatTheSocketRefuses(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	accepted := make(chan net.Conn, 1)
	go func() {
		c, err := ln.Accept()
		if err == nil {
			accepted <- c
		}
		close(accepted)
	}()
	peer, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer peer.Close()
	server := <-accepted
	if server == nil {
		t.Fatal("no connection accepted")
	}
	defer server.Close()
	server.(*net.TCPConn).SetWriteBuffer(4096)
	bc := &batchConn{Conn: server}

	var list []entry
	for i := range 100 { // 2 MB: more than the buffers hold while the peer does not read
		list = append(list, entry{seq: int64(i + 1), event: []byte(`"TEST"`), d: []byte(`{"s":"` + strings.Repeat("x", 20000) + `"}`)})
	}
	kept, err := bc.writeNow(list)
	if err != nil || !kept || !bc.keeps() {
		t.Fatalf("writeNow to a full socket: kept %v (keeps %v), err %v", kept, bc.keeps(), err)
	}
	// While bytes are kept, or the connection is held, writeNow keeps its frames after them.
	again := entry{seq: 101, event: []byte(`"TEST"`), d: []byte(`{"again":1}`)}
	if kept, err := bc.writeNow([]entry{again}); !kept || err != nil {
		t.Fatalf("writeNow while bytes are kept must leave it to the loop: %v %v", kept, err)
	}
	held := entry{seq: 102, event: []byte(`"TEST"`), d: []byte(`{"held":1}`)}
	last := entry{seq: 103, event: []byte(`"TEST"`), d: []byte(`{}`)}
	want := frames(append(list, again, held, last)...)
	got := readBytes(peer, len(want))
	if err := bc.hold(10 * time.Second); err != nil {
		t.Fatal(err)
	}
	if kept, _ := bc.writeNow([]entry{held}); !kept {
		t.Fatal("writeNow while held must leave it to the loop")
	}
	if err := bc.writeDispatch(last); err != nil {
		t.Fatal(err)
	}
	if err := bc.release(); err != nil {
		t.Fatal(err)
	}
	if b := <-got; !bytes.Equal(b, want) {
		t.Fatalf("the peer read %d bytes, want %d in order", len(b), len(want))
	}
	if bc.keeps() {
		t.Fatal("release left bytes kept")
	}
	// A connection with room writes everything now.
	small := frames(last)
	got2 := readBytes(peer, len(small))
	if kept, err := bc.writeNow([]entry{last}); kept || err != nil {
		t.Fatalf("writeNow with room: kept %v, err %v", kept, err)
	}
	if b := <-got2; !bytes.Equal(b, small) {
		t.Fatalf("the peer read %q", b)
	}
}

// Data that encodes itself (wire.LobbyMessage.AppendJSON) is sent as its encoding, which is
// encoding/json's.
func TestDispatchOfSelfEncodingData(t *testing.T) {
	e := newEnv(t, nil)
	c := e.dial()
	c.identify("user-1")
	m := wire.LobbyMessage{ID: 5, Content: `<"hi">`, Metadata: map[string]string{"b": "2", "a": "1"}}
	e.hub.Dispatch(1, "TEST_EVENT", m)
	p := c.expectDispatch("TEST_EVENT", 2)
	want, _ := json.Marshal(m)
	if string(p.D) != string(want) {
		t.Fatalf("dispatched %s, want %s", p.D, want)
	}
}

// A connection whose socket cannot be written without waiting (TLS: crypto/tls writes the
// records) keeps every frame of writeNow for the loop; none is lost.
func TestBatchConnWriteNowOverTLSKeepsEverything(t *testing.T) {
	a, b := net.Pipe() // not a syscall.Conn, as a *tls.Conn is not
	defer a.Close()
	defer b.Close()
	bc := &batchConn{Conn: a}
	if bc.canWriteNow() {
		t.Fatal("a pipe reports it can be written at once")
	}
	e := entry{seq: 1, event: []byte(`"TEST"`), d: []byte(`{}`)}
	want := frames(e)
	if kept, err := bc.writeNow([]entry{e}); !kept || err != nil || !bc.keeps() {
		t.Fatalf("writeNow: kept %v, err %v", kept, err)
	}
	got := readBytes(b, len(want))
	if err := bc.hold(time.Second); err != nil {
		t.Fatal(err)
	}
	if err := bc.release(); err != nil {
		t.Fatal(err)
	}
	if g := <-got; !bytes.Equal(g, want) {
		t.Fatalf("the loop's write carried %q, want %q", g, want)
	}
}

// Over TLS the dispatcher cannot write itself (crypto/tls writes the records): every dispatch
// still arrives once and in order, written by the connection's loop.
func TestDispatchesOverTLS(t *testing.T) {
	e := newTLSEnv(t, nil)
	c := e.dial()
	c.identify("user-1")
	check := func(i int) {
		t.Helper()
		p := c.expectDispatch("TEST_EVENT", int64(i+2))
		var got int
		if json.Unmarshal(p.D, &got) != nil || got != i {
			t.Fatalf("dispatch %d carried %s", i, p.D)
		}
	}
	for i := range 10 { // one at a time, each while the connection's loop is idle
		e.hub.Dispatch(1, "TEST_EVENT", i)
		check(i)
	}
	for i := 10; i < 50; i++ { // and a burst
		e.hub.Dispatch(1, "TEST_EVENT", i)
	}
	for i := 10; i < 50; i++ {
		check(i)
	}
}

// frames is the wire form of the entries' dispatch frames, as batchConn writes them.
func frames(list ...entry) []byte {
	var b []byte
	for _, e := range list {
		b = appendTextHeader(b, dispatchLen(e.seq, e.event, e.d))
		b = appendDispatch(b, e.seq, e.event, e.d)
	}
	return b
}

// readBytes reads n bytes from r in a goroutine and sends them, or nil when reading fails.
func readBytes(r io.Reader, n int) <-chan []byte {
	got := make(chan []byte, 1)
	go func() {
		b := make([]byte, n)
		if _, err := io.ReadFull(r, b); err != nil {
			b = nil
		}
		got <- b
	}()
	return got
}
