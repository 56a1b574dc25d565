package store

import (
	"context"
	"database/sql/driver"
	"encoding/binary"
	"errors"
	"strconv"

	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgtype"
)

// leanInsert runs insertLockingLobby's INSERT of ms, messages of lobby id (q, its text in
// PostgreSQL's form), on a connection of the pool, its parameters encoded here, and returns the
// rows it inserted. ExecContext converted each message's 11 arguments to driver values, gave them
// to pgx as interfaces and had its type map encode them one by one: most of what a commit of the
// lobbies' writer cost the service besides its system calls. The statement is prepared on each
// connection once, by name, and observed (ObserveQueries) as ExecContext's are. ok is false,
// with nothing run, when the prepared statement's parameters are not of the types leanValues
// encodes (the caller then runs it through ExecContext).
func (s *DB) leanInsert(ctx context.Context, q string, id uint64, ms []*LobbyMessage) (n int64, ok bool, err error) {
	ctx = uncancelled(ctx)
	o := observing{o: s.opts}
	defer o.done(o.start())
	for range 3 { // as database/sql, and insertTokenRowsPostgres, try a statement not sent again
		if n, ok, err = s.leanInsertOnce(ctx, q, id, ms); !errors.Is(err, driver.ErrBadConn) {
			break
		}
	}
	return n, ok, err
}

// StartsLobbyMessages reports whether StartLobbyMessages can send statements: on PostgreSQL,
// outside a transaction and an order lock's connection.
func (s *DB) StartsLobbyMessages() bool { return s.d.name == "postgres" && !s.tx && s.hold == nil }

// StartLobbyMessages sends the statement of StoreLobbyMessages for ms, messages alone of lobby id
// (no webhook deliveries, no outbox rows), and returns without waiting for its result: the
// server runs it while the caller goes on, and wait reads its result, StoreLobbyMessages' error.
// It is insertLockingLobby's INSERT, sent as leanInsert sends it but in pipeline mode, which
// writes the statement and its Sync and reads nothing (pgx's ExecPrepared read the whole
// result before it returned), on a connection of the pool that it holds until wait, which must
// be called once. ok is false, with nothing sent, when StartsLobbyMessages is false, ms is empty
// or too many for one statement, or the prepared statement's parameters are not of the types
// leanValues encodes.
func (s *DB) StartLobbyMessages(ctx context.Context, id uint64, ms []*LobbyMessage) (wait func() error, ok bool) {
	if !s.StartsLobbyMessages() || len(ms) == 0 || len(ms) > maxRowsPerInsert {
		return nil, false
	}
	ctx = uncancelled(ctx)
	o := observing{o: s.opts}
	start := o.start()
	// Sent again, as leanInsert does, on another connection when one was found broken before
	// the statement reached the server.
	again := func() error { return s.insertLockingLobby(ctx, id, ms) }
	conn, err := s.db.Conn(ctx)
	if err != nil {
		return func() error { return err }, true
	}
	var p *pgconn.Pipeline
	lean := true
	err = conn.Raw(func(dc any) error {
		pc, isPgx := dc.(pgxConn)
		if !isPgx {
			lean = false
			return nil
		}
		c := pc.Conn()
		sd, err := c.Prepare(ctx, leanName(len(ms)), s.lockingText(len(ms))) // prepared once per connection
		if err != nil {
			return badConn(err)
		}
		if lean = leanTypes(sd.ParamOIDs, len(ms)); !lean {
			return nil
		}
		values := leanValues(ms, id)
		p = c.PgConn().StartPipeline(ctx)
		p.SendQueryPrepared(sd.Name, values, leanFormats[:len(values)], nil)
		if err := p.Sync(); err != nil { // not written: pgx closed the connection
			p = nil
			return badConn(err)
		}
		return nil // sent; read by wait
	})
	if p == nil { // nothing sent
		conn.Close()
		switch {
		case !lean:
			return nil, false
		case errors.Is(err, driver.ErrBadConn):
			return again, true
		}
		return func() error { return err }, true
	}
	return func() error {
		defer o.done(start)
		var n int64
		err := conn.Raw(func(any) error {
			var err error
			n, err = pipelineResult(p)
			return badConn(err)
		})
		conn.Close()
		switch {
		case errors.Is(err, driver.ErrBadConn): // it did not reach the server
			return again()
		case err != nil:
			return err
		}
		return foundIf(n)
	}, true
}

// pipelineResult reads the result of the one statement StartLobbyMessages sent in p, and its
// Sync's, closes p and returns the rows the statement inserted. A statement's error is the
// server's; the connection is left in its normal mode, or closed (pgx) when it failed.
func pipelineResult(p *pgconn.Pipeline) (n int64, err error) {
	for done := false; !done && err == nil; {
		var res any
		switch res, err = p.GetResults(); r := res.(type) {
		case *pgconn.ResultReader:
			var tag pgconn.CommandTag
			tag, err = r.Close()
			n = tag.RowsAffected()
		case *pgconn.PipelineSync:
			done = true
		case nil:
			if err == nil { // nothing more to read
				done = true
			}
		}
	}
	if cerr := p.Close(); err == nil {
		err = cerr
	}
	return n, err
}

