package relay

import (
	"net"

	"golang.org/x/net/ipv4"
	"golang.org/x/net/ipv6"

	"sdkpp/wire/voice"
)

// batchConn is the batch API that ipv4.PacketConn and ipv6.PacketConn share (their Message
// types are the same type).
type batchConn interface {
	ReadBatch(ms []ipv4.Message, flags int) (int, error)
	WriteBatch(ms []ipv4.Message, flags int) (int, error)
}

// server reads and writes in batches: recvmmsg and sendmmsg.
type server struct {
	r    *Relay
	pc   batchConn
	in   []ipv4.Message
	out  []ipv4.Message
	bufs [][]byte // out[i].Buffers = bufs[i : i+1]
	box  outbox
}

func newServer(r *Relay) (*server, error) {
	s := &server{r: r}
	if r.Addr().Addr().Unmap().Is4() {
		s.pc = ipv4.NewPacketConn(r.conn)
	} else {
		s.pc = ipv6.NewPacketConn(r.conn)
	}
	s.in = make([]ipv4.Message, r.cfg.Batch)
	for i := range s.in {
		// One byte more than a packet may have: a longer datagram shows as too long.
		s.in[i].Buffers = [][]byte{make([]byte, voice.MaxPacketBytes+1)}
	}
	return s, nil
}

// serve reads batches until the relay closes.
func (s *server) serve() {
	r := s.r
	for {
		n, err := s.pc.ReadBatch(s.in, 0)
		if err != nil {
			if r.isClosed() {
				return
			}
			continue // for example ECONNREFUSED left by an ICMP error of an earlier send
		}
		now := r.cfg.Clock.Now()
		s.box.reset()
		r.mu.Lock()
		for i := range n {
			m := &s.in[i]
			ua, ok := m.Addr.(*net.UDPAddr)
			if !ok {
				continue
			}
			r.handleLocked(m.Buffers[0][:m.N], unmap(ua.AddrPort()), ua, now, &s.box)
		}
		r.mu.Unlock()
		s.send()
	}
}

// send writes the outbox in as few sendmmsg calls as it takes. A message the kernel refuses
// is counted and skipped.
func (s *server) send() {
	pkts := s.box.pkts
	if len(pkts) == 0 {
		return
	}
	if cap(s.out) < len(pkts) {
		s.out = make([]ipv4.Message, len(pkts))
		s.bufs = make([][]byte, len(pkts))
	}
	out, bufs := s.out[:len(pkts)], s.bufs[:len(pkts)]
	for i, p := range pkts {
		bufs[i] = p
		out[i].Buffers = bufs[i : i+1]
		out[i].Addr = s.box.addrs[i]
	}
	for len(out) > 0 {
		n, err := s.pc.WriteBatch(out, 0)
		if err != nil && s.r.isClosed() {
			break
		}
		if n <= 0 { // the first message failed
			s.r.stats.sendErrors.Add(1)
			n = 1
		}
		out = out[n:]
	}
	clear(s.bufs[:len(pkts)])
	for i := range pkts {
		s.out[i].Addr = nil
		s.out[i].Buffers = nil
	}
}
