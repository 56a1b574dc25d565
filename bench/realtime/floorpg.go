package main

import (
	"context"
	"fmt"
	"strconv"
	"strings"

	"github.com/jackc/pgx/v5"
)

// The floor's store on PostgreSQL (-floor with -store postgres://...): the floor's lobby_messages
// in a database of its own on the run's server, written as a skilled pgx user would: one
// connection (pgx.Conn, no pool, no database/sql) held open; the INSERT of n rows prepared on it
// once per n, by name; a batch's INSERT run by that name, which pgx sends as one Bind, Execute
// and Sync (one round trip), autocommitted: the batch's one transaction, and one commit in
// flight, the next batch's waiting for it as the sender's loop does.

// floorPostgres is the floor's PostgreSQL database.
type floorPostgres struct {
	conn     *pgx.Conn
	prepared map[int]string // the prepared INSERT of n rows, by name
	args     []any          // reused storage for an INSERT's arguments
}

// floorPostgresSchema is floorSchema with PostgreSQL's types.
var floorPostgresSchema = strings.NewReplacer("INTEGER PRIMARY KEY", "BIGINT PRIMARY KEY", "INTEGER", "BIGINT").Replace(floorSchema)

// openFloorPostgres connects to the database at dsn, which must be the floor's own, and makes
// the floor's table in it.
func openFloorPostgres(dsn string) (*floorPostgres, error) {
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, dsn)
	if err != nil {
		return nil, fmt.Errorf("floor: connect: %w", err)
	}
	if _, err := conn.Exec(ctx, floorPostgresSchema); err != nil {
		conn.Close(ctx)
		return nil, fmt.Errorf("floor: schema: %w", err)
	}
	return &floorPostgres{conn: conn, prepared: map[int]string{}}, nil
}

// floorInsertPostgres is the text of the INSERT of rows messages, with PostgreSQL's parameters.
func floorInsertPostgres(rows int) string {
	var q strings.Builder
	q.WriteString(`INSERT INTO lobby_messages (id, lobby_id, app_id, author_id, content, metadata, moderation_metadata, flags,
	additional_name, created_at, nonce) VALUES `)
	for r := range rows {
		if r > 0 {
			q.WriteByte(',')
		}
		q.WriteByte('(')
		for c := range 11 {
			if c > 0 {
				q.WriteByte(',')
			}
			q.WriteByte('$')
			q.WriteString(strconv.Itoa(r*11 + c + 1))
		}
		q.WriteByte(')')
	}
	return q.String()
}

// commit inserts batch with one autocommitted INSERT, prepared once per batch size.
func (f *floorPostgres) commit(batch []floorMessage) error {
	ctx := context.Background()
	name, ok := f.prepared[len(batch)]
	if !ok {
		name = "floor_insert_" + strconv.Itoa(len(batch))
		if _, err := f.conn.Prepare(ctx, name, floorInsertPostgres(len(batch))); err != nil {
			return fmt.Errorf("floor: prepare: %w", err)
		}
		f.prepared[len(batch)] = name
	}
	f.args = f.args[:0]
	for _, m := range batch {
		f.args = append(f.args, int64(m.ID), int64(m.LobbyID), int64(m.LobbyID), int64(m.AuthorID), m.Content, "{}", "{}",
			int64(0), "", m.CreatedAt, m.nonce)
	}
	tag, err := f.conn.Exec(ctx, name, f.args...)
	if err != nil {
		return fmt.Errorf("floor: insert: %w", err)
	}
	if tag.RowsAffected() != int64(len(batch)) {
		return fmt.Errorf("floor: insert: %d rows of %d", tag.RowsAffected(), len(batch))
	}
	return nil
}

func (f *floorPostgres) Close() error { return f.conn.Close(context.Background()) }
