package servertest

import (
	"io"
	"math/rand/v2"
	"net"
	"strconv"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"
)

// Proxy forwards TCP connections to a target address and can cut them all at once, as a flaky
// network would. Tests put it between the SDK and the service:
//
//	p := servertest.NewProxy(t, addr)   // forwards to addr
//	url := "ws://" + p.Addr() + "/gateway"
//	p.Cut()                             // every connection through it drops
//
// It is closed when the test ends.
type Proxy struct {
	ln     net.Listener
	wg     sync.WaitGroup // the accept loop and two copiers per connection
	mu     sync.Mutex
	target string
	conns  map[net.Conn]struct{}
	cuts   int
}

// NewProxy listens on a loopback port and forwards each connection to target.
func NewProxy(t testing.TB, target string) *Proxy {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err, "servertest: proxy")
	p := &Proxy{ln: ln, target: target, conns: map[net.Conn]struct{}{}}
	p.wg.Add(1)
	go p.accept()
	t.Cleanup(p.Close)
	return p
}

// Addr is the proxy's host:port.
func (p *Proxy) Addr() string { return p.ln.Addr().String() }

// SetTarget forwards new connections to target.
func (p *Proxy) SetTarget(target string) {
	p.mu.Lock()
	p.target = target
	p.mu.Unlock()
}

// Cuts is how many times Cut closed at least one connection.
func (p *Proxy) Cuts() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.cuts
}

func (p *Proxy) accept() {
	defer p.wg.Done()
	for {
		c, err := p.ln.Accept()
		if err != nil {
			return
		}
		p.mu.Lock()
		target := p.target
		p.mu.Unlock()
		up, err := net.Dial("tcp", target)
		if err != nil {
			c.Close()
			continue
		}
		p.mu.Lock()
		p.conns[c], p.conns[up] = struct{}{}, struct{}{}
		p.mu.Unlock()
		p.wg.Add(2)
		go p.pipe(up, c)
		go p.pipe(c, up)
	}
}

// pipe copies from src to dst until either side ends, then closes both.
func (p *Proxy) pipe(dst, src net.Conn) {
	defer p.wg.Done()
	io.Copy(dst, src)
	dst.Close()
	src.Close()
	p.mu.Lock()
	delete(p.conns, dst)
	delete(p.conns, src)
	p.mu.Unlock()
}

// Cut closes every connection through the proxy; new ones are accepted as before.
func (p *Proxy) Cut() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if len(p.conns) > 0 {
		p.cuts++
	}
	for c := range p.conns {
		c.Close()
		delete(p.conns, c)
	}
}

// Close stops accepting, cuts every connection and waits for the proxy's goroutines.
func (p *Proxy) Close() {
	p.ln.Close()
	p.Cut()
	p.wg.Wait()
}

// FreeAddr returns a loopback host:port that was free a moment ago, for a service that must
// listen on a known address (behind a Proxy, across a restart, or in a process of its own).
//
// The port is below the kernel's ephemeral range (32768 and up on Linux, 49152 on Windows), as
// pg.sh run chooses its own: a port from the range, free when chosen, may become the local end
// of any connection made on the machine before the service listens (during a store's
// migrations, a process's start), and then the service cannot listen. One process never hands
// out a port twice.
func FreeAddr(t testing.TB) string {
	t.Helper()
	for range 100 {
		port := freeLow + rand.IntN(freeHigh-freeLow)
		if _, taken := handedOut.LoadOrStore(port, true); taken {
			continue
		}
		ln, err := net.Listen("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(port)))
		if err != nil { // in use: another process's service
			continue
		}
		addr := ln.Addr().String()
		require.NoError(t, ln.Close(), "servertest")
		return addr
	}
	require.FailNow(t, "servertest: no free port below the ephemeral range")
	return ""
}

// The ports FreeAddr chooses from, and those it has handed out.
const freeLow, freeHigh = 12000, 20000 // pg.sh run takes from 20000 up

var handedOut sync.Map
