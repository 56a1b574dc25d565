//go:build !linux

package relay

import "sdkpp/wire/voice"

// server reads and writes one packet per system call.
type server struct {
	r   *Relay
	buf []byte
	box outbox
}

func newServer(r *Relay) (*server, error) {
	return &server{r: r, buf: make([]byte, voice.MaxPacketBytes+1)}, nil
}

// serve reads packets until the relay closes.
func (s *server) serve() {
	r := s.r
	for {
		n, from, err := r.conn.ReadFromUDPAddrPort(s.buf)
		if err != nil {
			if r.isClosed() {
				return
			}
			continue // for example a connection reset left by an ICMP error of an earlier send
		}
		now := r.cfg.Clock.Now()
		s.box.reset()
		r.mu.Lock()
		r.handleLocked(s.buf[:n], unmap(from), nil, now, &s.box)
		r.mu.Unlock()
		for i, p := range s.box.pkts {
			if _, err := r.conn.WriteToUDPAddrPort(p, s.box.aps[i]); err != nil {
				r.stats.sendErrors.Add(1)
			}
		}
	}
}
