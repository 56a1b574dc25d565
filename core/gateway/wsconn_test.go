package gateway

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gobwas/ws"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"sdkpp/core/internal/testwait"
)

// peer is a test gateway's side of one WebSocket connection, with frames written and read as
// bytes (gobwas/ws's frame functions), so that a test can send what a library would not.
type peer struct {
	t    *testing.T
	conn net.Conn
	br   *bufio.Reader
}

// frameTestServer accepts WebSocket connections (a hand-made handshake) and runs each in serve,
// which is passed the connection's number from 1; tls serves over TLS.
func frameTestServer(t *testing.T, tls bool, serve func(p *peer, n int)) *httptest.Server {
	var conns atomic.Int64
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Upgrade") != "websocket" {
			http.Error(w, "not a WebSocket handshake", http.StatusBadRequest)
			return
		}
		conn, rw, ok := acceptRaw(t, w, r)
		if !ok {
			return
		}
		defer conn.Close()
		if rw.Flush() != nil {
			return
		}
		serve(&peer{t: t, conn: conn, br: rw.Reader}, int(conns.Add(1)))
	})
	var srv *httptest.Server
	if tls {
		srv = httptest.NewTLSServer(h)
	} else {
		srv = httptest.NewServer(h)
	}
	t.Cleanup(srv.Close)
	return srv
}

// send writes one unmasked frame.
func (p *peer) send(op ws.OpCode, fin bool, payload string) {
	p.t.Helper()
	require.NoError(p.t, ws.WriteFrame(p.conn, ws.NewFrame(op, fin, []byte(payload))))
}

// text sends one text message in one frame.
func (p *peer) text(s string) { p.send(ws.OpText, true, s) }

// read returns the client's next frame, unmasked; it fails the test if the client's frame is
// not masked.
func (p *peer) read() ws.Frame {
	p.t.Helper()
	require.NoError(p.t, p.conn.SetReadDeadline(time.Now().Add(10*time.Second)))
	f, err := ws.ReadFrame(p.br)
	require.NoError(p.t, err)
	require.True(p.t, f.Header.Masked, "a client's frames are masked (RFC 6455 5.1)")
	return ws.UnmaskFrameInPlace(f)
}

// readPayload returns the client's next message, a text frame, as a payload.
func (p *peer) readPayload() Payload {
	p.t.Helper()
	f := p.read()
	require.Equal(p.t, ws.OpText, f.Header.OpCode)
	var pl Payload
	require.NoError(p.t, json.Unmarshal(f.Payload, &pl))
	return pl
}

// readClose returns the code and reason of the client's next frame, which must be a close frame.
func (p *peer) readClose() (ws.StatusCode, string) {
	p.t.Helper()
	f := p.read()
	require.Equal(p.t, ws.OpClose, f.Header.OpCode, "payload %q", f.Payload)
	return ws.ParseCloseFrameData(f.Payload)
}

// ready sends Hello, reads Identify and sends READY with sequence number 1.
func (p *peer) ready() {
	p.t.Helper()
	p.text(`{"op":10,"d":{"heartbeat_interval":3600000}}`)
	require.Equal(p.t, 2, p.readPayload().Op, "Identify")
	p.text(`{"op":0,"s":1,"t":"READY","d":{"session_id":"s1","resume_gateway_url":""}}`)
}

// frameClient returns a started Client of srv, recording into rec, whose backoff and heartbeat
// sleeps are driven by the test: a sleep shorter than a minute (the backoff) returns at once,
// a longer one (the heartbeat's, every hour) when beat has a value.
func frameClient(t *testing.T, srv *httptest.Server, rec *recorder, beat <-chan struct{}, edit func(*Config)) *Client {
	cfg := Config{
		URL: "ws" + strings.TrimPrefix(srv.URL, "http"), Token: func() string { return "t" },
		OnStatus: rec.status, OnDispatch: rec.dispatch, HTTPClient: srv.Client(),
		Backoff: Backoff{Initial: time.Millisecond, Max: time.Millisecond},
		Rand:    func() float64 { return 1 },
		Sleep: func(ctx context.Context, d time.Duration) error {
			if d < time.Minute {
				return ctx.Err()
			}
			select {
			case <-beat:
				return nil
			case <-ctx.Done():
				return ctx.Err()
			}
		},
	}
	if edit != nil {
		edit(&cfg)
	}
	c, err := New(cfg)
	require.NoError(t, err)
	t.Cleanup(c.Close)
	c.Start()
	return c
}

// err is the error of the client's first drop.
func (r *recorder) err() error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if len(r.errs) == 0 {
		return nil
	}
	return r.errs[0]
}

