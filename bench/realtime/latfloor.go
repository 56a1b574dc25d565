package main

import (
	"bufio"
	"bytes"
	"cmp"
	"context"
	"database/sql"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"sdkpp/internal/osyield"
)

// The latency floors of (d): what the required parts of a lobby message's way cost, written
// plainly, each taking turns with sdkpp's rounds of the same case, so that (d)'s latencies (and
// issue 23's 2x bound between them) can be read against what the parts alone allow:
//
//   - single-node floor (beside one node on SQLite): one child process takes the HTTP send
//     (POST floorPostPath, the content as the body), commits one row to SQLite (floor.go's
//     lobby_messages, with the store's settings: WAL and synchronous=NORMAL in a data directory,
//     or in memory when the service's store is) and writes the message's dispatch (floor.go's
//     frame) to the receiver's WebSocket, then answers;
//   - cluster floor (beside three nodes): process A takes the HTTP send, commits one row to
//     PostgreSQL (a prepared INSERT on a held connection, autocommit: one round trip), publishes
//     it to a JetStream stream configured as sdkpp's bus stream (file storage, a message id, the
//     same retention and duplicate window) in the case's NATS process and answers once the
//     publish is acknowledged; process B reads the stream with an ordered consumer and writes
//     each message's dispatch to the receiver's WebSocket;
//   - the same with every node reading the stream, as each of sdkpp's three nodes does (server/bus):
//     on a stream of its own, which A reads too, and a third process C that has no receiver.
//
// (a) has a floor too (-floor): the single-node floor's process on the run's store (with
// PostgreSQL, a database of its own on the run's server), which takes the sends over a
// WebSocket (POST's HTTP is not what sdkpp's SDK sends with), writes each message's dispatch to
// the receiver's WebSocket, yields its CPU to the receiver, then commits the row, then answers
// the sender (latFloor.sender): the order of sdkpp's send, whose members get a message before
// its commit and whose sender's answer waits for it. Its rounds take turns with (a)'s, message
// by message; the commit of each lands on the machine while the receiver reads, as sdkpp's does.
//
// The receiver is a bare WebSocket client (floorws.go) in this program; a round's clock stops
// when it has read the frame. The processes note their times of each send (the HTTP answer's
// header, a frame after the dispatch), so that a floor's rounds are cut into the steps of sdkpp's
// timeline (sendtrace.go). Beside the cluster floors a side measures what one hop costs between
// two processes that wait for it (the hop children, idle between rounds as the nodes,
// PostgreSQL and NATS are): after each of sdkpp's rounds this program wakes process X
// (untimed), X sends 8 bytes (its clock) to process Y over loopback TCP, Y answers with the time
// it read them; the hop is the one way, and the round trip is noted beside it.

const (
	floorPostPath   = "/floor/post"    // the HTTP send of the latency floors
	floorWSSendPath = "/floor/ws-send" // the WebSocket send of (a)'s floor (latFloor.sender)
	floorStream     = "FLOOR_EVENTS"
	floorSubject    = "floor.events"
)

// latFloor is a latency floor's process: the single node (store, no bus), cluster process A
// (store and bus, publishing) or cluster process B (bus only, reading).
type latFloor struct {
	db      *sql.DB
	insert  *sql.Stmt
	js      jetstream.JetStream // A: publishes; nil elsewhere
	stream  string              // the stream's name and its subject
	subject string
	nc      *nats.Conn
	cc      jetstream.ConsumeContext // B's reading of the stream

	mu     sync.Mutex // serializes sends (their ids and commits) and the receivers' changes and writes
	lastID uint64
	recv   []net.Conn
	frame  []byte // scratch for a dispatch frame
}

// floorStore opens the store of a latency floor: "memory" (SQLite in memory), "sqlite:DIR"
// (SQLite in DIR, WAL, synchronous=NORMAL) or a PostgreSQL URL; it makes floor.go's table and
// prepares the INSERT of one row, on one connection held open.
func floorStore(store string) (*sql.DB, *sql.Stmt, error) {
	driver, dsn, schema, q := "sqlite", ":memory:", floorSchema,
		`INSERT INTO lobby_messages (id, lobby_id, app_id, author_id, content, created_at, nonce) VALUES (?,?,?,?,?,?,?)`
	switch {
	case store == "memory":
	case strings.HasPrefix(store, "sqlite:"):
		p := filepath.Join(strings.TrimPrefix(store, "sqlite:"), "floor.db")
		dsn = "file:" + (&url.URL{Path: p}).EscapedPath() +
			"?_pragma=busy_timeout(5000)&_pragma=journal_mode(WAL)&_pragma=synchronous(NORMAL)"
	default: // PostgreSQL: the same table with its types
		driver, dsn = "pgx", store
		schema = strings.NewReplacer("INTEGER PRIMARY KEY", "BIGINT PRIMARY KEY", "INTEGER", "BIGINT").Replace(floorSchema)
		q = `INSERT INTO lobby_messages (id, lobby_id, app_id, author_id, content, created_at, nonce) VALUES ($1,$2,$3,$4,$5,$6,$7)`
	}
	db, err := sql.Open(driver, dsn)
	if err != nil {
		return nil, nil, fmt.Errorf("floor store: %w", err)
	}
	db.SetMaxOpenConns(1) // one connection, held open with its prepared statement
	db.SetMaxIdleConns(1)
	if _, err := db.Exec(schema); err != nil {
		db.Close()
		return nil, nil, fmt.Errorf("floor store: schema: %w", err)
	}
	st, err := db.Prepare(q)
	if err != nil {
		db.Close()
		return nil, nil, fmt.Errorf("floor store: prepare: %w", err)
	}
	return db, st, nil
}

