package main

import (
	"database/sql"
	"testing"

	"github.com/stretchr/testify/assert"

	"sdkpp/server/store/pgtest"
)

func TestMain(m *testing.M) { pgtest.Main(m) }

// TestFloorFanoutPostgres is TestFloorFanout with the floor's store on PostgreSQL.
func TestFloorFanoutPostgres(t *testing.T) {
	dsn := pgtest.Database(t, "", nil)
	testFloorFanout(t, dsn, func() (*sql.DB, error) { return sql.Open("pgx", dsn) })
}

func TestFloorInsertPostgres(t *testing.T) {
	assert.Equal(t, `INSERT INTO lobby_messages (id, lobby_id, app_id, author_id, content, metadata, moderation_metadata, flags,
	additional_name, created_at, nonce) VALUES ($1,$2,$3,$4,$5,$6,$7,$8,$9,$10,$11),($12,$13,$14,$15,$16,$17,$18,$19,$20,$21,$22)`,
		floorInsertPostgres(2))
}