// A message in fragments, with a ping between them, arrives whole; the ping is answered with a
// pong of the same payload.
func TestFrameFragmentedMessageAndPing(t *testing.T) {
	done := make(chan struct{})
	srv := frameTestServer(t, false, func(p *peer, n int) {
		if n > 1 {
			return
		}
		p.ready()
		p.send(ws.OpText, false, `{"op":0,"s":2,"t":"EVENT",`)
		p.send(ws.OpPing, true, "are you there")
		p.send(ws.OpContinuation, false, `"d":{"k":`)
		p.send(ws.OpContinuation, true, `"v"}}`)
		f := p.read()
		assert.Equal(t, ws.OpPong, f.Header.OpCode)
		assert.Equal(t, "are you there", string(f.Payload))
		<-done
	})
	defer close(done)
	rec := &recorder{}
	frameClient(t, srv, rec, nil, nil)
	testwait.Until(t, "the fragmented message", func() bool { return rec.count("EVENT") == 1 })
	rec.mu.Lock()
	defer rec.mu.Unlock()
	assert.JSONEq(t, `{"k":"v"}`, string(rec.payloads[len(rec.payloads)-1]))
}

// A message over Config.MaxMessage, in one frame or in fragments, closes the connection with
// 1009 and a clear error, before its payload is read; the client reconnects.
func TestFrameMessageOverTheReadLimit(t *testing.T) {
	for _, fragmented := range []bool{false, true} {
		t.Run(fmt.Sprint("fragmented=", fragmented), func(t *testing.T) {
			done := make(chan struct{})
			reconnected := make(chan struct{})
			srv := frameTestServer(t, false, func(p *peer, n int) {
				if n > 1 {
					if n == 2 {
						close(reconnected)
					}
					return
				}
				p.ready()
				if fragmented {
					p.send(ws.OpText, false, strings.Repeat("x", 200))
					p.send(ws.OpContinuation, true, strings.Repeat("x", 200))
				} else {
					p.text(strings.Repeat("x", 300))
				}
				code, reason := p.readClose()
				assert.Equal(t, ws.StatusMessageTooBig, code)
				assert.Equal(t, "read limited at 256 bytes", reason)
				<-done
			})
			defer close(done)
			rec := &recorder{}
			frameClient(t, srv, rec, nil, func(c *Config) { c.MaxMessage = 256 })
			select {
			case <-reconnected:
			case <-time.After(testwait.Timeout):
				t.Fatal("no reconnection after a message over the limit")
			}
			require.ErrorIs(t, rec.err(), errMessageTooBig)
			assert.Contains(t, rec.err().Error(), "read limited at 256 bytes")
		})
	}
}

// The service's close frame ends the connection with its code and reason, which the client
// echoes; a final code (4004) stops the client. A close frame without a code is 1005.
func TestFrameServiceCloseCodeAndReason(t *testing.T) {
	for _, tc := range []struct {
		name    string
		payload []byte
		code    int
		reason  string
	}{
		{"final", ws.NewCloseFrameBody(4004, "Authentication failed."), 4004, "Authentication failed."},
		{"no code", nil, 1005, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			echoed := make(chan []byte, 1)
			srv := frameTestServer(t, false, func(p *peer, n int) {
				if n > 1 {
					return
				}
				p.ready()
				p.send(ws.OpClose, true, string(tc.payload))
				f := p.read()
				assert.Equal(t, ws.OpClose, f.Header.OpCode)
				echoed <- f.Payload
			})
			rec := &recorder{}
			frameClient(t, srv, rec, nil, nil)
			select {
			case got := <-echoed:
				assert.Equal(t, tc.payload, got, "the close frame is echoed")
			case <-time.After(testwait.Timeout):
				t.Fatal("the close frame was not answered")
			}
			testwait.Until(t, "the close", func() bool { return rec.err() != nil })
			var ce *CloseError
			require.ErrorAs(t, rec.err(), &ce)
			assert.Equal(t, tc.code, ce.Code)
			assert.Equal(t, tc.reason, ce.Reason)
		})
	}
}