// floorBus connects to the NATS server at natsURL and makes the floor's stream, configured as
// sdkpp's (server/bus: file storage, limits retention of 10 minutes, a duplicate window of one).
func floorBus(ctx context.Context, natsURL, stream, subject string) (*nats.Conn, jetstream.JetStream, error) {
	nc, err := nats.Connect(natsURL, nats.Name("floor"))
	if err != nil {
		return nil, nil, fmt.Errorf("floor bus: %w", err)
	}
	js, err := jetstream.New(nc)
	if err == nil {
		_, err = js.CreateOrUpdateStream(ctx, jetstream.StreamConfig{Name: stream, Subjects: []string{subject},
			Storage: jetstream.FileStorage, MaxAge: 10 * time.Minute, Retention: jetstream.LimitsPolicy, Duplicates: time.Minute})
	}
	if err != nil {
		nc.Close()
		return nil, nil, fmt.Errorf("floor bus: stream: %w", err)
	}
	return nc, js, nil
}

// serveLatFloor runs a latency floor's process on a loopback port: with a store (see
// floorStore) it takes sends, committing each; with a bus too (a NATS URL) it publishes them
// (cluster process A); with a bus alone it reads the stream (process B); with a store alone it
// writes each to its receivers (the single node). With everyNode, the floor is that of a cluster
// whose every node reads the stream, as sdkpp's do: its own stream, which process A reads too.
// It returns its address and its stop.
func serveLatFloor(store, bus string, everyNode bool) (addr string, stop func(), err error) {
	f := &latFloor{stream: floorStream, subject: floorSubject}
	if everyNode {
		f.stream, f.subject = floorStream+"_EVERY", floorSubject+".every"
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	closeAll := func() {
		if f.cc != nil {
			f.cc.Stop()
			<-f.cc.Closed()
		}
		if f.nc != nil {
			f.nc.Close()
		}
		if f.db != nil {
			f.db.Close()
		}
	}
	if store != "" {
		if f.db, f.insert, err = floorStore(store); err != nil {
			return "", nil, err
		}
	}
	if bus != "" {
		var js jetstream.JetStream
		if f.nc, js, err = floorBus(ctx, bus, f.stream, f.subject); err != nil {
			closeAll()
			return "", nil, err
		}
		if store != "" {
			f.js = js
		}
		if store == "" || everyNode {
			if err = f.consume(ctx, js); err != nil {
				closeAll()
				return "", nil, err
			}
		}
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		closeAll()
		return "", nil, err
	}
	mux := http.NewServeMux()
	mux.HandleFunc(floorMemberPath, f.member)
	if store != "" {
		mux.HandleFunc(floorPostPath, f.post)
	}
	if store != "" && bus == "" {
		mux.HandleFunc(floorWSSendPath, f.sender)
	}
	hs := &http.Server{Handler: mux}
	served := make(chan struct{})
	go func() { // owned by stop, which waits for it
		defer close(served)
		hs.Serve(ln)
	}()
	var once sync.Once
	return ln.Addr().String(), func() {
		once.Do(func() {
			hs.Close()
			<-served
			f.mu.Lock()
			for _, c := range f.recv {
				c.Close()
			}
			f.mu.Unlock()
			closeAll()
		})
	}, nil
}

// consume reads the floor's stream from its next message on with an ordered consumer, writing
// each message to the receivers (process B).
func (f *latFloor) consume(ctx context.Context, js jetstream.JetStream) error {
	cons, err := js.OrderedConsumer(ctx, f.stream, jetstream.OrderedConsumerConfig{DeliverPolicy: jetstream.DeliverNewPolicy})
	if err != nil {
		return fmt.Errorf("floor bus: consumer: %w", err)
	}
	f.cc, err = cons.Consume(func(m jetstream.Msg) { f.deliver(m.Data(), time.Now().UnixNano()) })
	if err != nil {
		return fmt.Errorf("floor bus: consume: %w", err)
	}
	return nil
}

// deliver writes a dispatch payload that this process had at received (Unix nanoseconds) to
// every receiver: its frame, and in the same write a frame of this process's times
// (floorDeliveryStamps), which the receiver reads once it has timed the first.
func (f *latFloor) deliver(payload []byte, received int64) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.deliverLocked(payload, received)
}