// leanInsertOnce is leanInsert's try on one connection of the pool: driver.ErrBadConn
// (wrapped, badConn), with the connection dropped, when the statement did not reach the server.
func (s *DB) leanInsertOnce(ctx context.Context, q string, id uint64, ms []*LobbyMessage) (n int64, ok bool, err error) {
	conn, err := s.db.Conn(ctx)
	if err != nil {
		return 0, true, err
	}
	defer conn.Close()
	err = conn.Raw(func(dc any) error {
		pc, isPgx := dc.(pgxConn)
		if !isPgx {
			return nil
		}
		c := pc.Conn()
		sd, err := c.Prepare(ctx, leanName(len(ms)), q) // prepared once per connection
		if err != nil {
			ok = true
			return badConn(err)
		}
		if ok = leanTypes(sd.ParamOIDs, len(ms)); !ok {
			return nil
		}
		values := leanValues(ms, id)
		tag, err := c.PgConn().ExecPrepared(ctx, sd.Name, values, leanFormats[:len(values)], nil).Close()
		n = tag.RowsAffected()
		return badConn(err)
	})
	return n, ok, err
}

// leanNames are the names of leanInsert's prepared statements, by their rows.
var leanNames = func() []string {
	names := make([]string, maxRowsPerInsert+1)
	for i := range names {
		names[i] = "sdkpp_lobby_messages_" + strconv.Itoa(i)
	}
	return names
}()

// leanName names the prepared INSERT of rows messages.
func leanName(rows int) string {
	if rows < len(leanNames) {
		return leanNames[rows]
	}
	return "sdkpp_lobby_messages_" + strconv.Itoa(rows)
}

// leanRow is the types of a message's parameters, in lobbyMessageArgs' order; the lobby's id
// (a BIGINT) follows the rows.
var leanRow = [...]uint32{pgtype.Int8OID, pgtype.Int8OID, pgtype.Int8OID, pgtype.Int8OID, pgtype.TextOID,
	pgtype.TextOID, pgtype.TextOID, pgtype.Int8OID, pgtype.TextOID, pgtype.Int8OID, pgtype.TextOID}

// leanFormats are the formats of leanValues' parameters, whatever their number: a row's, again
// and again, a BIGINT in binary and a TEXT as text; the one after the last row is a row's first,
// a BIGINT as the lobby's id is.
var leanFormats = func() []int16 {
	f := make([]int16, len(leanRow)*(maxRowsPerInsert+1))
	for i := range f {
		if leanRow[i%len(leanRow)] == pgtype.Int8OID {
			f[i] = pgtype.BinaryFormatCode
		}
	}
	return f
}()

// leanTypes tells whether oids are the types of the parameters of rows messages and a lobby's
// id, as leanValues encodes them.
func leanTypes(oids []uint32, rows int) bool {
	if rows > maxRowsPerInsert || len(oids) != rows*len(leanRow)+1 {
		return false
	}
	for i, oid := range oids {
		if oid != leanRow[i%len(leanRow)] {
			return false
		}
	}
	return true
}

// leanValues encodes the parameters of ms and of the lobby's id, as lobbyMessageArgs and
// pgText make them, in one buffer: a BIGINT in binary, a TEXT as text, a nonce not enforced as
// NULL.
func leanValues(ms []*LobbyMessage, id uint64) [][]byte {
	size := 8
	for _, m := range ms {
		size += 6*8 + len(m.Content) + len(m.AdditionalName) + len(m.Nonce) + 4 // "{}" twice
	}
	buf := make([]byte, 0, size)
	values := make([][]byte, 0, len(ms)*len(leanRow)+1)
	// Each value is a slice of buf, whose later appends, when a text grew (pgText, metadata),
	// may move it: the values taken keep the old array.
	num := func(v int64) {
		buf = binary.BigEndian.AppendUint64(buf, uint64(v))
		values = append(values, buf[len(buf)-8:len(buf):len(buf)])
	}
	text := func(s string) {
		s = pgText(s)
		buf = append(buf, s...)
		values = append(values, buf[len(buf)-len(s):len(buf):len(buf)])
	}
	for _, m := range ms {
		num(int64(m.ID))
		num(int64(m.LobbyID))
		num(int64(m.AppID))
		num(int64(m.AuthorID))
		text(m.Content)
		text(props(m.Metadata))
		text(props(m.ModerationMetadata))
		num(int64(m.Flags))
		text(m.AdditionalName)
		num(ts(m.CreatedAt))
		if m.Nonce == "" { // NULL unless enforced
			values = append(values, nil)
		} else {
			text(m.Nonce)
		}
	}
	num(int64(id))
	return values
}
