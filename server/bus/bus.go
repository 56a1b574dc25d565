// Package bus connects the nodes of a cluster through NATS JetStream: every node publishes the
// gateway's dispatches into one stream, and every node reads the whole stream, in the stream's
// order, and delivers each dispatch to the sessions connected to it. A node reads it live from
// the copy the stream republishes of each message it stores (LiveSubject), and from the stream
// itself what it missed there.
//
// One stream gives one total order. A publish returns once the server stored the message and
// gave it its sequence number, so a node that publishes two events one after the other (or two
// nodes that take turns under a cluster-wide lock, see package store's OrderLock) has them read
// back by every node in that order. The stream keeps messages for Options.Retention, which
// covers the gateway's resume window: a session that resumes on another node has the events it
// missed read again from the stream (package gateway).
package bus

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"sdkpp/server/internal/bustrace"
)

// Stream and Subject name the JetStream stream of the dispatches and its one subject.
const (
	Stream  = "SDKPP_EVENTS"
	Subject = "sdkpp.events"
)

// DefaultRetention is how long the stream keeps a message unless Options say otherwise: past the
// gateway's resume window (2 minutes) with room to spare.
const DefaultRetention = 10 * time.Minute

// Options configure Connect.
type Options struct {
	// Node is this node's id (its NATS connection is named for it).
	Node int
	// Retention is how long the stream keeps messages; default DefaultRetention.
	Retention time.Duration
	// Memory keeps the stream in the NATS server's memory rather than on its disk (tests).
	Memory bool
	// Logger, default slog.Default().
	Logger *slog.Logger
}

// Bus is a node's connection to the cluster's bus. It is safe for concurrent use.
type Bus struct {
	nc     *nats.Conn
	js     jetstream.JetStream
	stream jetstream.Stream
	node   int
	memory bool // Options.Memory
	log    *slog.Logger
	msgID  atomic.Uint64 // publishes of this connection, for the stream's duplicate window
	prefix string        // node and start time: message ids unique across restarts

	ackers chan *acker // idle ones (publish.go)

	mu      sync.Mutex
	readers []*reader // Subscribe's
}

// Connect connects to the NATS server at rawURL (nats://[user:password@]host:port, or several
// separated by commas) and makes sure the stream exists. Credentials in the URL never reach a
// log line or an error.
func Connect(ctx context.Context, rawURL string, o Options) (*Bus, error) {
	if o.Retention <= 0 {
		o.Retention = DefaultRetention
	}
	if o.Logger == nil {
		o.Logger = slog.Default()
	}
	log := o.Logger
	var self atomic.Pointer[Bus] // set once connected: reconnections reach its readers
	nc, err := nats.Connect(rawURL,
		nats.Name("sdkpp-node-"+strconv.Itoa(o.Node)),
		nats.MaxReconnects(-1),
		nats.ReconnectWait(250*time.Millisecond),
		nats.DisconnectErrHandler(func(_ *nats.Conn, err error) {
			log.Warn("bus disconnected", "err", err)
		}),
		nats.ReconnectHandler(func(c *nats.Conn) {
			log.Info("bus reconnected", "server", Redact(c.ConnectedUrl()))
			if b := self.Load(); b != nil {
				b.reconnected()
			}
		}),
	)
	if err != nil {
		return nil, fmt.Errorf("bus: connect to %s: %w", Redact(rawURL), redactErr(err, rawURL))
	}
	js, err := jetstream.New(nc)
	if err != nil {
		nc.Close()
		return nil, fmt.Errorf("bus: jetstream: %w", err)
	}
	storage := jetstream.FileStorage
	if o.Memory {
		storage = jetstream.MemoryStorage
	}
	st, err := js.CreateOrUpdateStream(ctx, jetstream.StreamConfig{
		Name: Stream, Subjects: []string{Subject}, Storage: storage, MaxAge: o.Retention,
		// The duplicate window may not be longer than the messages live.
		Retention: jetstream.LimitsPolicy, Duplicates: min(time.Minute, o.Retention),
		RePublish: &jetstream.RePublish{Source: Subject, Destination: LiveSubject},
	})
	if err != nil {
		nc.Close()
		return nil, fmt.Errorf("bus: stream %s: %w", Stream, err)
	}
	b := &Bus{nc: nc, js: js, stream: st, node: o.Node, memory: o.Memory, log: log, ackers: make(chan *acker, idleAckers),
		prefix: strconv.Itoa(o.Node) + "-" + strconv.FormatInt(time.Now().UnixNano(), 36) + "-"}
	self.Store(b)
	return b, nil
}

// Publish appends data to the stream and returns its sequence number once the server stored
// it. A publish retried by the client library is stored once (the stream's duplicate window).
func (b *Bus) Publish(ctx context.Context, data []byte) (uint64, error) {
	id := b.prefix + strconv.FormatUint(b.msgID.Add(1), 36)
	start := bustrace.Default.Now()
	seq, err := b.publish(ctx, data, id)
	if err != nil {
		return 0, fmt.Errorf("bus: publish: %w", err)
	}
	bustrace.Default.Record(bustrace.Publish, seq, start)
	return seq, nil
}