// deliverLocked is deliver with f.mu held.
func (f *latFloor) deliverLocked(payload []byte, received int64) {
	f.frame = appendFrame(f.frame[:0], payload, false, [4]byte{})
	var stamps [64]byte
	st := append(stamps[:0], floorStampsPrefix...)
	st = strconv.AppendInt(st, received, 10)
	st = append(st, ',')
	st = strconv.AppendInt(st, time.Now().UnixNano(), 10)
	f.frame = appendFrame(f.frame, append(st, ']'), false, [4]byte{})
	for _, c := range f.recv {
		c.Write(f.frame) // a receiver that went away leaves by its own handler
	}
}

// floorStampsPrefix begins the delivering process's frame of times that follows each dispatch:
// [1,received,writing], Unix nanoseconds.
const floorStampsPrefix = "[1,"

// member runs a receiver's WebSocket connection until it ends.
func (f *latFloor) member(w http.ResponseWriter, r *http.Request) {
	c, rd, err := wsUpgrade(w, r)
	if err != nil {
		return
	}
	defer c.Close()
	f.mu.Lock()
	f.recv = append(f.recv, c)
	_, err = c.Write(appendFrame(nil, floorHello, false, [4]byte{}))
	f.mu.Unlock()
	defer func() {
		f.mu.Lock()
		defer f.mu.Unlock()
		for i, m := range f.recv {
			if m == c {
				f.recv = append(f.recv[:i], f.recv[i+1:]...)
				break
			}
		}
	}()
	var buf []byte
	for err == nil { // a receiver only listens
		buf, err = readFrame(rd, buf)
	}
}

// post takes one send: the body is the message's content. The message is committed, then
// written to the receivers (single node) or published (process A), then answered (204).
func (f *latFloor) post(w http.ResponseWriter, r *http.Request) {
	accepted := time.Now().UnixNano()
	content, err := io.ReadAll(io.LimitReader(r.Body, 1<<16))
	if err != nil {
		return
	}
	// Not cancelled with the request, as a send that is under way is not: a context that can be
	// cancelled costs each query a watch of it (pgx).
	st, err := f.send(context.WithoutCancel(r.Context()), string(content), accepted)
	if err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	var b []byte
	for i, v := range st {
		if i > 0 {
			b = append(b, ',')
		}
		b = strconv.AppendInt(b, v, 10)
	}
	w.Header()[floorStampsHeader] = []string{string(b)}
	w.WriteHeader(http.StatusNoContent)
}

// floorStampsHeader is the answer's header of the send's times in the sending process
// (sendStamps, comma-separated).
const floorStampsHeader = "Floor-Stamps"

// sendStamps are a send's times in the sending process, Unix nanoseconds (the machine's wall
// clock, which every process reads alike): the request accepted, the commit started and done,
// the publish started and acknowledged (0 without a bus).
type sendStamps [5]int64

// The sendStamps' places.
const (
	sAccepted = iota
	sCommitStart
	sCommitted
	sPublishStart
	sPublished
)

// send commits a message and then writes it to the receivers or publishes it, all under the
// lock, so that messages are delivered (or stored in the stream) in the order of their commits,
// as sdkpp's per-entity order requires. It returns the send's times.
func (f *latFloor) send(ctx context.Context, content string, accepted int64) (st sendStamps, err error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	start := time.Now()
	st[sAccepted], st[sCommitStart] = accepted, start.UnixNano()
	m := f.messageLocked(content, start)
	id := strconv.FormatUint(m.ID, 10)
	if err := f.commitLocked(ctx, &m); err != nil {
		return st, err
	}
	st[sCommitted] = time.Now().UnixNano()
	payload, err := appendDispatch(nil, &m)
	if err != nil {
		return st, err
	}
	if f.js == nil {
		f.deliverLocked(payload, st[sCommitted])
		return st, nil
	}
	st[sPublishStart] = time.Now().UnixNano()
	if _, err := f.js.Publish(ctx, f.subject, payload, jetstream.WithMsgID(id)); err != nil {
		return st, fmt.Errorf("publish: %w", err)
	}
	st[sPublished] = time.Now().UnixNano()
	return st, nil
}

// messageLocked is the message of content sent at now, with its id. Call with f.mu held.
func (f *latFloor) messageLocked(content string, now time.Time) floorMessage {
	ms := now.UnixMilli()
	f.lastID = max(f.lastID+1, uint64(ms)<<22)
	return floorMessage{ID: f.lastID, LobbyID: floorLobbyID, AuthorID: floorLobbyID, Content: content, CreatedAt: ms}
}

// commitLocked commits m's row (autocommitted: one round trip on PostgreSQL). Call with f.mu held.
func (f *latFloor) commitLocked(ctx context.Context, m *floorMessage) error {
	if _, err := f.insert.ExecContext(ctx, int64(m.ID), int64(m.LobbyID), int64(m.LobbyID), int64(m.AuthorID), m.Content,
		m.CreatedAt, strconv.FormatUint(m.ID, 10)); err != nil {
		return fmt.Errorf("commit: %w", err)
	}
	return nil
}

