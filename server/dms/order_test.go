package dms_test

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"sdkpp/server/dms"
	"sdkpp/server/servertest/apicheck"
	"sdkpp/wire"
)

// blockingNotifier holds the dispatch of the first event to hold's users until release closes;
// it hands every dispatch to rec.
type blockingNotifier struct {
	*recorder
	hold    uint64
	once    sync.Once
	held    chan struct{} // closed once the dispatch is held
	release chan struct{}
}

func (n *blockingNotifier) DispatchMany(userIDs []uint64, event string, data any) {
	if userIDs[len(userIDs)-1] == n.hold {
		n.once.Do(func() {
			close(n.held)
			<-n.release
		})
	}
	n.recorder.DispatchMany(userIDs, event, data)
}

// A node alone orders each DM channel's changes by itself (its key, not the service's): a change
// whose events are still being handed on holds back the next change of its channel only, while
// another channel's DM is committed and dispatched.
func TestChannelsDoNotWaitForEachOther(t *testing.T) {
	e := newEnv(t)
	ann, bob, cat := e.user("ann", e.app), e.user("bob", e.app), e.user("cat", e.app)
	n := &blockingNotifier{recorder: &recorder{}, hold: bob.id, held: make(chan struct{}), release: make(chan struct{})}
	svc := &dms.Service{Store: e.w.Store, Clock: e.w.Clock, IDs: e.w.IDs, Logger: e.w.Log, Notifier: n}
	mux := http.NewServeMux()
	svc.Register(mux)
	api := apicheck.Client{T: t, Handler: mux}
	channel := func(from, to player) string {
		var ch wire.DMChannel
		api.Do("POST", "/users/@me/channels", from.auth, map[string]any{"recipient_id": fmt.Sprint(to.id)}).OK(t, 200, &ch)
		return fmt.Sprintf("/channels/%d/messages", ch.ID)
	}
	send := func(path string, from player, content string) int {
		req := httptest.NewRequest("POST", path, strings.NewReader(`{"content":"`+content+`"}`))
		req.Header.Set("Authorization", from.auth)
		req.Header.Set("Content-Type", "application/json")
		rec := httptest.NewRecorder()
		mux.ServeHTTP(rec, req)
		return rec.Code
	}
	annBob, annCat := channel(ann, bob), channel(ann, cat)

	done := make(chan int)
	go func() { done <- send(annBob, ann, "held") }() // owned by this test, which reads done
	<-n.held
	require.Equal(t, http.StatusOK, send(annCat, ann, "goes on"), "another channel")
	assert.Equal(t, []string{fmt.Sprint("MESSAGE_CREATE ", []uint64{ann.id, cat.id})}, n.take())
	close(n.release)
	require.Equal(t, http.StatusOK, <-done)
	assert.Equal(t, []string{fmt.Sprint("MESSAGE_CREATE ", []uint64{ann.id, bob.id})}, n.take())
}
