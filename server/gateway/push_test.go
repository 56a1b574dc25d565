package gateway

import (
	"runtime"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"

	"sdkpp/server/gateway/internal/busmsg"
)

// A push allocates per dispatch, not per receiver: a dispatch to 200 users, each of whom has a
// session, allocates no more than one to 10 (each session reached is marked with the
// dispatch's stamp, where a set of the users seen was made per dispatch). Its sessions wait to
// be resumed, so that nothing is written: the push itself is measured.
func TestPushAllocatesPerDispatch(t *testing.T) {
	e := newEnv(t, nil)
	h := e.hub
	const most = 200
	users := make([]uint64, most)
	h.mu.Lock()
	for i := range users {
		users[i] = uint64(1000 + i)
		h.addLocked(&session{id: "s" + strconv.Itoa(i), who: Identity{UserID: users[i], AppID: testApp},
			expires: e.clk.Now().Add(time.Hour)})
	}
	h.mu.Unlock()
	bytesPerPush := func(n int) uint64 {
		ds := []busmsg.Dispatch{
			{Users: users[:n], Kind: busmsg.ToApp, App: testApp, Event: "A", Data: []byte("1")},
			{Users: append(users[:n:n], users[:n]...), Kind: busmsg.ToApp, App: testApp, Event: "B", Data: []byte("2")},
		}
		const runs = 200
		for range h.cfg.ReplayLimit { // every replay buffer full: it allocates no more
			h.push(ds, 0)
		}
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		for range runs {
			h.push(ds, 0)
		}
		runtime.ReadMemStats(&after)
		return (after.TotalAlloc - before.TotalAlloc) / runs
	}
	small, large := bytesPerPush(10), bytesPerPush(most)
	assert.LessOrEqual(t, large, small+64, "bytes per push: %d to 10 users, %d to %d", small, large, most)
	h.mu.Lock()
	defer h.mu.Unlock()
	for _, u := range users[:10] {
		for _, s := range h.byUser[u] {
			assert.Equal(t, int64(2*(2*h.cfg.ReplayLimit+2*200)), s.Seq(), "each dispatch once per session, a user listed twice too")
		}
	}
}

// A push removes the sessions of its users whose resume window has passed as it meets them,
// whatever their place among the user's sessions, and still pushes to every other one.
func TestPushRemovesExpiredSessions(t *testing.T) {
	e := newEnv(t, nil)
	h := e.hub
	now := e.clk.Now()
	expired := map[string]bool{"s0": true, "s2": true, "s4": true}
	h.mu.Lock()
	for i := range 5 {
		id := "s" + strconv.Itoa(i)
		expires := now.Add(time.Hour)
		if expired[id] {
			expires = now.Add(-time.Second)
		}
		h.addLocked(&session{id: id, who: Identity{UserID: 7, AppID: testApp}, expires: expires})
	}
	h.mu.Unlock()
	h.push([]busmsg.Dispatch{{Users: []uint64{7}, Kind: busmsg.ToApp, App: testApp, Event: "A", Data: []byte("1")}}, 0)
	h.mu.Lock()
	defer h.mu.Unlock()
	var kept []string
	for _, s := range h.byUser[7] {
		kept = append(kept, s.id)
		assert.Equal(t, int64(1), s.Seq(), "session %s got the dispatch once", s.id)
	}
	assert.ElementsMatch(t, []string{"s1", "s3"}, kept)
	for id := range expired {
		assert.Nil(t, h.sessions[id], "%s removed", id)
	}
}
