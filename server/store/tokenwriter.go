package store

import (
	"context"
	"strings"

	"sdkpp/server/internal/groupwrite"
)

// tokenGroups are the token writer's groups: at most 64 tokens, and two yields to let the
// requests about to store a token join (a group of three became one of four to six at the
// token endpoint's benchmark, for less CPU per token on both databases).
var tokenGroups = groupwrite.Options{Max: 64, Yields: 2}

// newTokenWriter returns the writer that InsertToken stores tokens through outside
// transactions (the token endpoint's one write per request): the tokens that callers insert at
// once are stored together, on PostgreSQL in one statement, on SQLite in one member of the
// group commit, and each caller returns once the commit that holds its token is done. A taken
// id fails its own token only.
func (s *DB) newTokenWriter() *groupwrite.Writer[*Token] {
	if s.group != nil {
		return groupwrite.New(tokenGroups, s.insertTokensSQLite)
	}
	return groupwrite.New(tokenGroups, s.insertTokensPostgres)
}

// insertTokensSQLite stores tokens in one turn of the group commit: one statement each, run back
// to back on the writer. A statement that SQLite undid alone (a taken id) fails its token only;
// any other failure fails the group, whose writes are then rolled back with it.
func (s *DB) insertTokensSQLite(ctx context.Context, tokens []*Token, errs []error) error {
	return s.group.run(ctx, false, func(st Store) error {
		tx := st.(*DB)
		for i, t := range tokens {
			if err := tx.insertToken(ctx, t); err != nil {
				if !statementUndone(err) {
					return err
				}
				errs[i] = err
			}
		}
		return nil
	})
}

// insertTokensPostgres stores tokens in one statement (one round trip, one commit). When a
// token's id is taken, the statement stores none of them: each is then inserted alone, so that
// each caller gets its own token's outcome.
func (s *DB) insertTokensPostgres(ctx context.Context, tokens []*Token, errs []error) error {
	if len(tokens) == 1 {
		errs[0] = s.insertToken(ctx, tokens[0])
		return nil
	}
	var q strings.Builder
	q.WriteString(`INSERT INTO tokens (` + tokenColumns + `) VALUES `)
	args := make([]any, 0, 12*len(tokens))
	for i, t := range tokens {
		if i > 0 {
			q.WriteString(",")
		}
		q.WriteString(tokenPlaceholders)
		args = append(args, tokenArgs(t)...)
	}
	_, err := s.q.ExecContext(ctx, q.String(), args...)
	if !s.isUnique(err) {
		return err
	}
	for i, t := range tokens {
		errs[i] = s.insertToken(ctx, t)
	}
	return nil
}
