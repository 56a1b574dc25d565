package dms_test

import (
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"sdkpp/server/dms"
	"sdkpp/server/internal/outbox/outboxtest"
	"sdkpp/server/servertest/apicheck"
	"sdkpp/wire"
)

// A DM's events are staged in its transaction, under its channel's order lock key, and published
// after its commit; a change whose events cannot be staged fails whole: no message, no webhook
// (rule WH-2: queued in the same transaction), no dispatch.
func TestDMEventsAreStagedWithTheirChange(t *testing.T) {
	e := newEnv(t)
	st := &outboxtest.Stager{}
	svc := &dms.Service{Store: e.w.Store, Clock: e.w.Clock, IDs: e.w.IDs, Logger: e.w.Log, Notifier: struct {
		dms.Notifier // not called: the events are published from the stage
		*outboxtest.Stager
	}{e.rec, st}}
	mux := http.NewServeMux()
	svc.Register(mux)
	api := apicheck.Client{T: t, Handler: mux}
	a, b := e.user("ann", e.app), e.user("bob", e.app)
	var ch wire.DMChannel
	api.Do("POST", "/users/@me/channels", a.auth, map[string]any{"recipient_id": fmt.Sprint(b.id)}).OK(t, 200, &ch)
	path := fmt.Sprintf("/channels/%d/messages", ch.ID)

	tests := []struct {
		name       string
		fail       error
		status     int
		staged     []string
		dispatched []string
		history    int
	}{
		{"staged and published", nil, http.StatusOK, []string{"MESSAGE_CREATE"},
			[]string{fmt.Sprint("MESSAGE_CREATE ", []uint64{a.id, b.id})}, 1},
		{"cannot be staged", errors.New("the outbox is unreachable"), http.StatusInternalServerError,
			[]string{"MESSAGE_CREATE"}, nil, 1},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			st.Fail = tc.fail
			req := httptest.NewRequest("POST", path, strings.NewReader(`{"content":"hi"}`))
			req.Header.Set("Authorization", a.auth)
			req.Header.Set("Content-Type", "application/json")
			rec := httptest.NewRecorder()
			mux.ServeHTTP(rec, req)
			require.Equal(t, tc.status, rec.Code, rec.Body.String())
			require.Equal(t, tc.staged, outboxtest.Staged(t, e.st, fmt.Sprint("dm:", ch.ID)), "the outbox holds what committed changes staged")
			require.Equal(t, tc.dispatched, st.Take())
			require.Empty(t, e.rec.take(), "nothing dispatched but from the stage")
			var list []wire.Message
			api.Do("GET", path+"?limit=10", b.auth, nil).OK(t, 200, &list)
			require.Len(t, list, tc.history)
			require.Equal(t, 1, e.webhooks(wire.EventGameDirectMessageCreate), "rule WH-2")
		})
	}
}
