package lobbies_test

import (
	"context"
	"net/http"
	"strconv"
	"testing"

	"github.com/stretchr/testify/require"

	"sdkpp/server/devseed"
	"sdkpp/server/lobbies"
	"sdkpp/server/servertest/apicheck"
	"sdkpp/server/servertest/world"
)

// BenchmarkSendOverGateway times a lobby message taken over a gateway session, from its bytes to
// its answer, its commit included (one message to a commit: the fan-out bench's groups spread
// the commit's cost over more); its allocations are the service's per message.
func BenchmarkSendOverGateway(b *testing.B) {
	w := world.New(b)
	app := w.App(devseed.AppSpec{Name: "Game"})
	svc := &lobbies.Service{Store: w.Store, Clock: w.Clock, IDs: w.IDs, Logger: w.Log, Notifier: &recorder{}}
	onPostgres(svc)
	svc.Start()
	b.Cleanup(svc.Close)
	mux := http.NewServeMux()
	svc.Register(mux)
	auth := w.Token(w.User("alice"), app, world.SocialScopes())
	var l lobby
	apicheck.Client{T: b, Handler: mux}.Do("PUT", "/lobbies", auth, map[string]any{"secret": "s"}).OK(b, http.StatusOK, &l)
	ctx := context.Background()
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ { // one allocation of each op is its body's
		body := strconv.AppendInt(append(make([]byte, 0, 64), `{"content":"hello","enforce_nonce":true,"nonce":"`...), int64(i), 10)
		status, out := svc.SendOverGateway(ctx, auth, l.ID, append(body, `"}`...))()
		if status != http.StatusOK {
			require.Equal(b, http.StatusOK, status, "%s", out)
		}
	}
}
