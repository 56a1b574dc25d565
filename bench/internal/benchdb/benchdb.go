// Package benchdb gives a benchmark a fresh store: a PostgreSQL database made on the server whose
// admin URL the benchmark is given, dropped when it ends.
package benchdb

import (
	"database/sql"
	"fmt"
	"net/url"
	"os"

	_ "github.com/jackc/pgx/v5/stdlib" // the "pgx" database/sql driver

	"sdkpp/server/store"
)

// Postgres creates a database named for prefix and this process on the PostgreSQL server of
// admin (a postgres:// URL) and returns its URL and a function that drops it.
func Postgres(admin, prefix string) (string, func(), error) {
	u, err := url.Parse(admin)
	if err != nil || (u.Scheme != "postgres" && u.Scheme != "postgresql") {
		return "", nil, fmt.Errorf("%q is not a postgres:// URL", store.RedactURL(admin))
	}
	db, err := sql.Open("pgx", admin)
	if err != nil {
		return "", nil, err
	}
	name := fmt.Sprintf("%s_%d", prefix, os.Getpid())
	if _, err := db.Exec(`CREATE DATABASE ` + name); err != nil {
		db.Close()
		return "", nil, fmt.Errorf("create database: %w", err)
	}
	u.Path = "/" + name
	return u.String(), func() {
		_, _ = db.Exec(`DROP DATABASE IF EXISTS ` + name + ` WITH (FORCE)`)
		db.Close()
	}, nil
}
