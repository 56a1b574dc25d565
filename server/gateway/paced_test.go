package gateway

import (
	"bufio"
	"encoding/json"
	"io"
	"log/slog"
	"net"
	"slices"
	"strconv"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/gobwas/ws"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"sdkpp/server/gateway/internal/pace"
	"sdkpp/server/gateway/internal/wsframe"
	gwire "sdkpp/wire/gateway"
)

// pipeClient is a gateway connection over net.Pipe, for a test in a synctest bubble (where a
// loopback TCP connection cannot be): a goroutine of the client's reads what the server sends,
// as it comes, and answers its close frame.
type pipeClient struct {
	t  *testing.T
	nc net.Conn

	mu     sync.Mutex
	got    []gwire.Payload
	closed int // the close frame's code; 0 before it
}

// servePipe serves a new connection on h as ServeHTTP does after the upgrade.
func servePipe(t *testing.T, h *Hub) *pipeClient {
	srv, cli := net.Pipe()
	tcp := &wsframe.Conn{Conn: srv}
	c := newConn(h, tcp, wsframe.NewReader(bufio.NewReader(srv), tcp, h.cfg.WriteTimeout), "ws://gateway")
	h.mu.Lock()
	h.conns[c] = struct{}{}
	h.wg.Add(1)
	h.mu.Unlock()
	go c.read()
	go func() {
		defer h.wg.Done()
		c.run()
	}()
	p := &pipeClient{t: t, nc: cli}
	go p.read()
	return p
}

func (p *pipeClient) read() {
	for {
		f, err := ws.ReadFrame(p.nc)
		if err != nil {
			return
		}
		p.mu.Lock()
		switch f.Header.OpCode {
		case ws.OpClose:
			code, _ := ws.ParseCloseFrameData(f.Payload)
			p.closed = int(code)
			p.mu.Unlock()
			_ = ws.WriteFrame(p.nc, ws.MaskFrame(ws.NewCloseFrame(f.Payload)))
			continue
		case ws.OpText:
			var pl gwire.Payload
			if json.Unmarshal(f.Payload, &pl) == nil {
				p.got = append(p.got, pl)
			}
		}
		p.mu.Unlock()
	}
}

func (p *pipeClient) send(op int, d any) {
	raw, err := json.Marshal(map[string]any{"op": op, "d": d})
	require.NoError(p.t, err)
	require.NoError(p.t, ws.WriteFrame(p.nc, ws.MaskFrame(ws.NewTextFrame(raw))))
}

// dispatches returns the dispatches read so far, once every goroutine of the bubble waits.
func (p *pipeClient) dispatches() []gwire.Payload {
	synctest.Wait()
	p.mu.Lock()
	defer p.mu.Unlock()
	return slices.DeleteFunc(slices.Clone(p.got), func(pl gwire.Payload) bool { return pl.Op != gwire.OpDispatch })
}

// names is each dispatch's event and sequence number.
func names(ds []gwire.Payload) []string {
	var out []string
	for _, d := range ds {
		out = append(out, deref(d.T)+" s="+derefInt(d.S))
	}
	return out
}

// A paced connection (a busy hub) waits until the pace after its last write, and then its loop
// writes what was pushed meanwhile; an answer, a resume on a new connection, or the session's
// end that falls on the paced write (just before, at the same instant, just after) leaves
// every dispatch written once, in order.
func TestPacedWriteAtTheTick(t *testing.T) {
	for _, event := range []string{"answer", "resume", "end"} {
		for _, off := range []time.Duration{-time.Millisecond, -time.Nanosecond, 0, time.Nanosecond, time.Millisecond} {
			t.Run(event+"@"+off.String(), func(t *testing.T) {
				synctest.Test(t, func(t *testing.T) { pacedAtTheTick(t, event, off) })
			})
		}
	}
}

