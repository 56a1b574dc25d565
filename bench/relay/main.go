// Command relay measures the voice relay's forwarding (package server/relay) in packets per
// second per core against a minimal C forwarder built on recvmmsg/sendmmsg (bench/relay_fwd.c),
// in the same run, on loopback, with the same traffic: a 4-party call whose participants all
// send 100-byte media packets as fast as one generator can, each packet going to the 3 others.
//
// Each forwarder runs in its own child process (the relay as this program with -serve); the
// figure is the packets the participants received during the measured window divided by the
// CPU time the forwarder's process used in it (/proc/<pid>/stat), so the load generator's own
// CPU does not count. The two take turns; the best turn of each is printed (the machine is
// shared). The relay runs with its rate limit raised out of the way (the check still runs).
// Run by bench/run.sh (make bench) with -fwd pointing at the built forwarder.
package main

import (
	"bufio"
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"net"
	"net/netip"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"golang.org/x/net/ipv4"

	"sdkpp/server/relay"
	"sdkpp/wire/voice"
)

const (
	parties     = 4
	payloadSize = 100
	batch       = 32
)

func main() {
	serve := flag.Bool("serve", false, "internal: run the relay as a child process")
	fwd := flag.String("fwd", "", "the built C forwarder (bench/relay_fwd.c)")
	turns := flag.Int("turns", 3, "turns of each forwarder")
	window := flag.Duration("window", 2*time.Second, "measured time of one turn")
	flag.Parse()
	if *serve {
		if err := serveRelay(); err != nil {
			fmt.Fprintln(os.Stderr, "relay child:", err)
			os.Exit(1)
		}
		return
	}
	if *fwd == "" {
		fmt.Fprintln(os.Stderr, "bench/relay: -fwd is required")
		os.Exit(2)
	}
	self, err := os.Executable()
	if err != nil {
		fmt.Fprintln(os.Stderr, "bench/relay:", err)
		os.Exit(1)
	}
	var best [2]result
	for range *turns {
		for k, cmd := range [][]string{{*fwd}, {self, "-serve"}} {
			r, err := turn(cmd, k == 1, *window)
			if err != nil {
				fmt.Fprintln(os.Stderr, "bench/relay:", err)
				os.Exit(1)
			}
			if r.perCore > best[k].perCore {
				best[k] = r
			}
		}
	}
	c, g := best[0], best[1]
	fmt.Printf("(d) Voice relay forwarding on loopback: a %d-party call, %d-byte media packets, each to the %d others; best of %d turns\n",
		parties, payloadSize, parties-1, *turns)
	fmt.Printf("  anchor: minimal C forwarder (recvmmsg/sendmmsg, no parsing)  %10.0f packets/s per core  (%8.0f packets/s, %.2f cores)\n",
		c.perCore, c.rate, c.cores)
	fmt.Printf("  sdkpp: server/relay (batched, tokens, limits, counters)      %10.0f packets/s per core  (%8.0f packets/s, %.2f cores)  ratio %.2fx (target >= 0.5x)\n",
		g.perCore, g.rate, g.cores, g.perCore/c.perCore)
}

// result is one turn's figures.
type result struct {
	perCore float64 // packets delivered per CPU second of the forwarder
	rate    float64 // packets delivered per wall second
	cores   float64 // the forwarder's CPU seconds per wall second
}

// turn starts a forwarder, drives the call through it, and measures.
func turn(argv []string, sdkpp bool, window time.Duration) (result, error) {
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Stderr = os.Stderr
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return result{}, err
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return result{}, err
	}
	if err := cmd.Start(); err != nil {
		return result{}, fmt.Errorf("start %s: %w", argv[0], err)
	}
	defer func() {
		stdin.Close()
		_ = cmd.Process.Signal(os.Interrupt)
		_ = cmd.Process.Kill() // the C forwarder has no shutdown; the relay child has exited by now or is cut
		_ = cmd.Wait()
	}()
	lines := bufio.NewScanner(stdout)
	if !lines.Scan() {
		return result{}, errors.New("no address from the forwarder")
	}
	to, err := netip.ParseAddrPort(strings.TrimSpace(lines.Text()))
	if err != nil {
		return result{}, err
	}
	var ps []*party
	for i := range parties {
		p, err := newParty(to)
		if err != nil {
			return result{}, err
		}
		defer p.conn.Close()
		if sdkpp {
			if !lines.Scan() {
				return result{}, errors.New("no flow from the relay")
			}
			if err := p.bindFlow(lines.Text()); err != nil {
				return result{}, err
			}
		} else {
			p.ssrc = uint32(i + 1)
			if err := p.write(1); err != nil { // the forwarder learns the peer from it
				return result{}, err
			}
		}
		ps = append(ps, p)
	}
	var received atomic.Uint64
	var wg sync.WaitGroup
	stop := make(chan struct{})
	for _, p := range ps {
		wg.Add(1)
		go func() { // owned by turn: stopped by closing the socket, waited for below
			defer wg.Done()
			p.drain(&received)
		}()
	}
	wg.Add(1)
	go func() { // the generator, owned by turn
		defer wg.Done()
		for i := 0; ; i++ {
			select {
			case <-stop:
				return
			default:
			}
			_ = ps[i%parties].write(batch)
		}
	}()
	time.Sleep(300 * time.Millisecond) // warm up
	cpu0, got0, t0 := cpuSeconds(cmd.Process.Pid), received.Load(), time.Now()
	time.Sleep(window)
	cpu1, got1, t1 := cpuSeconds(cmd.Process.Pid), received.Load(), time.Now()
	close(stop)
	for _, p := range ps {
		p.conn.Close()
	}
	wg.Wait()
	if math.IsNaN(cpu0) || math.IsNaN(cpu1) || cpu1 <= cpu0 {
		return result{}, errors.New("no CPU time measured for the forwarder")
	}
	n := float64(got1 - got0)
	wall := t1.Sub(t0).Seconds()
	return result{perCore: n / (cpu1 - cpu0), rate: n / wall, cores: (cpu1 - cpu0) / wall}, nil
}