// Close sends 1000 "client disconnect" and Renew 4900 "token renewed", each answered by the
// service; after Renew the client resumes the session on a new connection, with the sequence
// number it reached.
func TestFrameClientCloseCodesAndResume(t *testing.T) {
	closes := make(chan string, 2)
	resumed := make(chan Payload, 1)
	srv := frameTestServer(t, false, func(p *peer, n int) {
		if n == 1 {
			p.ready()
			p.text(`{"op":0,"s":2,"t":"EVENT","d":{}}`)
		} else {
			p.text(`{"op":10,"d":{"heartbeat_interval":3600000}}`)
			resumed <- p.readPayload()
			p.text(`{"op":0,"s":3,"t":"RESUMED","d":{}}`)
		}
		code, reason := p.readClose()
		closes <- fmt.Sprint(code, " ", reason)
		assert.NoError(t, ws.WriteFrame(p.conn, ws.NewCloseFrame(ws.NewCloseFrameBody(code, ""))), "the client waits for the answer")
	})
	rec := &recorder{}
	c := frameClient(t, srv, rec, nil, nil)
	testwait.Until(t, "the event", func() bool { return rec.count("EVENT") == 1 })
	c.Renew()
	require.Equal(t, "4900 token renewed", <-closes)
	resume := <-resumed
	require.Equal(t, 6, resume.Op, "Resume")
	assert.JSONEq(t, `{"token":"t","session_id":"s1","seq":2}`, string(resume.D))
	testwait.Until(t, "RESUMED", func() bool { return rec.count("RESUMED") == 1 })
	c.Close()
	require.Equal(t, "1000 client disconnect", <-closes)
}

// The client beats at the heartbeat interval with the last sequence number; a beat that was
// not acknowledged before the next closes the connection with 4900.
func TestFrameHeartbeats(t *testing.T) {
	beat := make(chan struct{})
	beats := make(chan Payload)
	closed := make(chan string, 1)
	srv := frameTestServer(t, false, func(p *peer, n int) {
		if n > 1 {
			return
		}
		p.ready()
		beats <- p.readPayload()
		p.text(`{"op":11}`)
		p.text(`{"op":0,"s":2,"t":"EVENT","d":{}}`) // read after the acknowledgement
		beats <- p.readPayload()
		code, reason := p.readClose()
		closed <- fmt.Sprint(code, " ", reason)
	})
	rec := &recorder{}
	c := frameClient(t, srv, rec, beat, nil)
	testwait.Until(t, "Ready", func() bool { return c.Status() == Ready })
	beat <- struct{}{}
	hb := <-beats
	assert.Equal(t, 1, hb.Op)
	assert.Equal(t, "1", string(hb.D), "the last sequence number")
	testwait.Until(t, "the acknowledgement read", func() bool { return rec.count("EVENT") == 1 })
	beat <- struct{}{}
	hb = <-beats
	assert.Equal(t, 1, hb.Op, "the second beat")
	assert.Equal(t, "2", string(hb.D))
	beat <- struct{}{} // the second was not acknowledged
	select {
	case got := <-closed:
		require.Equal(t, "4900 heartbeat not acknowledged", got)
	case <-time.After(testwait.Timeout):
		t.Fatal("an unacknowledged beat did not close the connection")
	}
}

// A frame that breaks RFC 6455 (masked by the service, reserved bits, a continuation that
// continues nothing) closes the connection with 1002; the client reconnects.
func TestFrameProtocolErrors(t *testing.T) {
	for _, tc := range []struct {
		name string
		h    ws.Header
	}{
		{"masked", ws.Header{Fin: true, OpCode: ws.OpText, Masked: true, Length: 2}},
		{"reserved bits", ws.Header{Fin: true, OpCode: ws.OpText, Rsv: ws.Rsv(true, false, false), Length: 2}},
		{"continuation", ws.Header{Fin: true, OpCode: ws.OpContinuation, Length: 2}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			reconnected := make(chan struct{})
			done := make(chan struct{})
			defer close(done)
			srv := frameTestServer(t, false, func(p *peer, n int) {
				if n > 1 {
					if n == 2 {
						close(reconnected)
					}
					<-done
					return
				}
				p.ready()
				require.NoError(t, ws.WriteHeader(p.conn, tc.h))
				_, err := p.conn.Write([]byte("{}"))
				require.NoError(t, err)
				code, _ := p.readClose()
				assert.Equal(t, ws.StatusProtocolError, code)
			})
			rec := &recorder{}
			frameClient(t, srv, rec, nil, nil)
			select {
			case <-reconnected:
			case <-time.After(testwait.Timeout):
				t.Fatal("no reconnection after a protocol error")
			}
			assert.ErrorContains(t, rec.err(), "protocol error")
		})
	}
}