// sender runs (a)'s sending client's WebSocket connection until it ends: each text frame it sends
// is a message's content, whose dispatch is written to the receivers, whose row is then
// committed, and which is then answered with a frame of its id ("error: ..." when it failed).
func (f *latFloor) sender(w http.ResponseWriter, r *http.Request) {
	c, rd, err := wsUpgrade(w, r)
	if err != nil {
		return
	}
	defer c.Close()
	var in, answer, out []byte
	for {
		if in, err = readFrame(rd, in); err != nil {
			return // the sender went away
		}
		id, err := f.deliverFirst(context.Background(), string(in))
		if answer = strconv.AppendUint(answer[:0], id, 10); err != nil {
			answer = append(answer[:0], "error: "+err.Error()...)
		}
		if _, err := c.Write(appendFrame(out[:0], answer, false, [4]byte{})); err != nil {
			return
		}
	}
}

// deliverFirst writes the dispatch of a message of content to the receivers, yields the CPU to
// them, and then commits it, under the lock, so that messages are delivered and stored in one order, and returns its id.
func (f *latFloor) deliverFirst(ctx context.Context, content string) (uint64, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	received := time.Now()
	m := f.messageLocked(content, received)
	payload, err := appendDispatch(nil, &m)
	if err != nil {
		return 0, err
	}
	f.deliverLocked(payload, received.UnixNano())
	// The write has woken the receiver, usually on this thread's CPU: it runs before the commit
	// does (as sdkpp's group commit yields before a lone message's commit, groupcommit.Writer).
	osyield.Yield()
	return m.ID, f.commitLocked(ctx, &m)
}

// floorLatency is a latency floor as its rounds see it: an HTTP client of the sending process and
// a bare WebSocket receiver of the delivering one.
type floorLatency struct {
	post   string // the send's URL
	hc     *http.Client
	conn   net.Conn
	pad    string
	got    chan floorArrival // the receiver's dispatches, as it read them
	readWG sync.WaitGroup
	// steps are the rounds' times step by step (after the warmup), as (d)'s timeline of sdkpp's
	// rounds has them (latencySteps); those of a single node's floor without a bus are 0. A floor
	// that sends over a WebSocket (sendOverWebSocket) has none.
	steps [latencySteps][]time.Duration

	// The sending client's WebSocket (sendOverWebSocket), its reader and a frame's storage; nil
	// when the rounds send with HTTP POSTs.
	ws    net.Conn
	wsr   *bufio.Reader
	frame []byte
}

// sendOverWebSocket makes l's rounds send over a WebSocket to the floor's process at addr
// (latFloor.sender), as sdkpp's SDK sends over its gateway connection, instead of with POSTs.
func (l *floorLatency) sendOverWebSocket(addr string) error {
	c, rd, err := wsDial(addr, floorWSSendPath)
	if err != nil {
		return fmt.Errorf("floor sender: %w", err)
	}
	l.ws, l.wsr = c, rd
	return nil
}

// floorArrival is a dispatch the receiver read, when, and the delivering process's times of it.
type floorArrival struct {
	at                time.Time
	payload           []byte
	received, writing int64 // Unix nanoseconds
	err               error
}

// newFloorLatency connects a receiver to the process at recvAddr and an HTTP client to the one
// at sendAddr; contents are padded so that a dispatch's data is size bytes, as sdkpp's are.
func newFloorLatency(sendAddr, recvAddr string, size int) (*floorLatency, error) {
	c, rd, err := wsDial(recvAddr, floorMemberPath)
	if err != nil {
		return nil, fmt.Errorf("floor receiver: %w", err)
	}
	if hello, err := readFrame(rd, nil); err != nil || !bytes.Equal(hello, floorHello) {
		c.Close()
		return nil, fmt.Errorf("floor receiver: no hello: %v", err)
	}
	probe, err := appendDispatch(nil, &floorMessage{ID: uint64(time.Now().UnixMilli()) << 22, LobbyID: floorLobbyID,
		AuthorID: floorLobbyID, Content: "latency floor 1000", CreatedAt: time.Now().UnixMilli()})
	if err != nil {
		c.Close()
		return nil, err
	}
	l := &floorLatency{post: "http://" + sendAddr + floorPostPath, conn: c, got: make(chan floorArrival, 1),
		hc:  &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 1}, Timeout: 30 * time.Second},
		pad: strings.Repeat(" ", max(size-(len(probe)-len(floorDispatchPrefix)-1), 0))}
	l.readWG.Add(1)
	go func() { // owned by Close, which closes the connection and waits
		defer l.readWG.Done()
		defer close(l.got)
		var buf []byte
		for {
			var a floorArrival
			buf, a.err = readFrame(rd, buf)
			a.at = time.Now()
			if a.err == nil {
				a.payload = append([]byte(nil), buf...)
				buf, a.err = readFrame(rd, buf) // the times that follow it
			}
			if a.err == nil {
				a.received, a.writing, a.err = parseDeliveryStamps(buf)
			}
			l.got <- a
			if a.err != nil {
				return
			}
		}
	}()
	return l, nil
}

