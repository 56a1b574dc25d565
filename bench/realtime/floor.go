package main

import (
	"bufio"
	"bytes"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	_ "modernc.org/sqlite" // the service's driver

	"sdkpp/internal/jsonscan"
)

// The floor side of (b) (-floor): the least any service with sdkpp's guarantees for a lobby
// message must do, written plainly, so that the fan-out figure can be read against what its
// required parts cost. It runs in a child process (-serve floor) as the service does:
//
//   - one WebSocket connection per member (floorws.go: the least framing, a batch of frames in
//     one write), the sender's being one of them as a game's is;
//   - each message sent (a text frame with a nonce and the content, JSON) is decoded, given an id
//     and committed durably before anyone sees it: one row of lobby_messages as sdkpp's (its
//     columns and primary key; without its two secondary indexes or the nonce's check) in the
//     store of the run: a SQLite database in WAL mode with synchronous=NORMAL, the store's
//     settings, through the store's driver; or, on PostgreSQL, a database of its own on the same
//     server, written as a skilled pgx user would (floorpg.go: one connection held open, the
//     INSERT prepared on it, run with one round trip, autocommitted); the messages read in one go
//     (those in flight) are committed in one transaction with one INSERT, one commit in flight;
//   - then the sender has its answers (the message's id for its nonce) in one write, and the
//     batch's dispatch frames go to every member, with every other message committed while the
//     previous fan-out was being written, in one write per connection (a fan-out goroutine).
//
// Its clients are the cheapest correct ones: bare WebSocket readers that check that each frame is
// valid JSON (internal/jsonscan, sdkpp's gateway client's scanner) carrying the next message in
// order, and a sender that writes as many new sends as
// answers it read, in one write. So the floor is a lower bound on what sdkpp and its SDK clients
// can cost for the same deliveries; sdkpp does more by design (routing, sessions and their
// replay buffers, membership, rate limits, the enforced nonce, the SDK's decode and cache).

const (
	floorMemberPath = "/floor/member" // a member's connection
	floorSendPath   = "/floor/send"   // the sender's: a member that also sends
	floorLobbyID    = 1 << 59         // the one lobby's id, and its author's and app's
)

// floorMessage is a committed message as its dispatch carries it.
type floorMessage struct {
	ID        uint64 `json:"id,string"`
	LobbyID   uint64 `json:"lobby_id,string"`
	AuthorID  uint64 `json:"author_id,string"`
	Content   string `json:"content"`
	CreatedAt int64  `json:"created_at"` // Unix milliseconds
	nonce     string
}

// floorSend is a send's frame.
type floorSend struct {
	Nonce   string `json:"nonce"`
	Content string `json:"content"`
}

// floorAnswer is the sender's answer to a send, once its message is committed.
type floorAnswer struct {
	Op    int    `json:"op"`
	Nonce string `json:"nonce"`
	ID    uint64 `json:"id,string"`
}

// The frames' payloads begin so: a dispatch, then the message; an answer.
var (
	floorDispatchPrefix = []byte(`{"op":0,"t":"LOBBY_MESSAGE_CREATE","d":`)
	floorAnswerPrefix   = []byte(`{"op":101,`)
	floorHello          = []byte(`{"op":10}`)
)

// floorServer is the floor service.
type floorServer struct {
	db      floorDB                    // used by the sender's loop only
	members atomic.Pointer[[]net.Conn] // copied on change, so that no lock is held across writes
	mu      sync.Mutex                 // serializes changes of members and conns
	conns   map[net.Conn]bool          // every connection, closed by close
	wg      sync.WaitGroup             // the connections' handlers
	lastID  uint64                     // used by the sender's loop only

	// The fan-out: committed messages' dispatch frames wait in pending until the fan-out's
	// goroutine takes them all and writes them to every member, one write each.
	fanMu   sync.Mutex
	pending []byte
	fanWake chan struct{} // a value when pending has frames
}

// floorSchema is sdkpp's lobby_messages (server/store migrations 3 and 8) without its indexes.
const floorSchema = `CREATE TABLE lobby_messages (
	id INTEGER PRIMARY KEY,
	lobby_id INTEGER NOT NULL,
	app_id INTEGER NOT NULL,
	author_id INTEGER NOT NULL,
	content TEXT NOT NULL,
	metadata TEXT NOT NULL DEFAULT '{}',
	moderation_metadata TEXT NOT NULL DEFAULT '{}',
	flags INTEGER NOT NULL DEFAULT 0,
	additional_name TEXT NOT NULL DEFAULT '',
	created_at INTEGER NOT NULL,
	nonce TEXT
)`

