package server_test

import (
	"net"
	"net/url"
	"testing"
	"time"

	"sdkpp/server/servertest"
)

// TestWebhookSurvivesRestart queues APPLICATION_DEAUTHORIZED while the receiver is down, restarts
// the service on the same data directory, brings the receiver up, and sees the event arrive exactly
// once (rules WH-1, ST-2).
func TestWebhookSurvivesRestart(t *testing.T) {
	dir := t.TempDir()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	dead := "http://" + ln.Addr().String() + "/webhook"
	ln.Close() // nothing listens there now
	e := servertest.Start(t, servertest.WithDataDir(dir), servertest.WithWebhookURL(dead))
	tr := linkedTokens(t, e, "alice", "openid sdk.social_layer")
	postForm(t, e.APIURL+"/oauth2/token/revoke", url.Values{"token": {tr.AccessToken}, "client_id": {e.App.ID.String()}})
	// Wait until the first attempt failed.
	deadline := time.Now().Add(5 * time.Second)
	for {
		due, err := e.Server.Store().DueWebhooks(t.Context(), e.Clock.Now().Add(time.Hour), 10)
		if err != nil {
			t.Fatal(err)
		}
		if len(due) == 1 && due[0].Attempts >= 1 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("no failed attempt recorded: %+v", due)
		}
		time.Sleep(10 * time.Millisecond)
	}

	old := e.Server
	if err := old.Close(); err != nil {
		t.Fatal(err)
	}
	recv := servertest.NewReceiver(t, e.App.PublicKey)
	e2 := servertest.Start(t, servertest.WithDataDir(dir), servertest.WithWebhookURL(recv.URL))
	if e2.App.ID != e.App.ID || e2.App.ClientSecret != e.App.ClientSecret {
		t.Fatal("dev seeding is not idempotent on an existing data directory")
	}
	got := recv.Next(t, 10*time.Second) // rules WH-1, ST-2
	if !got.SignatureOK || got.User == nil || got.User.ID != e.User("alice").ID {
		t.Fatalf("rule WH-1: webhook after restart %s", got.Body)
	}
	recv.None(t, 500*time.Millisecond) // exactly once
	if recv.Count() != 1 {
		t.Fatalf("received %d deliveries", recv.Count())
	}
	// The refresh token died with the revocation and stays dead after the restart (rule AU-6).
	if r := refresh(t, e2, tr.RefreshToken); r.Status != 400 {
		t.Fatalf("rule AU-6: refresh after restart: %d", r.Status)
	}
}