// parseDeliveryStamps reads a delivering process's frame of times (floorStampsPrefix).
func parseDeliveryStamps(b []byte) (received, writing int64, err error) {
	rest, ok := bytes.CutPrefix(b, []byte(floorStampsPrefix))
	r, w, ok2 := bytes.Cut(bytes.TrimSuffix(rest, []byte("]")), []byte(","))
	if !ok || !ok2 || !bytes.HasSuffix(rest, []byte("]")) {
		return 0, 0, fmt.Errorf("floor receiver: not a frame of times: %.80q", b)
	}
	received, err1 := strconv.ParseInt(string(r), 10, 64)
	writing, err2 := strconv.ParseInt(string(w), 10, 64)
	if err := errors.Join(err1, err2); err != nil {
		return 0, 0, fmt.Errorf("floor receiver: %w", err)
	}
	return received, writing, nil
}

// parseSendStamps reads the sending process's times of a send (floorStampsHeader).
func parseSendStamps(h string) (st sendStamps, err error) {
	fs := strings.Split(h, ",")
	if len(fs) != len(st) {
		return st, fmt.Errorf("%d times in %q", len(fs), h)
	}
	for i, f := range fs {
		if st[i], err = strconv.ParseInt(f, 10, 64); err != nil {
			return st, err
		}
	}
	return st, nil
}

// floorSteps are a round's times step by step, as latencyTimeline has sdkpp's: from the send
// (sent) to its acceptance, to the commit's start, the commit, to the publish, the bus to the
// delivering process, the publish's acknowledgement, the delivering process until its write,
// and the write until the receiver read the dispatch (at). Without a bus (sendStamps' publish
// 0), the steps of the bus are 0 and the delivering process's begins at the commit.
func floorSteps(sent int64, st sendStamps, a floorArrival) (ds [latencySteps]time.Duration) {
	d := func(from, to int64) time.Duration { return time.Duration(to - from) }
	ds[stepRequest], ds[stepQueue], ds[stepCommit] = d(sent, st[sAccepted]), d(st[sAccepted], st[sCommitStart]), d(st[sCommitStart], st[sCommitted])
	if st[sPublishStart] != 0 {
		ds[stepToPublish], ds[stepBus], ds[stepAck] = d(st[sCommitted], st[sPublishStart]), d(st[sPublishStart], a.received), d(st[sPublishStart], st[sPublished])
	}
	ds[stepHandler], ds[stepCallback] = d(a.received, a.writing), d(a.writing, a.at.UnixNano())
	return ds
}

// round sends message i and returns the time until the receiver read its dispatch.
func (l *floorLatency) round(i int) (time.Duration, error) {
	content := "latency floor " + strconv.Itoa(i) + l.pad
	if l.ws != nil {
		return l.roundOverWebSocket(i, content)
	}
	start := time.Now()
	resp, err := l.hc.Post(l.post, "text/plain", strings.NewReader(content))
	if err != nil {
		return 0, fmt.Errorf("floor send %d: %w", i, err)
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusNoContent {
		return 0, fmt.Errorf("floor send %d: HTTP %s", i, resp.Status)
	}
	st, err := parseSendStamps(resp.Header.Get(floorStampsHeader))
	if err != nil {
		return 0, fmt.Errorf("floor send %d: %w", i, err)
	}
	return l.arrival(i, start, content, &st)
}

// roundOverWebSocket is round over the sending client's WebSocket: the clock stops when the
// receiver has read the dispatch; the sender's answer, after the commit, is then read untimed, so
// that no work of this round overlaps the next (which may be another side's).
func (l *floorLatency) roundOverWebSocket(i int, content string) (time.Duration, error) {
	l.frame = appendFrame(l.frame[:0], []byte(content), true, maskKey())
	start := time.Now()
	if _, err := l.ws.Write(l.frame); err != nil {
		return 0, fmt.Errorf("floor send %d: %w", i, err)
	}
	d, err := l.arrival(i, start, content, nil)
	if err != nil {
		return 0, err
	}
	answer, err := readFrame(l.wsr, l.frame)
	switch {
	case err != nil:
		return 0, fmt.Errorf("floor send %d: no answer: %w", i, err)
	case bytes.HasPrefix(answer, []byte("error")):
		return 0, fmt.Errorf("floor send %d: %s", i, answer)
	}
	return d, nil
}

// arrival waits for the receiver to read message i's dispatch, of content, and returns the time
// since start; with the sending process's times st, it records the round's steps after the
// warmup.
func (l *floorLatency) arrival(i int, start time.Time, content string, st *sendStamps) (time.Duration, error) {
	want := []byte(`"content":"` + content + `"`)
	timeout := time.After(10 * time.Second)
	for {
		select {
		case a, ok := <-l.got:
			if !ok || a.err != nil {
				return 0, fmt.Errorf("floor receiver: %v", a.err)
			}
			if !bytes.HasPrefix(a.payload, floorDispatchPrefix) || !bytes.Contains(a.payload, want) {
				continue // an earlier message's (a round that failed): read on
			}
			if i >= warmup && st != nil {
				for k, d := range floorSteps(start.UnixNano(), *st, a) {
					if (*st)[sPublishStart] != 0 || k < stepToPublish || k > stepAck { // no bus, no steps of it
						l.steps[k] = append(l.steps[k], d)
					}
				}
			}
			return a.at.Sub(start), nil
		case <-timeout:
			return 0, fmt.Errorf("floor message %d never reached the receiver", i)
		}
	}
}

// Close closes the receiver's connection and waits for its reader, and closes the sender's.
func (l *floorLatency) Close() {
	if l.ws != nil {
		l.ws.Close()
	}
	l.conn.Close()
	for range l.got { // the reader may be blocked handing over a frame
	}
	l.readWG.Wait()
	l.hc.CloseIdleConnections()
}

// serveHop runs a hop child on a loopback port. Without a peer it answers every 8 bytes a
// connection sends (a sender's clock, Unix nanoseconds) with the time it read them (the hop's
// far end). With a peer (another hop child's address) it connects to it, and for each byte a
// connection of its own sends it times one exchange with the peer (hopExchange) and answers with
// its two figures, 16 bytes.
func serveHop(peer string) (addr string, stop func(), err error) {
	var pc net.Conn
	if peer != "" {
		if pc, err = net.Dial("tcp", peer); err != nil {
			return "", nil, fmt.Errorf("hop: %w", err)
		}
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		if pc != nil {
			pc.Close()
		}
		return "", nil, err
	}
	var wg sync.WaitGroup
	var mu sync.Mutex
	conns := map[net.Conn]bool{}
	wg.Add(1)
	go func() { // owned by stop, which closes the listener and waits
		defer wg.Done()
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			mu.Lock()
			conns[c] = true
			mu.Unlock()
			wg.Add(1)
			go func() { // owned by stop, which closes c and waits
				defer wg.Done()
				defer c.Close()
				if pc == nil {
					hopEcho(c)
				} else {
					hopPings(c, pc)
				}
			}()
		}
	}()
	var once sync.Once
	return ln.Addr().String(), func() {
		once.Do(func() {
			ln.Close()
			mu.Lock()
			for c := range conns {
				c.Close()
			}
			mu.Unlock()
			if pc != nil {
				pc.Close()
			}
			wg.Wait()
		})
	}, nil
}