// floorDB commits a batch of messages in one transaction, one batch at a time.
type floorDB interface {
	commit(batch []floorMessage) error
	Close() error
}

// openFloorDB opens the floor's store: store is "sqlite:DIR" (openFloorSQLite) or a PostgreSQL
// URL of a database of the floor's own (openFloorPostgres).
func openFloorDB(store string) (floorDB, error) {
	if dir, ok := strings.CutPrefix(store, "sqlite:"); ok {
		return openFloorSQLite(dir)
	}
	return openFloorPostgres(store)
}

// floorSQLite is the floor's SQLite database.
type floorSQLite struct {
	db      *sql.DB
	inserts map[int]*sql.Stmt // INSERT of n rows
	args    []any             // reused storage for an INSERT's arguments
}

// openFloorSQLite creates the floor's database in dir with the store's settings (WAL,
// synchronous=NORMAL; SQLite's own automatic checkpoints, where the store runs them beside its
// writer) and one connection.
func openFloorSQLite(dir string) (*floorSQLite, error) {
	p := filepath.Join(dir, "floor.db")
	db, err := sql.Open("sqlite", "file:"+(&url.URL{Path: p}).EscapedPath()+
		"?_pragma=busy_timeout(5000)&_pragma=journal_mode(WAL)&_pragma=synchronous(NORMAL)")
	if err != nil {
		return nil, fmt.Errorf("floor: open: %w", err)
	}
	db.SetMaxOpenConns(1) // one writer, kept open with its prepared statements
	db.SetMaxIdleConns(1)
	if _, err := db.Exec(floorSchema); err != nil {
		db.Close()
		return nil, fmt.Errorf("floor: schema: %w", err)
	}
	return &floorSQLite{db: db, inserts: map[int]*sql.Stmt{}}, nil
}

func (f *floorSQLite) Close() error { return f.db.Close() }

// serveFloor runs the floor service on a loopback port, its store store (see openFloorDB), and
// returns its address and its stop (which may be called more than once).
func serveFloor(store string) (addr string, stop func(), err error) {
	db, err := openFloorDB(store)
	if err != nil {
		return "", nil, err
	}
	s := &floorServer{db: db, conns: map[net.Conn]bool{}, fanWake: make(chan struct{}, 1)}
	s.members.Store(new([]net.Conn))
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		db.Close()
		return "", nil, err
	}
	mux := http.NewServeMux()
	mux.HandleFunc(floorMemberPath, func(w http.ResponseWriter, r *http.Request) { s.accept(w, r, false) })
	mux.HandleFunc(floorSendPath, func(w http.ResponseWriter, r *http.Request) { s.accept(w, r, true) })
	hs := &http.Server{Handler: mux}
	served, fanned, quit := make(chan struct{}), make(chan struct{}), make(chan struct{})
	go func() { // owned by stop, which waits for it
		defer close(served)
		hs.Serve(ln)
	}()
	go func() { // owned by stop, which waits for it
		defer close(fanned)
		s.fanOut(quit)
	}()
	var once sync.Once
	return ln.Addr().String(), func() {
		once.Do(func() {
			hs.Close()
			<-served
			s.mu.Lock() // closed first, so that no write of the fan-out's blocks
			for c := range s.conns {
				c.Close()
			}
			s.mu.Unlock()
			close(quit)
			<-fanned
			s.wg.Wait()
			db.Close()
		})
	}, nil
}

// accept runs one member's connection (the sender's when sender) until it ends.
func (s *floorServer) accept(w http.ResponseWriter, r *http.Request, sender bool) {
	c, rd, err := wsUpgrade(w, r)
	if err != nil {
		return
	}
	s.wg.Add(1)
	defer s.wg.Done()
	defer c.Close()
	s.mu.Lock()
	s.conns[c] = true
	ms := append(append([]net.Conn(nil), *s.members.Load()...), c)
	s.members.Store(&ms)
	s.mu.Unlock()
	defer s.leave(c)
	// Hello once the member is in: the client waits for it before it counts as connected.
	if _, err := c.Write(appendFrame(nil, floorHello, false, [4]byte{})); err != nil {
		return
	}
	if sender {
		if err := s.serveSender(c, rd); err != nil && !errors.Is(err, net.ErrClosed) && !errors.Is(err, io.EOF) && !errors.Is(err, errWSClosed) {
			fmt.Fprintln(os.Stderr, "floor:", err)
		}
		return
	}
	var buf []byte
	for err == nil { // a member only listens, until its connection ends
		buf, err = readFrame(rd, buf)
	}
}

