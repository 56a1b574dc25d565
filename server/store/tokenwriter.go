package store

import (
	"context"
	"slices"
	"strings"
	"sync"
	"time"

	"sdkpp/server/internal/groupwrite"
)

// tokenGroups are the token writer's groups: at most 64 tokens, and two yields to let the
// requests about to store a token join (in a store-level benchmark of 8 writers, PostgreSQL's
// groups grew from about 4 tokens to about 6, for less CPU per token on both databases). These
// are SQLite's: PostgreSQL's also wait for the last group's clients (pgTokenGroups). On SQLite,
// waiting up to 200 µs for them lowered bench/auth's rate on an idle machine from about 0.55x to
// 0.47x of the bare handler (three A/B turns).
var tokenGroups = groupwrite.Options{Max: 64, Yields: 2}

// pgTokenGroups are PostgreSQL's token groups: those of SQLite, and a flusher waits up to 200 µs
// for the callers of the last group to come back with their next tokens (Gather). There a
// statement costs the server about 40 µs, and each of its rows about 6 µs: without the wait, 8
// clients' requests form groups of about 4 that take turns, each flushed while the other's
// clients are away. SQLite does not wait (above): its commit is in this process and cheap. In
// bench/auth on PostgreSQL (12 A/B pairs, load average 9 to 16, medians): this process's CPU per
// token 102 -> 90 µs, the server's 33 -> 24 µs, CPU ratio against the bare handler (server's CPU
// included) 0.43x -> 0.50x, rate ratio 0.56x -> 0.66x. On a quieter machine (load 3 to 7, 4
// pairs) the server's CPU fell alike (28 -> 20 µs) and the rate ratio went 0.45x -> 0.50x, but in
// the quietest pair (load 2.8) it was 0.38x against 0.40x: there the rate is bound by the chain
// of one group's round trip after another more than by CPU. Two groups in flight at once (on two
// connections) were tried too: more CPU per token, no higher rate, at any load seen.
var pgTokenGroups = groupwrite.Options{Max: tokenGroups.Max, Yields: tokenGroups.Yields, Gather: 200 * time.Microsecond}

// newTokenWriter returns the writer that InsertToken stores tokens through outside
// transactions (the token endpoint's one write per request): the tokens that callers insert at
// once are stored together, in one statement (on SQLite, in one member of the group commit),
// and each caller returns once the commit that holds its token is done. A taken id fails its
// own token only.
func (s *DB) newTokenWriter() *groupwrite.Writer[*Token] {
	if s.group != nil {
		return groupwrite.New(tokenGroups, s.insertTokensSQLite)
	}
	return groupwrite.New(pgTokenGroups, s.insertTokensPostgres)
}

// insertTokensSQLite stores tokens in one statement (prepared once per group size, as every
// statement is): a transaction of its own when the writer has no group open (runAlone), else
// in that group. When the statement fails on an error SQLite undoes alone (a taken id), each
// token is inserted alone, so that each caller gets its own token's outcome; any other failure
// fails the group, none of whose tokens is then stored.
func (s *DB) insertTokensSQLite(ctx context.Context, tokens []*Token, errs []error) error {
	return s.group.runAlone(ctx, func(st Store, alone bool) error {
		tx := st.(*DB)
		err := tx.insertTokenRows(ctx, tokens)
		if err == nil || !statementUndone(err) {
			return err
		}
		for i, t := range tokens {
			if err := tx.insertToken(ctx, t); err != nil {
				// In a group, an error SQLite does not undo alone fails the group, which is
				// rolled back; alone, the tokens stored before stay stored, and each fails alone.
				if !alone && !statementUndone(err) {
					return err
				}
				errs[i] = err
			}
		}
		return nil
	})
}

// insertTokensPostgres stores tokens in one statement (one round trip, one commit), bound in
// binary on the connection's protocol (insertTokenRowsPostgres). When a token's id is taken, the
// statement stores none of them: each is then inserted alone, so that each caller gets its own
// token's outcome.
func (s *DB) insertTokensPostgres(ctx context.Context, tokens []*Token, errs []error) error {
	err := s.insertTokenRowsPostgres(ctx, tokens)
	if !s.isUnique(err) {
		return err
	}
	for i, t := range tokens {
		errs[i] = s.insertToken(ctx, t)
	}
	return nil
}

// insertTokenRows inserts tokens in one statement.
func (s *DB) insertTokenRows(ctx context.Context, tokens []*Token) error {
	if len(tokens) == 1 {
		return s.insertToken(ctx, tokens[0])
	}
	_, err := s.q.ExecContext(ctx, tokenInsert(len(tokens)), tokenRowsArgs(tokens)...)
	return err
}

// tokenRowsArgs returns the arguments of tokens' rows, in order.
func tokenRowsArgs(tokens []*Token) []any {
	args := make([]any, 0, tokenArgCount*len(tokens))
	for i, t := range tokens {
		var prev *Token
		if i > 0 {
			prev = tokens[i-1]
		}
		args = appendTokenArgs(args, t, prev)
	}
	return args
}

// tokenArgCount is how many arguments a token's row takes.
const tokenArgCount = 12

// appendTokenArgs appends t's arguments, in tokenColumns' order, to args, in the drivers' own
// types (int64), with those t shares with prev, the token whose arguments args ends with (a
// group's tokens are mostly one client's, of one authorization, made at once), boxed once: an
// allocation per value saved.
func appendTokenArgs(args []any, t, prev *Token) []any {
	n := len(args)
	args = append(args, make([]any, tokenArgCount)...)
	row, was := args[n:], []any(nil)
	if prev != nil {
		was = args[n-tokenArgCount : n]
	}
	box := func(i int, v int64) {
		if was != nil {
			if w, ok := was[i].(int64); ok && w == v {
				row[i] = was[i]
				return
			}
		}
		row[i] = v
	}
	box(0, int64(t.ID))
	row[1] = t.Hash
	box(2, int64(b2i(t.Legacy)))
	if prev != nil && t.Kind == prev.Kind {
		row[3] = was[3]
	} else {
		row[3] = t.Kind
	}
	box(4, int64(t.AuthorizationID))
	box(5, int64(t.AppID))
	box(6, int64(t.UserID))
	if prev != nil && slices.Equal(t.Scopes, prev.Scopes) {
		row[7] = was[7]
	} else {
		row[7] = joinScopes(t.Scopes)
	}
	box(8, ts(t.ExpiresAt))
	box(9, ts(t.CreatedAt))
	box(10, int64(t.GrantID))
	box(11, ts(t.UsedAt))
	return args
}

// tokenInserts is the text of the INSERT of a group's most tokens: that of n tokens is its start
// (tokenInsert), so that each is made once, and all share their bytes.
var tokenInserts = sync.OnceValue(func() string {
	return `INSERT INTO tokens (` + tokenColumns + `) VALUES ` + tokenPlaceholders +
		strings.Repeat(","+tokenPlaceholders, tokenGroups.Max-1)
})

// tokenInsert returns the text of the INSERT of n tokens (1 to tokenGroups.Max).
func tokenInsert(n int) string {
	q := tokenInserts()
	return q[:len(q)-(tokenGroups.Max-n)*(1+len(tokenPlaceholders))]
}