// PublishID is Publish with the message id given: the stream stores a message once per id
// within its duplicate window (a minute, or the retention when shorter), and returns the first
// one's sequence number for the others.
func (b *Bus) PublishID(ctx context.Context, data []byte, id string) (uint64, error) {
	start := bustrace.Default.Now()
	seq, err := b.publish(ctx, data, id)
	if err != nil {
		return 0, fmt.Errorf("bus: publish %s: %w", id, err)
	}
	bustrace.Default.Record(bustrace.Publish, seq, start)
	return seq, nil
}

// Last returns the sequence number of the newest message of the stream (0 when it has none,
// also when every message it had has expired: a subscriber has nothing to read up to).
func (b *Bus) Last(ctx context.Context) (uint64, error) {
	info, err := b.stream.Info(ctx)
	if err != nil {
		return 0, fmt.Errorf("bus: stream info: %w", err)
	}
	if info.State.Msgs == 0 {
		return 0, nil
	}
	return info.State.LastSeq, nil
}

// Handler receives one message of the stream: its sequence number and its data. It runs on the
// subscription's goroutine, one message after the other in stream order.
type Handler func(seq uint64, data []byte)

// Read calls handle for each message with a sequence number from first to last (inclusive)
// that the stream still holds, in order, and returns ErrGone when the stream no longer holds
// first (it expired: the caller cannot have every message).
func (b *Bus) Read(ctx context.Context, first, last uint64, handle Handler) error {
	if first > last {
		return nil
	}
	info, err := b.stream.Info(ctx)
	if err != nil {
		return fmt.Errorf("bus: stream info: %w", err)
	}
	if info.State.FirstSeq > first {
		return ErrGone
	}
	return b.readFrom(ctx, first, last, handle)
}

// readFrom calls handle for each message the stream holds from sequence number first to last
// (inclusive), in order.
func (b *Bus) readFrom(ctx context.Context, first, last uint64, handle Handler) error {
	cons, err := b.js.OrderedConsumer(ctx, Stream, jetstream.OrderedConsumerConfig{
		DeliverPolicy: jetstream.DeliverByStartSequencePolicy, OptStartSeq: first})
	if err != nil {
		return fmt.Errorf("bus: consumer: %w", err)
	}
	for seq := first; seq <= last; {
		batch, err := cons.Fetch(int(min(last-seq+1, 256)), jetstream.FetchMaxWait(5*time.Second))
		if err != nil {
			return fmt.Errorf("bus: read: %w", err)
		}
		n := 0
		for m := range batch.Messages() {
			md, err := m.Metadata()
			if err != nil {
				return fmt.Errorf("bus: read: %w", err)
			}
			n++
			if md.Sequence.Stream > last {
				return nil
			}
			handle(md.Sequence.Stream, m.Data())
			seq = md.Sequence.Stream + 1
		}
		if err := batch.Error(); err != nil {
			return fmt.Errorf("bus: read: %w", err)
		}
		if n == 0 {
			return fmt.Errorf("bus: read: no message at %d of %d", seq, last)
		}
	}
	return nil
}

// ErrGone is Read's error when the stream no longer holds the first message asked for.
var ErrGone = errors.New("bus: the stream no longer holds those messages")

// Check tells whether the bus is usable now: connected, and the stream answers.
func (b *Bus) Check(ctx context.Context) error {
	if s := b.nc.Status(); s != nats.CONNECTED {
		return fmt.Errorf("bus: %s", s)
	}
	if _, err := b.stream.Info(ctx); err != nil {
		return fmt.Errorf("bus: stream: %w", err)
	}
	return nil
}

// Close stops the subscriptions and closes the connection.
func (b *Bus) Close() {
	b.mu.Lock()
	readers := b.readers
	b.readers = nil
	b.mu.Unlock()
	for _, r := range readers {
		r.close()
	}
	b.nc.Close()
}

// Redact returns a NATS URL list without the passwords and tokens it carries.
func Redact(raw string) string {
	u, err := url.Parse(raw)
	if err != nil || u.User == nil {
		if err != nil {
			return "nats://(unparsable)"
		}
		return raw
	}
	u.User = url.User("REDACTED")
	return u.String()
}

// redactErr is err with the URL's password, if any, replaced.
func redactErr(err error, raw string) error {
	u, perr := url.Parse(raw)
	if perr != nil || u.User == nil {
		return err
	}
	pw, ok := u.User.Password()
	if !ok {
		pw = u.User.Username() // a token
	}
	if pw == "" {
		return err
	}
	return errors.New(strings.ReplaceAll(err.Error(), pw, "REDACTED"))
}
