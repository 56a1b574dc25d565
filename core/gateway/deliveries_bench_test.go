package gateway

import (
	"bufio"
	"bytes"
	"context"
	"crypto/sha1"
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"strconv"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// BenchmarkDeliveries measures what a Client spends on each lobby message it receives over a
// real WebSocket connection on loopback: the reads, the WebSocket frames, the envelope and the
// dispatch to OnDispatch. A bare server (a hand-made handshake, frames written as bytes) writes
// the messages batch at a time and waits until the client has dispatched each batch, as a
// member's client receives a lobby's messages under fan-out; its own work per message is a few
// bytes. cpu-ns/delivery is the process's CPU time (user and system) per message.
func BenchmarkDeliveries(b *testing.B) {
	for _, batch := range []int{1, 16} {
		b.Run("batch="+strconv.Itoa(batch), func(b *testing.B) { benchDeliveries(b, batch) })
	}
}

func benchDeliveries(b *testing.B, batch int) {
	n := b.N
	var got atomic.Int64
	consumed, done := make(chan struct{}, 1), make(chan struct{})
	srv := httptest.NewServer(frameServer(b, n, batch, consumed))
	defer srv.Close()
	gw := readyBenchClient(b, srv.URL, nil, func(event string, data json.RawMessage) {
		if event != "LOBBY_MESSAGE_CREATE" {
			return
		}
		k := got.Add(1)
		if k%int64(batch) == 0 || k == int64(n) {
			consumed <- struct{}{}
		}
		if k == int64(n) {
			close(done)
		}
	})
	defer gw.Close()
	cpu := timedDeliveries(b, consumed, done)
	b.ReportMetric(float64(cpu)/float64(n), "cpu-ns/delivery")
}

// timedDeliveries times a benchmark's deliveries: it gives the server its go-ahead for the first
// batch on consumed, waits until done is closed, and returns the process's CPU time meanwhile.
func timedDeliveries(b *testing.B, consumed chan<- struct{}, done <-chan struct{}) time.Duration {
	b.ReportAllocs()
	cpu0 := processCPU()
	b.ResetTimer()
	consumed <- struct{}{}
	<-done
	b.StopTimer()
	return processCPU() - cpu0
}

// readyBenchClient returns a Client of the bare server at url (http://...) once it is Ready,
// dispatching to onDispatch, its handshake made with hc (nil: the default); it never reconnects.
func readyBenchClient(b *testing.B, url string, hc *http.Client, onDispatch func(event string, data json.RawMessage)) *Client {
	return startReady(b, Config{URL: "ws" + url[len("http"):], OnDispatch: onDispatch, HTTPClient: hc})
}

// startReady starts a Client configured by cfg (its URL, OnDispatch, DataChecked and
// HTTPClient) and returns it once it is Ready; it never reconnects.
func startReady(b *testing.B, cfg Config) *Client {
	ready := make(chan struct{}, 1)
	cfg.Token = func() string { return "token" }
	cfg.OnStatus = func(s Status, _ error) {
		if s == Ready {
			ready <- struct{}{}
		}
	}
	cfg.Sleep = func(ctx context.Context, _ time.Duration) error { <-ctx.Done(); return ctx.Err() }
	gw, err := New(cfg)
	require.NoError(b, err)
	gw.Start()
	select {
	case <-ready:
	case <-time.After(10 * time.Second):
		gw.Close()
		require.Fail(b, "not Ready")
	}
	return gw
}

// processCPU is the CPU time (user and system) this process has used.
func processCPU() time.Duration {
	var ru syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// frameServer accepts one WebSocket connection, sends Hello and READY, then n lobby messages,
// batch at a time, each batch once consumed has a value.
func frameServer(b *testing.B, n, batch int, consumed <-chan struct{}) http.Handler {
	var served atomic.Bool
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if served.Swap(true) {
			http.Error(w, "one connection only", http.StatusServiceUnavailable)
			return
		}
		conn, rw, ok := acceptRaw(b, w, r)
		if !ok {
			return
		}
		defer conn.Close()
		var out []byte
		out = appendFrame(out, []byte(`{"op":10,"d":{"heartbeat_interval":3600000}}`))
		out = appendFrame(out, []byte(`{"op":0,"d":{"session_id":"s","resume_gateway_url":""},"s":1,"t":"READY"}`))
		if err := writeAll(conn, rw, out); !assert.NoError(b, err) {
			return
		}
		// A frame with a sequence number of fixed width, rewritten in place for each message.
		frame := appendFrame(nil, bytes.Replace(benchFrame(), []byte(`"s":1234`), []byte(`"s":1000000000000`), 1))
		digits := bytes.Index(frame, []byte(`"s":1`)) + len(`"s":`)
		for sent := 0; sent < n; {
			<-consumed
			out = out[:0]
			for k := 0; k < batch && sent < n; k++ {
				sent++
				strconv.AppendInt(frame[:digits], 1000000000000+int64(sent), 10)
				out = append(out, frame...)
			}
			if _, err := conn.Write(out); err != nil {
				b.Error(err)
				return
			}
		}
		<-consumed // the last batch; then the connection closes, and the client waits in Sleep
	})
}

func writeAll(conn net.Conn, rw *bufio.ReadWriter, p []byte) error {
	if err := rw.Flush(); err != nil {
		return err
	}
	_, err := conn.Write(p)
	return err
}

// acceptRaw answers r's WebSocket handshake on w's hijacked connection, whose frames the caller
// then writes and reads as bytes; the answer is buffered in rw.
func acceptRaw(tb testing.TB, w http.ResponseWriter, r *http.Request) (net.Conn, *bufio.ReadWriter, bool) {
	sum := sha1.Sum([]byte(r.Header.Get("Sec-WebSocket-Key") + "258EAFA5-E914-47DA-95CA-C5AB0DC85B11"))
	conn, rw, err := http.NewResponseController(w).Hijack()
	if !assert.NoError(tb, err) {
		return nil, nil, false
	}
	fmt.Fprintf(rw, "HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Accept: %s\r\n\r\n",
		base64.StdEncoding.EncodeToString(sum[:]))
	return conn, rw, true
}

// appendFrame appends p as one unmasked text frame, as a server sends it.
func appendFrame(b, p []byte) []byte {
	b = append(b, 0x81)
	switch {
	case len(p) < 126:
		b = append(b, byte(len(p)))
	case len(p) <= 0xffff:
		b = append(b, 126)
		b = binary.BigEndian.AppendUint16(b, uint16(len(p)))
	default:
		b = append(b, 127)
		b = binary.BigEndian.AppendUint64(b, uint64(len(p)))
	}
	return append(b, p...)
}
