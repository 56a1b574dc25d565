// Package clustertest starts a cluster of the service inside a test process: a fresh PostgreSQL
// database (package pgtest: a test binary using it calls pgtest.Main from its TestMain), a NATS
// server with JetStream (package natstest), and nodes sharing both, each a dev server
// (package servertest) with its own node id.
package clustertest

import (
	"testing"

	"sdkpp/server"
	"sdkpp/server/bus/natstest"
	"sdkpp/server/servertest"
)

// Cluster is a running test cluster.
type Cluster struct {
	// Nodes are the nodes, node id i+1 at index i; each is closed when the test ends.
	Nodes []*servertest.Env
	NATS  *natstest.Server
	// Store is the PostgreSQL URL the nodes share.
	Store string
}

// Start starts n nodes, one after the other (the first seeds the dev data the others find),
// each with opts.
func Start(t testing.TB, n int, opts ...servertest.Option) *Cluster {
	t.Helper()
	return StartEach(t, n, nil, opts...)
}

// StartEach is Start with each node's configuration changed by each (given the node's index)
// after opts, unless each is nil.
func StartEach(t testing.TB, n int, each func(i int, cfg *server.Config), opts ...servertest.Option) *Cluster {
	t.Helper()
	c := &Cluster{NATS: natstest.Start(t), Store: servertest.PostgresDatabase(t)}
	for i := range n {
		c.Nodes = append(c.Nodes, servertest.Start(t, append(append([]servertest.Option(nil), opts...),
			servertest.WithConfig(func(cfg *server.Config) {
				cfg.Store, cfg.NodeID, cfg.Bus = c.Store, i+1, c.NATS.URL()
				if each != nil {
					each(i, cfg)
				}
			}))...))
	}
	return c
}