// leave takes c out of the members.
func (s *floorServer) leave(c net.Conn) {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.conns, c)
	var ms []net.Conn
	for _, m := range *s.members.Load() {
		if m != c {
			ms = append(ms, m)
		}
	}
	s.members.Store(&ms)
}

// floorMaxBatch bounds the messages committed together (the sends in flight, 8 in (b)).
const floorMaxBatch = 64

// serveSender reads the sender's frames: every frame already read from the socket (the sends in
// flight) makes one batch, committed in one transaction; then the batch's dispatches are handed
// to the fan-out (fanOut) and its answers written to the sender in one write. The answers do not
// wait for the fan-out, so that while it writes, the next sends are committed and its next
// writes carry every message committed meanwhile.
func (s *floorServer) serveSender(c net.Conn, rd *bufio.Reader) error {
	var in, out, scratch []byte
	var batch []floorMessage
	for {
		batch = batch[:0]
		for len(batch) == 0 || (rd.Buffered() > 0 && len(batch) < floorMaxBatch) {
			var err error
			if in, err = readFrame(rd, in); err != nil {
				return err
			}
			var req floorSend
			if err := decodeSend(in, &req); err != nil {
				return fmt.Errorf("a send: %w", err)
			}
			s.lastID = max(s.lastID+1, uint64(time.Now().UnixMilli())<<22)
			batch = append(batch, floorMessage{ID: s.lastID, LobbyID: floorLobbyID, AuthorID: floorLobbyID,
				Content: req.Content, CreatedAt: time.Now().UnixMilli(), nonce: req.Nonce})
		}
		if err := s.db.commit(batch); err != nil {
			return err
		}
		var err error
		out = out[:0]
		for _, m := range batch {
			if scratch, err = appendDispatch(scratch[:0], &m); err != nil {
				return err
			}
			out = appendFrame(out, scratch, false, [4]byte{})
		}
		s.fanMu.Lock()
		s.pending = append(s.pending, out...)
		s.fanMu.Unlock()
		select {
		case s.fanWake <- struct{}{}:
		default: // already woken
		}
		out = out[:0]
		for _, m := range batch {
			a, err := json.Marshal(floorAnswer{Op: 101, Nonce: m.nonce, ID: m.ID})
			if err != nil {
				return err
			}
			out = appendFrame(out, a, false, [4]byte{})
		}
		if _, err := c.Write(out); err != nil {
			return err
		}
	}
}

// fanOut writes the committed messages' dispatches to every member until quit is closed: each
// time it takes every frame pending and writes them to each member in one write.
func (s *floorServer) fanOut(quit <-chan struct{}) {
	var frames []byte
	for {
		select {
		case <-s.fanWake:
		case <-quit:
			return
		}
		s.fanMu.Lock()
		frames, s.pending = s.pending, frames[:0]
		s.fanMu.Unlock()
		for _, m := range *s.members.Load() {
			m.Write(frames) // a member that went away leaves by its own handler
		}
	}
}

// decodeSend decodes a send's frame into req: in one pass (jsonscan, as sdkpp's service and
// clients read their hot paths) when its strings are plain, else with encoding/json.
func decodeSend(b []byte, req *floorSend) error {
	if jsonscan.Object(b, func(key, v []byte) bool {
		var ok bool
		switch string(key) {
		case "nonce":
			req.Nonce, ok = jsonscan.Plain(v)
		case "content":
			req.Content, ok = jsonscan.Plain(v)
		default:
			return true
		}
		return ok
	}) {
		return nil
	}
	*req = floorSend{}
	return json.Unmarshal(b, req)
}

// appendDispatch appends m's dispatch payload to b.
func appendDispatch(b []byte, m *floorMessage) ([]byte, error) {
	data, err := json.Marshal(m)
	if err != nil {
		return b, err
	}
	b = append(b, floorDispatchPrefix...)
	b = append(b, data...)
	return append(b, '}'), nil
}