// The handshake goes through the configured HTTP client: over TLS (wss) with its TLS settings,
// and through its proxy.
func TestFrameTLSAndProxy(t *testing.T) {
	serve := func(p *peer, n int) {
		p.ready()
		p.text(`{"op":0,"s":2,"t":"EVENT","d":{}}`)
		p.readClose()
	}
	t.Run("wss", func(t *testing.T) {
		srv := frameTestServer(t, true, serve)
		require.True(t, strings.HasPrefix(srv.URL, "https:"))
		rec := &recorder{}
		frameClient(t, srv, rec, nil, nil)
		testwait.Until(t, "the event over TLS", func() bool { return rec.count("EVENT") == 1 })
	})
	t.Run("wss without the server's certificate", func(t *testing.T) {
		srv := frameTestServer(t, true, serve)
		rec := &recorder{}
		frameClient(t, srv, rec, nil, func(c *Config) { c.HTTPClient = nil })
		testwait.Until(t, "a failed handshake", func() bool { return rec.err() != nil })
		assert.ErrorContains(t, rec.err(), "certificate")
	})
	t.Run("proxy", func(t *testing.T) {
		srv := frameTestServer(t, false, serve)
		var proxied atomic.Int64
		proxy := httptest.NewServer(&httputil.ReverseProxy{Rewrite: func(r *httputil.ProxyRequest) {
			proxied.Add(1)
			r.Out.URL = r.In.URL // a forward proxy: the request names its target
		}})
		defer proxy.Close()
		proxyURL, err := url.Parse(proxy.URL)
		require.NoError(t, err)
		rec := &recorder{}
		frameClient(t, srv, rec, nil, func(c *Config) {
			c.HTTPClient = &http.Client{Transport: &http.Transport{Proxy: http.ProxyURL(proxyURL)}}
		})
		testwait.Until(t, "the event through the proxy", func() bool { return rec.count("EVENT") == 1 })
		assert.EqualValues(t, 1, proxied.Load())
	})
}

// A handshake the service refuses, or answers with a wrong accept key, fails with the reason.
func TestFrameHandshakeRefused(t *testing.T) {
	for _, tc := range []struct {
		name string
		h    http.HandlerFunc
		want string
	}{
		{"status", func(w http.ResponseWriter, r *http.Request) { http.Error(w, "no", http.StatusUnauthorized) }, "expected HTTP status 101, got 401"},
		{"accept key", func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Upgrade", "websocket")
			w.Header().Set("Connection", "Upgrade")
			w.Header().Set("Sec-WebSocket-Accept", "wrong")
			w.WriteHeader(http.StatusSwitchingProtocols)
		}, `invalid Sec-WebSocket-Accept "wrong"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv := httptest.NewServer(tc.h)
			defer srv.Close()
			_, err := dialWS(context.Background(), "ws"+strings.TrimPrefix(srv.URL, "http"), nil, 1<<20)
			require.ErrorContains(t, err, tc.want)
		})
	}
}

// Frames of every length encoding (7, 16 and 64 bits) arrive whole, and the client's own
// frames of each are read back by the service.
func TestFrameLengths(t *testing.T) {
	lengths := []int{0, 125, 126, 65535, 65536, 200000}
	done := make(chan struct{})
	srv := frameTestServer(t, false, func(p *peer, n int) {
		if n > 1 {
			return
		}
		p.ready()
		for _, l := range lengths {
			p.text(`{"op":0,"t":"EVENT","d":"` + strings.Repeat("x", l) + `"}`)
		}
		for _, l := range lengths {
			pl := p.readPayload()
			assert.Equal(t, 3, pl.Op)
			assert.Len(t, pl.D, l+2)
		}
		close(done)
		p.readClose()
	})
	rec := &recorder{}
	c := frameClient(t, srv, rec, nil, nil)
	testwait.Until(t, "the events", func() bool { return rec.count("EVENT") == len(lengths) })
	rec.mu.Lock()
	for i, l := range lengths {
		assert.Len(t, rec.payloads[len(rec.payloads)-len(lengths)+i], l+2)
	}
	rec.mu.Unlock()
	for _, l := range lengths {
		require.NoError(t, c.SendRaw(context.Background(), 3, []byte(`"`+strings.Repeat("y", l)+`"`)))
	}
	<-done
}

// The frame header a client writes is the one RFC 6455 5.2 lays out.
func TestFrameWrittenHeader(t *testing.T) {
	a, b := net.Pipe()
	defer b.Close()
	c := newWSConn(a, 1<<20)
	defer c.CloseNow()
	go c.WriteText([]byte("hello"))
	var h [6]byte
	_, err := b.Read(h[:])
	require.NoError(t, err)
	assert.Equal(t, byte(0x81), h[0], "FIN and text")
	assert.Equal(t, byte(0x80|5), h[1], "masked, length 5")
	body := make([]byte, 5)
	_, err = b.Read(body)
	require.NoError(t, err)
	ws.Cipher(body, [4]byte(h[2:6]), 0)
	assert.Equal(t, "hello", string(body))
}
