package store

import (
	"context"
	"fmt"
	"strings"
)

// Open opens the store a service is configured with. storeURL chooses the database:
//
//   - "" or "sqlite:" — SQLite in dataDir ("" = in memory), the embedded default;
//   - "sqlite:DIR" (or "sqlite://DIR") — SQLite in DIR;
//   - "postgres://..." or "postgresql://..." — PostgreSQL, taking nodeID (OpenPostgres).
//
// Errors name the URL with its password hidden (RedactURL).
func Open(ctx context.Context, storeURL, dataDir string, nodeID int) (*DB, error) {
	switch {
	case storeURL == "":
		return OpenSQLite(ctx, dataDir)
	case strings.HasPrefix(storeURL, "sqlite:"):
		dir := strings.TrimPrefix(strings.TrimPrefix(storeURL, "sqlite:"), "//")
		if dir == "" {
			dir = dataDir
		}
		return OpenSQLite(ctx, dir)
	case strings.HasPrefix(storeURL, "postgres://"), strings.HasPrefix(storeURL, "postgresql://"):
		return OpenPostgres(ctx, storeURL, PostgresOptions{NodeID: nodeID})
	default:
		return nil, fmt.Errorf("store: %q is not a store URL (sqlite:DIR or postgres://...)", RedactURL(storeURL))
	}
}