// commit inserts batch in one transaction with one statement (prepared once per batch size).
func (f *floorSQLite) commit(batch []floorMessage) error {
	st, ok := f.inserts[len(batch)]
	if !ok {
		q := `INSERT INTO lobby_messages (id, lobby_id, app_id, author_id, content, metadata, moderation_metadata, flags,
	additional_name, created_at, nonce) VALUES ` + strings.TrimSuffix(strings.Repeat(`(?,?,?,?,?,?,?,?,?,?,?),`, len(batch)), ",")
		var err error
		if st, err = f.db.Prepare(q); err != nil {
			return fmt.Errorf("floor: prepare: %w", err)
		}
		f.inserts[len(batch)] = st
	}
	f.args = f.args[:0]
	for _, m := range batch {
		f.args = append(f.args, m.ID, m.LobbyID, m.LobbyID, m.AuthorID, m.Content, "{}", "{}", 0, "", m.CreatedAt, m.nonce)
	}
	tx, err := f.db.Begin()
	if err != nil {
		return fmt.Errorf("floor: begin: %w", err)
	}
	if _, err := tx.Stmt(st).Exec(f.args...); err != nil {
		tx.Rollback()
		return fmt.Errorf("floor: insert: %w", err)
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("floor: commit: %w", err)
	}
	return nil
}

// floorFanout is the floor side of (b), connected: every member's connection read by a
// goroutine, the first's also sending.
type floorFanout struct {
	conns   []net.Conn
	got     *deliveries
	errs    chan error
	job     atomic.Pointer[floorJob] // the sender's current turn
	pad     string                   // the contents' padding, to the probed size
	sent    int                      // messages sent in earlier turns
	wmu     sync.Mutex               // the sender's connection's writes
	scratch []byte                   // a send's payload, built under the job's mu
	closing atomic.Bool
	wg      sync.WaitGroup // the readers
}

// floorJob is one turn's sends, the sender's reader's to continue once its first window is out.
type floorJob struct {
	first, messages int           // the turn's messages are first+1 ... first+messages
	done            chan struct{} // closed when every send is answered
	hold            chan struct{} // a send was held (deliveries.room): the turn's goroutine sends it
	mu              sync.Mutex
	sent, acked     int
	held            int // answered sends not followed by the next, for want of room
}

// appendSend appends the frame of send number n to out.
func (f *floorFanout) appendSend(out []byte, n int) []byte {
	f.scratch = f.payload(f.scratch[:0], n)
	return appendFrame(out, f.scratch, true, maskKey())
}

// write writes frames to the sender's connection: its reader's and, for held sends, the turn's.
func (f *floorFanout) write(out []byte) error {
	f.wmu.Lock()
	defer f.wmu.Unlock()
	_, err := f.conns[0].Write(out)
	return err
}

// release sends j's held sends as room comes for each, in order.
func (f *floorFanout) release(j *floorJob) error {
	j.mu.Lock()
	defer j.mu.Unlock()
	var out []byte
	for ; j.held > 0; j.held-- {
		next := j.first + j.sent + 1
		if !f.got.room(int64(next)) {
			if len(out) > 0 { // what there was room for first: the room for next may wait for it
				if err := f.write(out); err != nil {
					return err
				}
				out = out[:0]
			}
			j.mu.Unlock()
			err := f.got.hold(int64(next))
			j.mu.Lock()
			if err != nil {
				return fmt.Errorf("floor: %w", err)
			}
		}
		j.sent++
		out = f.appendSend(out, next)
	}
	if len(out) == 0 {
		return nil
	}
	return f.write(out)
}

// newFloorFanout connects members to the floor service at addr, the first sending, with
// dispatches of size bytes of data as sdkpp's are.
func newFloorFanout(addr string, members, size int) (*floorFanout, error) {
	f := &floorFanout{got: newDeliveries(members), errs: make(chan error, members)}
	// The padding makes a dispatch's data (its message) size bytes, the ids being of the length
	// the service's are (19 digits).
	probe, err := json.Marshal(&floorMessage{ID: uint64(time.Now().UnixMilli()) << 22, LobbyID: floorLobbyID,
		AuthorID: floorLobbyID, Content: "fanout 1000", CreatedAt: time.Now().UnixMilli()})
	if err != nil {
		return nil, err
	}
	f.pad = strings.Repeat(" ", max(size-len(probe), 0))
	for i := 0; i < members; i++ {
		path := floorMemberPath
		if i == 0 {
			path = floorSendPath
		}
		c, rd, err := wsDial(addr, path)
		if err != nil {
			f.Close()
			return nil, fmt.Errorf("floor member %d: %w", i, err)
		}
		hello, err := readFrame(rd, nil)
		if err != nil || !bytes.Equal(hello, floorHello) {
			c.Close()
			f.Close()
			return nil, fmt.Errorf("floor member %d: no hello: %v", i, err)
		}
		f.conns = append(f.conns, c)
		f.wg.Add(1)
		go func() { // owned by Close, which closes c and waits
			defer f.wg.Done()
			if err := f.read(c, rd, i); err != nil && !f.closing.Load() {
				f.errs <- fmt.Errorf("floor member %d: %w", i, err)
			}
		}()
	}
	return f, nil
}

