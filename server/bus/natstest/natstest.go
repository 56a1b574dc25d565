// Package natstest runs a NATS server with JetStream inside a test process, on a free loopback
// port, its storage in the test's temporary directory.
package natstest

import (
	"net"
	"testing"
	"time"

	natsserver "github.com/nats-io/nats-server/v2/server"
)

// Server is a NATS server a test started.
type Server struct {
	s   *natsserver.Server
	dir string
	// port is kept so that Restart listens where clients reconnect.
	port int
}

// Start starts a NATS server with JetStream for t, shut down when t ends.
func Start(t testing.TB) *Server {
	t.Helper()
	srv := &Server{dir: t.TempDir(), port: -1}
	srv.start(t)
	t.Cleanup(srv.Shutdown)
	return srv
}

func (srv *Server) start(t testing.TB) {
	t.Helper()
	s, err := natsserver.NewServer(&natsserver.Options{Host: "127.0.0.1", Port: srv.port, JetStream: true,
		StoreDir: srv.dir, NoLog: true, NoSigs: true})
	if err != nil {
		t.Fatalf("natstest: %v", err)
	}
	s.Start()
	if !s.ReadyForConnections(10 * time.Second) {
		s.Shutdown()
		t.Fatal("natstest: the server did not start")
	}
	srv.s = s
	srv.port = s.Addr().(*net.TCPAddr).Port
}

// URL is the server's client URL, nats://127.0.0.1:PORT.
func (srv *Server) URL() string { return srv.s.ClientURL() }

// Shutdown stops the server.
func (srv *Server) Shutdown() {
	srv.s.Shutdown()
	srv.s.WaitForShutdown()
}

// Restart stops the server and starts it again on the same port and storage: clients
// reconnect, and a stream on file storage keeps its messages.
func (srv *Server) Restart(t testing.TB) {
	t.Helper()
	srv.Shutdown()
	srv.start(t)
}
