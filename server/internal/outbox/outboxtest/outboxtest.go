// Package outboxtest has a Stager for the tests of the services that stage their events.
package outboxtest

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"sdkpp/server/internal/outbox"
	"sdkpp/server/store"
)

// Stager stages as the gateway of a cluster does: a change's dispatches are stored in its
// transaction's outbox (each row's data is the dispatch's event name), and recorded once
// published after the commit.
type Stager struct {
	// Fail, when set, is returned once the dispatches are stored: the change's transaction fails.
	Fail error

	mu        sync.Mutex
	published []string
}

// Stage implements outbox.Stager.
func (s *Stager) Stage(ctx context.Context, tx outbox.Tx, key string, ds []outbox.Dispatch) (func(), error) {
	for _, d := range ds {
		if _, err := tx.AddOutbox(ctx, key, []byte(d.Event), time.Time{}); err != nil {
			return nil, fmt.Errorf("outboxtest: %w", err)
		}
	}
	if s.Fail != nil {
		return nil, s.Fail
	}
	return func() {
		s.mu.Lock()
		defer s.mu.Unlock()
		for _, d := range ds {
			s.published = append(s.published, Line(d))
		}
	}, nil
}

// Line is how Take lists a published dispatch: "EVENT [users]", with " app N" or " intent N"
// when set.
func Line(d outbox.Dispatch) string {
	line := fmt.Sprint(d.Event, " ", d.Users)
	if d.App != 0 {
		line += fmt.Sprint(" app ", d.App)
	}
	if d.Intent != 0 {
		line += fmt.Sprint(" intent ", d.Intent)
	}
	return line
}

// Take returns, and forgets, the dispatches published since the last call, in their order.
func (s *Stager) Take() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := s.published
	s.published = nil
	return out
}

// Staged returns what st's outbox holds under key, oldest first: as Stager stores them, the
// event names of the dispatches that committed changes staged and nobody deleted.
func Staged(t testing.TB, st store.OutboxStore, key string) []string {
	t.Helper()
	rows, err := st.ListOutbox(context.Background(), key)
	require.NoError(t, err)
	var out []string
	for _, r := range rows {
		out = append(out, string(r.Data))
	}
	return out
}