// payload is send number n's frame payload.
func (f *floorFanout) payload(b []byte, n int) []byte {
	b = append(b, `{"nonce":"`...)
	b = strconv.AppendInt(b, int64(n), 10)
	b = append(b, `","content":"fanout `...)
	b = strconv.AppendInt(b, int64(n), 10)
	b = append(b, f.pad...)
	return append(b, `"}`...)
}

// read reads a member's frames until its connection ends: each dispatch must be the next message
// in order; the sender's also takes answers, and for each writes the next send, the sends
// following one read in one write.
func (f *floorFanout) read(c net.Conn, rd *bufio.Reader, member int) error {
	sender := member == 0
	var buf, out []byte
	next := 1 // the message expected next
	for {
		var err error
		if buf, err = readFrame(rd, buf); err != nil {
			return err
		}
		switch {
		case bytes.HasPrefix(buf, floorDispatchPrefix):
			if !isFloorMessage(buf, next) {
				return fmt.Errorf("message %d expected, got %.80q", next, buf)
			}
			next++
			f.got.add(member)
		case sender && bytes.HasPrefix(buf, floorAnswerPrefix) && jsonscan.Valid(buf):
			j := f.job.Load()
			j.mu.Lock()
			j.acked++
			if j.sent+j.held < j.messages {
				if j.held == 0 && f.got.room(int64(j.first+j.sent+1)) {
					j.sent++
					out = f.appendSend(out, j.first+j.sent)
				} else if j.held++; j.held == 1 { // the turn's goroutine sends it once there is room
					j.hold <- struct{}{}
				}
			}
			if j.acked == j.messages {
				close(j.done)
			}
			j.mu.Unlock()
		default:
			return fmt.Errorf("an unexpected frame: %.80q", buf)
		}
		if len(out) > 0 && rd.Buffered() == 0 {
			if err := f.write(out); err != nil {
				return err
			}
			out = out[:0]
		}
	}
}

// isFloorMessage reports whether p is a dispatch of valid JSON whose message is message n.
func isFloorMessage(p []byte, n int) bool {
	if !jsonscan.Valid(p) {
		return false
	}
	var want [48]byte
	w := strconv.AppendInt(append(want[:0], `"content":"fanout `...), int64(n), 10)
	i := bytes.Index(p, w)
	return i >= 0 && i+len(w) < len(p) && (p[i+len(w)] == ' ' || p[i+len(w)] == '"')
}

// maskKey is a client frame's masking key.
func maskKey() [4]byte {
	var k [4]byte
	v := rand.Uint32()
	k[0], k[1], k[2], k[3] = byte(v), byte(v>>8), byte(v>>16), byte(v>>24)
	return k
}

func (f *floorFanout) turn(messages, window int) (time.Duration, error) {
	wait := f.got.expect(int64(messages*len(f.conns)), f.errs)
	j := &floorJob{first: f.sent, messages: messages, done: make(chan struct{}), hold: make(chan struct{}, 1)}
	f.sent += messages
	var out []byte
	start := time.Now()
	for ; j.sent < min(window, messages); j.sent++ {
		if err := f.got.hold(int64(j.first + j.sent + 1)); err != nil {
			return 0, fmt.Errorf("floor: %w", err)
		}
		out = f.appendSend(out, j.first+j.sent+1)
	}
	f.job.Store(j) // before the first send, whose answer the reader takes
	if err := f.write(out); err != nil {
		return 0, err
	}
	stalled := time.NewTicker(f.got.stall)
	defer stalled.Stop()
	for answered, seen := false, -1; !answered; {
		select {
		case <-j.done:
			answered = true
		case <-j.hold:
			if err := f.release(j); err != nil {
				return 0, err
			}
		case err := <-f.errs:
			return 0, err
		case <-stalled.C:
			j.mu.Lock()
			acked := j.acked
			j.mu.Unlock()
			if acked == seen {
				return 0, fmt.Errorf("floor: %d of %d sends answered, none in the last %s", acked, messages, f.got.stall)
			}
			seen = acked
		}
	}
	if err := wait(); err != nil {
		return 0, fmt.Errorf("floor: %w", err)
	}
	return time.Since(start), nil
}

func (f *floorFanout) Close() {
	f.closing.Store(true)
	for _, c := range f.conns {
		c.Close()
	}
	f.wg.Wait()
}
