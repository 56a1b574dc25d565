package dms_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"sdkpp/server/dms"
	"sdkpp/server/internal/outbox"
	"sdkpp/server/servertest/apicheck"
	"sdkpp/wire"
)

// stager is a recorder that stages, as the gateway of a cluster does: each change's dispatches
// are stored in its transaction's outbox, and recorded once published after the commit.
type stager struct {
	recorder
	fail error // returned once the dispatches are stored: the change's transaction fails
}

func (s *stager) Stage(ctx context.Context, tx outbox.Tx, key string, ds []outbox.Dispatch) (func(), error) {
	for _, d := range ds {
		if _, err := tx.AddOutbox(ctx, key, []byte(d.Event), time.Time{}); err != nil {
			return nil, err
		}
	}
	if s.fail != nil {
		return nil, s.fail
	}
	return func() {
		for _, d := range ds {
			s.DispatchMany(d.Users, d.Event, d.Data)
		}
	}, nil
}

// A DM's events are staged in its transaction, under the "dms" order lock key, and published
// after its commit; a change whose events cannot be staged fails whole: no message, no webhook
// (rule WH-2: queued in the same transaction), no dispatch.
func TestDMEventsAreStagedWithTheirChange(t *testing.T) {
	e := newEnv(t)
	st := &stager{}
	svc := &dms.Service{Store: e.w.Store, Clock: e.w.Clock, IDs: e.w.IDs, Logger: e.w.Log, Notifier: st}
	mux := http.NewServeMux()
	svc.Register(mux)
	api := apicheck.Client{T: t, Handler: mux}
	a, b := e.user("ann", e.app), e.user("bob", e.app)
	var ch wire.DMChannel
	api.Do("POST", "/users/@me/channels", a.auth, map[string]any{"recipient_id": fmt.Sprint(b.id)}).OK(t, 200, &ch)
	path := fmt.Sprintf("/channels/%d/messages", ch.ID)
	staged := func() []string {
		t.Helper()
		rows, err := e.st.ListOutbox(context.Background(), "dms")
		require.NoError(t, err)
		var out []string
		for _, r := range rows {
			out = append(out, string(r.Data))
		}
		return out
	}

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
			st.fail = tc.fail
			req := httptest.NewRequest("POST", path, strings.NewReader(`{"content":"hi"}`))
			req.Header.Set("Authorization", a.auth)
			req.Header.Set("Content-Type", "application/json")
			rec := httptest.NewRecorder()
			mux.ServeHTTP(rec, req)
			require.Equal(t, tc.status, rec.Code, rec.Body.String())
			require.Equal(t, tc.staged, staged(), "the outbox holds what committed changes staged")
			require.Equal(t, tc.dispatched, st.take())
			var list []wire.Message
			api.Do("GET", path+"?limit=10", b.auth, nil).OK(t, 200, &list)
			require.Len(t, list, tc.history)
			require.Equal(t, 1, e.webhooks(wire.EventGameDirectMessageCreate), "rule WH-2")
		})
	}
}