// party is one participant's socket.
type party struct {
	conn *net.UDPConn
	pc   *ipv4.PacketConn
	to   *net.UDPAddr
	ssrc uint32
	seq  uint32
	msgs []ipv4.Message
	pkts [][]byte
}

func newParty(to netip.AddrPort) (*party, error) {
	c, err := net.ListenUDP("udp4", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
	if err != nil {
		return nil, err
	}
	_ = c.SetReadBuffer(4 << 20)
	_ = c.SetWriteBuffer(4 << 20)
	return &party{conn: c, pc: ipv4.NewPacketConn(c), to: net.UDPAddrFromAddrPort(to)}, nil
}

// bindFlow binds the relay flow given as "<ssrc> <base64 token>" and waits for the reply.
func (p *party) bindFlow(line string) error {
	ssrc, tok, ok := strings.Cut(strings.TrimSpace(line), " ")
	v, err := strconv.ParseUint(ssrc, 10, 32)
	var t voice.Token
	if !ok || err != nil || t.UnmarshalText([]byte(tok)) != nil {
		return fmt.Errorf("bad flow line %q", line)
	}
	p.ssrc = uint32(v)
	if _, err := p.conn.WriteToUDP(voice.AppendPacket(nil, voice.Header{Type: voice.TypeBind, SSRC: p.ssrc}, t[:]), p.to); err != nil {
		return err
	}
	_ = p.conn.SetReadDeadline(time.Now().Add(5 * time.Second))
	buf := make([]byte, 2048)
	if _, err := p.conn.Read(buf); err != nil {
		return fmt.Errorf("bind reply: %w", err)
	}
	return p.conn.SetReadDeadline(time.Time{})
}

// write sends n media packets in one batch.
func (p *party) write(n int) error {
	if p.msgs == nil {
		p.msgs = make([]ipv4.Message, batch)
		p.pkts = make([][]byte, batch)
		payload := make([]byte, payloadSize)
		for i := range p.msgs {
			p.pkts[i] = voice.AppendPacket(nil, voice.Header{Type: voice.TypeMedia, SSRC: p.ssrc}, payload)
			p.msgs[i] = ipv4.Message{Buffers: [][]byte{p.pkts[i]}, Addr: p.to}
		}
	}
	for i := range n {
		p.seq++
		voice.Header{Type: voice.TypeMedia, SSRC: p.ssrc, Sequence: p.seq, Timestamp: p.seq * 960}.Put(p.pkts[i])
	}
	for msgs := p.msgs[:n]; len(msgs) > 0; {
		k, err := p.pc.WriteBatch(msgs, 0)
		if err != nil {
			return err
		}
		msgs = msgs[k:]
	}
	return nil
}

// drain counts what the socket receives until it is closed.
func (p *party) drain(received *atomic.Uint64) {
	msgs := make([]ipv4.Message, batch)
	for i := range msgs {
		msgs[i].Buffers = [][]byte{make([]byte, 2048)}
	}
	for {
		n, err := p.pc.ReadBatch(msgs, 0)
		if err != nil {
			return
		}
		received.Add(uint64(n))
	}
}

// cpuSeconds is the CPU time (user and system) a process has used, from /proc/<pid>/stat; NaN
// when it cannot be read.
func cpuSeconds(pid int) float64 {
	raw, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return math.NaN()
	}
	s := string(raw)
	fields := strings.Fields(s[strings.LastIndexByte(s, ')')+1:])
	if len(fields) < 13 {
		return math.NaN()
	}
	utime, err1 := strconv.ParseFloat(fields[11], 64)
	stime, err2 := strconv.ParseFloat(fields[12], 64)
	if err1 != nil || err2 != nil {
		return math.NaN()
	}
	return (utime + stime) / 100 // USER_HZ, 100 on Linux
}

// serveRelay is the child: a relay with one call of parties flows, printed as its address and
// then "<ssrc> <token>" lines; it serves until its stdin closes.
func serveRelay() error {
	r, err := relay.New(relay.Config{Rate: math.MaxInt32, Burst: math.MaxInt32, FlowTimeout: time.Hour})
	if err != nil {
		return err
	}
	defer r.Close()
	out := bufio.NewWriter(os.Stdout)
	fmt.Fprintln(out, r.Addr())
	for range parties {
		f, err := r.Open(1)
		if err != nil {
			return err
		}
		tok, _ := f.Token.MarshalText()
		fmt.Fprintf(out, "%d %s\n", f.SSRC, tok)
	}
	if err := out.Flush(); err != nil {
		return err
	}
	_, _ = io.Copy(io.Discard, os.Stdin)
	return nil
}
