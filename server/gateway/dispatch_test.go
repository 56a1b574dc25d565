package gateway

import (
	"encoding/json"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"sdkpp/server/gateway/internal/pace"
	"sdkpp/wire"
)

// Dispatches leave as frames the gateway writes itself (ws.WriteHeaderBuffer; package wsframe): every length encoding
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
		require.NoError(t, json.Unmarshal(p.D, &got))
		require.Equal(t, s, got["s"], "a payload of %d bytes", n)
	}
	c.heartbeat()
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
	want, err := json.Marshal(m)
	require.NoError(t, err)
	assert.Equal(t, string(want), string(p.D))
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
		require.Equal(t, strconv.Itoa(i), string(p.D), "dispatch %d", i)
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

// Under a burst that makes the hub busy, writes are paced and every dispatch still arrives once,
// in order; once quiet again, a dispatch leaves at once.
func TestPacedWritesKeepOrder(t *testing.T) {
	e := newEnv(t, func(c *Config) { c.ReplayLimit = 100000 })
	c := e.dial()
	c.identify("user-1")
	// Other sessions' traffic keeps the hub busy, however fast this machine dispatches (a
	// dispatch to a quiet connection is written at once, which takes a while under -race).
	quiet := e.keepBusy()
	const n = 20000
	for i := range n {
		e.hub.Dispatch(1, "TEST_EVENT", i)
	}
	quiet()
	for i := range n {
		p := c.expectDispatch("TEST_EVENT", int64(i+2))
		var got int
		if json.Unmarshal(p.D, &got) != nil || got != i {
			t.Fatalf("dispatch %d carried %s", i, p.D)
		}
	}
	time.Sleep(3 * pace.Window)
	start := time.Now()
	e.hub.Dispatch(1, "TEST_EVENT", -1)
	c.expectDispatch("TEST_EVENT", n+2)
	if d := time.Since(start); d >= pace.BusyPace {
		t.Logf("a quiet dispatch took %v", d) // timing on a shared machine: reported, not failed
	}
}

// keepBusy keeps the hub busy (pace.Meter.Busy), as other sessions' traffic would, from when it
// returns until quiet is called.
func (e *env) keepBusy() (quiet func()) {
	stop, stopped := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(stopped)
		for {
			select {
			case <-stop:
				return
			case <-time.After(time.Millisecond):
				e.hub.rate.Add(pace.BusyRate / 100)
			}
		}
	}()
	for !e.hub.rate.Busy() {
		time.Sleep(time.Millisecond)
	}
	return func() { close(stop); <-stopped }
}
