package gateway

import (
	"strconv"
	"testing"

	"github.com/stretchr/testify/require"

	gwire "sdkpp/wire/gateway"
)

// The hook of a user's first session (Config.OnConnection) may wait, for the store, say, while
// the session gets dispatches: the connection writes them meanwhile. Its loop waited for the
// hook, and a busy lobby pushed more than ReplayLimit dispatches to the session in that time: the
// connection was closed "too far behind", its session lost with them.
func TestSessionIsWrittenWhileItsOnlineHookWaits(t *testing.T) {
	const limit, members = 20, 9 // more members than a dispatch writes to itself (maxWriteNow)
	slow := uint64(members)
	entered, release := make(chan struct{}), make(chan struct{})
	e := newEnv(t, func(c *Config) {
		c.ReplayLimit = limit
		c.OnConnection = func(who Identity, connected bool) {
			if who.UserID == slow && connected {
				close(entered)
				<-release
			}
		}
	})
	defer func() {
		select {
		case <-release:
		default:
			close(release)
		}
	}()
	users := make([]uint64, members)
	for i := range users {
		users[i] = uint64(i + 1)
	}
	for _, u := range users[:members-1] {
		c := e.dial()
		c.identify("user-" + strconv.FormatUint(u, 10))
		t.Cleanup(c.drop)
	}
	c := e.dial()
	c.send(gwire.OpIdentify, identifyData("user-"+strconv.FormatUint(slow, 10)))
	<-entered
	for i := range 2 * limit {
		e.hub.DispatchAppMany(testApp, users, "TEST_EVENT", map[string]int{"i": i})
		waitFor(t, "dispatch "+strconv.Itoa(i)+" taken for writing", func() bool { return e.hub.Stats().QueuedMax == 0 })
	}
	close(release)
	c.expectDispatch(gwire.EventReady, 1)
	for i := range 2 * limit {
		p := c.expectDispatch("TEST_EVENT", int64(i+2))
		require.JSONEq(t, `{"i":`+strconv.Itoa(i)+`}`, string(p.D))
	}
}