// hopEcho answers every 8 bytes read from c with the time (Unix nanoseconds) it read them.
func hopEcho(c net.Conn) {
	var b [8]byte
	for {
		if _, err := io.ReadFull(c, b[:]); err != nil {
			return
		}
		binary.BigEndian.PutUint64(b[:], uint64(time.Now().UnixNano()))
		if _, err := c.Write(b[:]); err != nil {
			return
		}
	}
}

// hopExchange is one exchange between the hop children: oneWay from the sender's clock before
// its write to the peer's after its read (the machine's wall clock, which both processes read),
// the peer having waited since the previous exchange; roundTrip until the sender read the
// peer's answer.
type hopExchange struct{ oneWay, roundTrip time.Duration }

// hopPings answers each byte read from c with an exchange with peer (16 bytes: its one way and
// its round trip, in nanoseconds).
func hopPings(c, peer net.Conn) {
	var cmd [1]byte
	var b [16]byte
	for {
		if _, err := io.ReadFull(c, cmd[:]); err != nil {
			return
		}
		start := time.Now()
		binary.BigEndian.PutUint64(b[:8], uint64(start.UnixNano()))
		if _, err := peer.Write(b[:8]); err != nil {
			return
		}
		if _, err := io.ReadFull(peer, b[:8]); err != nil {
			return
		}
		rtt := time.Since(start)
		oneWay := int64(binary.BigEndian.Uint64(b[:8])) - start.UnixNano()
		binary.BigEndian.PutUint64(b[:8], uint64(max(oneWay, 0)))
		binary.BigEndian.PutUint64(b[8:], uint64(rtt))
		if _, err := c.Write(b[:]); err != nil {
			return
		}
	}
}

// hopRounds asks the hop child at addr for one exchange per round; the rounds' one-way hops are
// the round's figure, their round trips noted beside.
type hopRounds struct {
	c    net.Conn
	rd   *bufio.Reader
	rtts []time.Duration
}

func newHopRounds(addr string) (*hopRounds, error) {
	c, err := net.Dial("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("hop: %w", err)
	}
	return &hopRounds{c: c, rd: bufio.NewReader(c)}, nil
}

// round returns one hop into an idle process (an exchange's one way).
func (h *hopRounds) round(i int) (time.Duration, error) {
	if _, err := h.c.Write([]byte{'p'}); err != nil {
		return 0, fmt.Errorf("hop: %w", err)
	}
	var b [16]byte
	if _, err := io.ReadFull(h.rd, b[:]); err != nil {
		return 0, fmt.Errorf("hop: %w", err)
	}
	e := hopExchange{time.Duration(binary.BigEndian.Uint64(b[:8])), time.Duration(binary.BigEndian.Uint64(b[8:]))}
	if e.roundTrip <= 0 {
		return 0, errors.New("hop: a round trip of no time")
	}
	if i >= warmup {
		h.rtts = append(h.rtts, e.roundTrip)
	}
	return e.oneWay, nil
}

