package lobbies_test

import (
	"context"
	"net/http"
	"strconv"
	"testing"

	"github.com/stretchr/testify/require"

	"sdkpp/server/devseed"
	"sdkpp/server/httpx"
	"sdkpp/server/lobbies"
	"sdkpp/server/servertest/apicheck"
	"sdkpp/server/servertest/world"
)

// BenchmarkAcceptOverGateway times the accept of a lobby message sent over a gateway session, as
// the gateway's reader does it for the requests a connection sent together: the session's memo in
// the context, groups of 8 accepted one after another, then delivered and answered (their
// deliveries, commit and answers are not timed). Its allocations are the accept's per message.
func BenchmarkAcceptOverGateway(b *testing.B) {
	const group = 8
	svc, ctx, auth, lobbyID := gatewaySession(b)
	bodies := make([][]byte, group)
	answers := make([]func() (int, []byte), 0, group)
	finish := func() {
		svc.DeliverAccepted()
		for _, a := range answers {
			if status, out := a(); status != http.StatusOK {
				require.Equal(b, http.StatusOK, status, "%s", out)
			}
		}
		answers = answers[:0]
	}
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		if len(answers) == group {
			b.StopTimer()
			finish()
			nonceBodies(bodies, int64(i)) // the reader's buffer: the bytes are the request's
			b.StartTimer()
		}
		if i == 0 {
			nonceBodies(bodies, -group)
		}
		answers = append(answers, svc.SendOverGateway(ctx, auth, lobbyID, bodies[len(answers)]))
	}
	finish()
}

// nonceBodies fills bodies with messages' request bodies, their enforced nonces first, first+1
// and so on, reusing the bodies' arrays.
func nonceBodies(bodies [][]byte, first int64) {
	for j := range bodies {
		b := strconv.AppendInt(append(bodies[j][:0], `{"content":"hello","enforce_nonce":true,"nonce":"`...), first+int64(j), 10)
		bodies[j] = append(b, `"}`...)
	}
}

// gatewaySession is a started lobby service on an in-memory store, and what a gateway session of
// a member of one of its lobbies sends a message with: the context with the session's memo, its
// credential and the lobby's id.
func gatewaySession(tb testing.TB) (svc *lobbies.Service, ctx context.Context, auth, lobbyID string) {
	w := world.New(tb)
	app := w.App(devseed.AppSpec{Name: "Game"})
	svc = &lobbies.Service{Store: w.Store, Clock: w.Clock, IDs: w.IDs, Logger: w.Log, Notifier: &recorder{}}
	onPostgres(svc)
	svc.Start()
	tb.Cleanup(svc.Close)
	mux := http.NewServeMux()
	svc.Register(mux)
	auth = w.Token(w.User("alice"), app, world.SocialScopes())
	var l lobby
	apicheck.Client{T: tb, Handler: mux}.Do("PUT", "/lobbies", auth, map[string]any{"secret": "s"}).OK(tb, http.StatusOK, &l)
	return svc, httpx.WithSessionMemo(context.Background(), &httpx.SessionMemo{}), auth, l.ID
}
