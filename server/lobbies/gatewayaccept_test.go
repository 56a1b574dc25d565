//go:build !race

package lobbies_test

import (
	"net/http"
	"testing"

	"github.com/stretchr/testify/require"
)

// The accept of a lobby message over an identified gateway session allocates only the message:
// the request's parts and the message with its pending commit (one allocation), its encoding, its
// timestamp, its content and its nonce, and the answer's function. The session's token is the
// memo's, not a copy, and needs no context of its own; the author's object is its member's, made
// at its first message; the answer waits for the pending commit itself, not for a function of it.
func TestAcceptOverGatewayAllocs(t *testing.T) {
	// On PostgreSQL a message also reads the database's shared epoch (a context for it, and a
	// query when its memo is stale): about 4 allocations more a message, not counted here.
	sqliteOnly(t, "counts SQLite's accept; PostgreSQL's adds the shared epoch's read")
	const group = 8
	svc, ctx, auth, lobbyID := gatewaySession(t)
	bodies := make([][]byte, group)
	answers := make([]func() (int, []byte), 0, 2*group)
	send := func(n int) { nonceBodies(bodies, int64(n*group)) }
	n := 0
	send(n) // the first message reads the lobby, its member and the author
	for _, b := range bodies {
		answers = append(answers, svc.SendOverGateway(ctx, auth, lobbyID, b))
	}
	for runs := 0; runs < 20; runs++ {
		svc.DeliverAccepted()
		for _, a := range answers {
			status, out := a()
			require.Equal(t, http.StatusOK, status, "%s", out)
		}
		answers = answers[:0]
		allocs := testing.AllocsPerRun(1, func() { // a warm-up group, then the one counted
			n++
			send(n)
			for _, b := range bodies {
				answers = append(answers, svc.SendOverGateway(ctx, auth, lobbyID, b))
			}
		})
		// The nonces' memory and the delivery's queue grow now and then: at most one allocation
		// per message more.
		require.LessOrEqual(t, allocs, float64(group*7), "allocations accepting %d messages", group)
	}
}
