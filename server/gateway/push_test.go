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
		for s := range h.byUser[u] {
			assert.Equal(t, int64(2*(2*h.cfg.ReplayLimit+2*200)), s.Seq(), "each dispatch once per session, a user listed twice too")
		}
	}
}