func pacedAtTheTick(t *testing.T, event string, off time.Duration) {
	const every = 10 * time.Millisecond
	api := echoAPI{entered: make(chan struct{}, 1), release: make(chan struct{})}
	h := New(Config{Tokens: testTokens{}, Users: testUsers{}, Requests: api, busyPace: every,
		Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	defer h.Close()
	defer busyTraffic(h)() // the hub stays busy until the test ends
	start := time.Now()
	at := func(d time.Duration) { time.Sleep(time.Until(start.Add(d))) }

	a := servePipe(t, h)
	a.send(gwire.OpIdentify, identifyData("user-1"))
	require.Equal(t, []string{"READY s=1"}, names(a.dispatches()))
	var ready gwire.Ready
	require.NoError(t, json.Unmarshal(a.dispatches()[0].D, &ready))

	at(25 * time.Millisecond) // busy by now; READY was written 25 ms ago: D1 goes at once
	h.Dispatch(1, "D1", 1)
	at(26 * time.Millisecond) // paced: written a pace after D1
	h.Dispatch(1, "D2", 2)
	at(27 * time.Millisecond)
	h.Dispatch(1, "D3", 3)
	at(35*time.Millisecond - time.Nanosecond)
	require.Equal(t, []string{"READY s=1", "D1 s=2"}, names(a.dispatches()), "paced")
	at(35 * time.Millisecond)
	require.Equal(t, []string{"READY s=1", "D1 s=2", "D2 s=3", "D3 s=4"}, names(a.dispatches()), "a pace after D1")
	at(37 * time.Millisecond) // due at 45 ms
	h.Dispatch(1, "D4", 4)
	at(40 * time.Millisecond)
	h.Dispatch(1, "D5", 5)
	at(45*time.Millisecond + off)

	var b *pipeClient
	switch event {
	case "answer": // answered at once, after what was pushed before it, tick or not
		a.send(gwire.OpRequest, gwire.Request{Nonce: "n", Method: "GET", Path: "/x"})
		require.Equal(t, []string{"READY s=1", "D1 s=2", "D2 s=3", "D3 s=4", "D4 s=5", "D5 s=6", gwire.EventRequestResult + " s=7"},
			names(a.dispatches()))
	case "resume":
		require.NoError(t, a.nc.Close())
		seen := a.dispatches()
		b = servePipe(t, h)
		b.send(gwire.OpResume, map[string]any{"token": "user-1", "session_id": ready.SessionID, "seq": *seen[len(seen)-1].S})
		var want []string
		for i := len(seen); i < 6; i++ { // what a did not get, replayed
			want = append(want, "D"+strconv.Itoa(i)+" s="+strconv.Itoa(i+1))
		}
		want = append(want, gwire.EventResumed+" s=7")
		require.Equal(t, want, names(b.dispatches()))
		a = b
	case "end":
		h.EndSessions(1)
		got := names(a.dispatches())
		assert.Equal(t, []string{"READY s=1", "D1 s=2", "D2 s=3", "D3 s=4", "D4 s=5", "D5 s=6"}[:len(got)], got,
			"written in order, once, until the end")
		a.mu.Lock()
		assert.Equal(t, gwire.CloseAuthenticationFailed, a.closed)
		a.mu.Unlock()
		return
	}
	// The connection goes on being paced: what follows comes within a pace, once, in order.
	at(46*time.Millisecond + off)
	h.Dispatch(1, "D6", 6)
	at(46*time.Millisecond + off + every)
	got := a.dispatches()
	require.Equal(t, "D6 s=8", names(got)[len(got)-1], "within a pace")
	for i := 1; i < len(got); i++ {
		require.Equal(t, *got[i-1].S+1, *got[i].S, "in order, once: %v", names(got))
	}
}

// busyTraffic pushes other sessions' traffic on h, with no pause (pace.Quiet), so that the hub
// is busy, until the function it returns is called, which returns once the pushes stopped.
func busyTraffic(h *Hub) (stop func()) {
	quit, stopped := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(stopped)
		for {
			h.rate.Add(pace.BusyRate)
			select {
			case <-quit:
				return
			case <-time.After(pace.QuietAfter / 2):
			}
		}
	}()
	return func() {
		close(quit)
		<-stopped
	}
}

// A paced connection's write is made once the hub's pushes pause (pace.Quiet), not at its pace:
// the dispatches pushed last of a burst wait for nothing more to join them. While the pushes go
// on, the write waits for its pace.
func TestPacedWriteOnceThePushesPause(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := New(Config{Tokens: testTokens{}, Users: testUsers{}, busyPace: time.Hour,
			Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
		defer h.Close()
		stop := busyTraffic(h)
		a := servePipe(t, h)
		a.send(gwire.OpIdentify, identifyData("user-1"))
		require.Equal(t, []string{"READY s=1"}, names(a.dispatches()))

		time.Sleep(3 * pace.Window) // busy by now: D1 waits for the pace after READY
		h.Dispatch(1, "D1", 1)
		h.Dispatch(1, "D2", 2)
		time.Sleep(10 * pace.Window)
		require.Equal(t, []string{"READY s=1"}, names(a.dispatches()), "paced while the pushes go on")
		stop()
		time.Sleep(5 * pace.QuietAfter)
		require.Equal(t, []string{"READY s=1", "D1 s=2", "D2 s=3"}, names(a.dispatches()), "written once the pushes paused")

		// Paced again once busy again; a pause writes what waits, once, in order.
		h.rate.Add(100 * pace.BusyRate)
		time.Sleep(pace.Window)
		h.rate.Add(100 * pace.BusyRate) // a window measured: busy
		h.Dispatch(1, "D3", 3)
		require.Equal(t, []string{"READY s=1", "D1 s=2", "D2 s=3"}, names(a.dispatches()), "D3 paced")
		time.Sleep(pace.BusyPace + 2*pace.QuietAfter) // a pause longer than any learnt (pace.Quiet), far shorter than the pace
		require.Equal(t, []string{"READY s=1", "D1 s=2", "D2 s=3", "D3 s=4"}, names(a.dispatches()))
	})
}
