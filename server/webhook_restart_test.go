package server_test

import (
	"net"
	"net/url"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"sdkpp/server/servertest"
)

// TestWebhookSurvivesRestart queues APPLICATION_DEAUTHORIZED while the receiver is down, restarts
// the service on the same data directory, brings the receiver up, and sees the event arrive exactly
// once (rules WH-1, ST-2).
func TestWebhookSurvivesRestart(t *testing.T) {
	dir := t.TempDir()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	dead := "http://" + ln.Addr().String() + "/webhook"
	ln.Close() // nothing listens there now
	e := servertest.Start(t, servertest.WithDataDir(dir), servertest.WithWebhookURL(dead))
	tr := linkedTokens(t, e, "alice", "openid sdk.social_layer")
	postForm(t, e.APIURL+"/oauth2/token/revoke", url.Values{"token": {tr.AccessToken}, "client_id": {e.App.ID.String()}})
	// Wait until the first attempt failed.
	require.Eventually(t, func() bool {
		due, err := e.Server.Store().DueWebhooks(t.Context(), e.Clock.Now().Add(time.Hour), 10)
		return err == nil && len(due) == 1 && due[0].Attempts >= 1
	}, 5*time.Second, 10*time.Millisecond, "no failed attempt recorded")

	old := e.Server
	require.NoError(t, old.Close())
	recv := servertest.NewReceiver(t, e.App.PublicKey)
	e2 := servertest.Start(t, servertest.WithDataDir(dir), servertest.WithWebhookURL(recv.URL))
	require.Equal(t, e.App.ID, e2.App.ID, "dev seeding is not idempotent on an existing data directory")
	require.Equal(t, e.App.ClientSecret, e2.App.ClientSecret, "dev seeding is not idempotent on an existing data directory")
	got := recv.Next(t, 10*time.Second) // rules WH-1, ST-2
	require.True(t, got.SignatureOK, "rule WH-1: webhook after restart %s", got.Body)
	require.NotNil(t, got.User, "rule WH-1: webhook after restart %s", got.Body)
	require.Equal(t, e.User("alice").ID, got.User.ID, "rule WH-1: webhook after restart %s", got.Body)
	// Exactly once: when nothing is pending any more, the receiver got one request.
	e2.SettleWebhooks(t)
	require.Equal(t, 1, recv.Count(), "received %d deliveries", recv.Count())
	// The refresh token died with the revocation and stays dead after the restart (rule AU-6).
	r := refresh(t, e2, tr.RefreshToken)
	require.Equal(t, 400, r.Status, "rule AU-6: refresh after restart: %d", r.Status)
}