func (h *hopRounds) Close() { h.c.Close() }

// caseSides are the sides that take turns with a case of (d)'s latency rounds (clusterRun): start
// starts them once the case's services run (natsAddr is its NATS server's, empty without one;
// size its dispatches' data size) and returns their rounds and their stop; ds are then each
// side's round times.
type caseSides struct {
	start func(natsAddr string, size int) ([]sideRound, func(), error)
	ds    [][]time.Duration
	lat   *floorLatency // the floor's side
	every *floorLatency // a cluster's floor with every node reading, when it is one of them
	hop   *hopRounds    // the hop's side, when it is one of them
}

// sideRound is a side's round; each: it runs after each of sdkpp's rounds, not in blocks.
type sideRound struct {
	r    round
	each bool
}

// latencyFloor starts (a)'s floor on the run's store (a database of its own on the run's
// PostgreSQL, or SQLite as the service's: in a data directory, or in memory) and connects its
// receiver and its WebSocket sender; size is the dispatches' data size. Close stops it.
func latencyFloor(size int) (*latencyFloorSide, error) {
	store := cmp.Or(latFloorDSN, storeName)
	fl, err := startNode("latfloor", 0, nodeConfig{Store: store})
	if err != nil {
		return nil, err
	}
	l, err := newFloorLatency(fl.Addr, fl.Addr, size)
	if err == nil {
		if err = l.sendOverWebSocket(fl.Addr); err != nil {
			l.Close()
		}
	}
	if err != nil {
		fl.Close()
		return nil, err
	}
	return &latencyFloorSide{floorLatency: l, node: fl}, nil
}

// latencyFloorSide is (a)'s floor: its rounds and its process.
type latencyFloorSide struct {
	*floorLatency
	node  *child
	close sync.Once
}

// Close closes the floor's connections and stops its process; it may be called again.
func (s *latencyFloorSide) Close() {
	s.close.Do(func() {
		s.floorLatency.Close()
		s.node.Close()
	})
}

// singleFloor is the sides of one node on SQLite: the single-node floor, on the store the node
// has (a data directory, or memory).
func singleFloor(store string) *caseSides {
	cs := &caseSides{}
	cs.start = func(_ string, size int) ([]sideRound, func(), error) {
		fl, err := startNode("latfloor", 0, nodeConfig{Store: store})
		if err != nil {
			return nil, nil, err
		}
		if cs.lat, err = newFloorLatency(fl.Addr, fl.Addr, size); err != nil {
			fl.Close()
			return nil, nil, err
		}
		return []sideRound{{r: cs.lat.round}}, func() { cs.lat.Close(); fl.Close() }, nil
	}
	return cs
}

// clusterFloor is the sides of three nodes: the cluster floor (processes A and B, on a fresh
// database of pg and the case's NATS server), the same with every node reading the stream (A
// too, and a third process C, which has no receivers), and the hop between two processes that
// wait.
func clusterFloor(pg *postgres) *caseSides {
	cs := &caseSides{}
	cs.start = func(natsAddr string, size int) (rs []sideRound, stop func(), err error) {
		var closers []func()
		stop = func() {
			for i := len(closers) - 1; i >= 0; i-- {
				closers[i]()
			}
		}
		defer func() {
			if err != nil {
				stop()
			}
		}()
		var dbs [2]string // each floor's A its own
		for i := range dbs {
			if dbs[i], err = pg.database(); err != nil {
				return nil, nil, err
			}
		}
		bus := "nats://" + natsAddr
		var ch [7]*child
		for i, cfg := range []struct {
			kind string
			node nodeConfig
		}{{"latfloor", nodeConfig{Store: dbs[0], Bus: bus}}, {"latfloor", nodeConfig{Bus: bus}},
			{"latfloor", nodeConfig{Store: dbs[1], Bus: bus, ID: everyNodeFloor}}, {"latfloor", nodeConfig{Bus: bus, ID: everyNodeFloor}},
			{"latfloor", nodeConfig{Bus: bus, ID: everyNodeFloor}},
			{"hop", nodeConfig{}}, {"hop", nodeConfig{}}} {
			if i == 6 {
				cfg.node.Bus = ch[5].Addr // X pings Y
			}
			if ch[i], err = startNode(cfg.kind, 0, cfg.node); err != nil {
				return nil, nil, fmt.Errorf("%s: %w", cfg.kind, err)
			}
			closers = append(closers, ch[i].Close)
		}
		if cs.lat, err = newFloorLatency(ch[0].Addr, ch[1].Addr, size); err != nil {
			return nil, nil, err
		}
		closers = append(closers, cs.lat.Close)
		if cs.every, err = newFloorLatency(ch[2].Addr, ch[3].Addr, size); err != nil {
			return nil, nil, err
		}
		closers = append(closers, cs.every.Close)
		if cs.hop, err = newHopRounds(ch[6].Addr); err != nil {
			return nil, nil, err
		}
		closers = append(closers, cs.hop.Close)
		return []sideRound{{r: cs.lat.round}, {r: cs.every.round}, {r: cs.hop.round, each: true}}, stop, nil
	}
	return cs
}

// everyNodeFloor is the node id (nodeConfig.ID) of the latency floor's processes of a cluster
// whose every node reads the stream.
const everyNodeFloor = 3

// printFloors prints (d)'s latencies against their floors: each floor's p50 and p99 beside
// sdkpp's (single: one node on SQLite; cluster: three nodes) and where its rounds' time went, as
// sdkpp's timeline has it; the floors' ratio and the hop; and the arithmetic of issue 23's bound
// (three nodes <= 2x one node): a message across nodes takes four hops one node does not (node A
// to PostgreSQL and back for the commit, node A to NATS to node B for the bus).
func printFloors(single, cluster *caseSides, sdkSingle, sdkCluster time.Duration, store string) {
	if len(single.ds) != 1 || len(cluster.ds) != 3 {
		return
	}
	p50 := func(ds []time.Duration) time.Duration { p, _ := percentiles(ds); return p }
	s50, s99 := percentiles(single.ds[0])
	c50, c99 := percentiles(cluster.ds[0])
	e50, e99 := percentiles(cluster.ds[1])
	h50, h99 := percentiles(cluster.ds[2])
	r50, r99 := percentiles(cluster.hop.rtts)
	fmt.Printf("  floors: the required parts alone, each in turns with sdkpp's rounds of its case (an HTTP client; a bare WebSocket receiver):\n")
	fmt.Printf("    one node: HTTP POST -> one row committed to SQLite (%s) -> the receiver's WebSocket\n", store)
	fmt.Printf("      latency p50 %8s  p99 %8s; sdkpp one node p50 %.2fx the floor's; p50 / p90:\n", s50, s99, ratio(sdkSingle, s50))
	names := stepNames
	names[stepHandler], names[stepCallback] = "to its write", "to the receiver"
	printSteps("        ", single.lat.steps, names)
	fmt.Printf("    three nodes: HTTP POST to process A -> one row committed to PostgreSQL (a prepared INSERT on a held connection,\n" +
		"      autocommit) -> published to JetStream (file storage, a message id; acknowledged) -> process B's ordered consumer -> the receiver's WebSocket\n")
	fmt.Printf("      latency p50 %8s  p99 %8s; sdkpp three nodes p50 %.2fx the floor's; p50 / p90:\n", c50, c99, ratio(sdkCluster, c50))
	names[stepBus], names[stepHandler] = "bus to process B", "B to its write"
	printSteps("        ", cluster.lat.steps, names)
	fmt.Printf("    the same with every node reading the stream, as sdkpp's three do (A too, and a third process):\n")
	fmt.Printf("      latency p50 %8s  p99 %8s; sdkpp three nodes p50 %.2fx this floor's; p50 / p90:\n", e50, e99, ratio(sdkCluster, e50))
	printSteps("        ", cluster.every.steps, names)
	fmt.Printf("    the floors' three nodes / one node: p50 %.2fx, p99 %.2fx; with every node reading p50 %.2fx, p99 %.2fx (sdkpp's: p50 %.2fx; the target 2x)\n",
		ratio(c50, s50), ratio(c99, s99), ratio(e50, s50), ratio(e99, s99), ratio(sdkCluster, sdkSingle))
	fmt.Printf("    a hop into a process that waits (8 bytes on loopback TCP, one way, once a round): p50 %s  p99 %s (round trip p50 %s  p99 %s)\n",
		h50, h99, r50, r99)
	// What three nodes need beyond one node's way: the floor's (with every node reading)
	// extra, cut into its four hops, PostgreSQL's and NATS's own work (the commit's and the
	// bus's steps less those hops) and the rest; on top of sdkpp's one node, the least its three
	// nodes can take.
	extra := e50 - s50
	work := p50(cluster.every.steps[stepCommit]) + p50(cluster.every.steps[stepBus]) - 4*h50
	least := sdkSingle + extra
	fmt.Printf("    arithmetic: three nodes add 4 hops one node does not (A -> PostgreSQL -> A, A -> NATS -> B). The floor with every node\n"+
		"      reading takes %s more than its one node: 4 hops %s, PostgreSQL's and NATS's own work %s (its commit and bus less the hops),\n"+
		"      the rest %s. On sdkpp's one node (%s) that puts its three nodes at %s at the least: %.2fx (the bound 2x, %s);\n"+
		"      the hops alone would put them at %s (%.2fx)\n",
		extra, 4*h50, work, extra-4*h50-work, sdkSingle, least, ratio(least, sdkSingle), 2*sdkSingle,
		sdkSingle+4*h50, ratio(sdkSingle+4*h50, sdkSingle))
}
