package gateway

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestOnDrainedFollowsEachRead: OnDrained runs once the dispatches of the frames that arrived
// together are done, before the client reads on, and when the connection ends; never between
// two dispatches of one read.
func TestOnDrainedFollowsEachRead(t *testing.T) {
	next := make(chan struct{})
	msg := func(s int) []byte {
		return appendFrame(nil, bytes.Replace(benchFrame(), []byte(`"s":1234`), []byte(`"s":`+strconv.Itoa(s)), 1))
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		conn, rw, ok := acceptRaw(t, w, r)
		if !ok {
			return
		}
		defer conn.Close()
		out := appendFrame(nil, []byte(`{"op":10,"d":{"heartbeat_interval":3600000}}`))
		out = appendFrame(out, []byte(`{"op":0,"d":{"session_id":"s","resume_gateway_url":""},"s":1,"t":"READY"}`))
		if !assert.NoError(t, writeAll(conn, rw, out)) {
			return
		}
		<-next // three frames in one write: one read
		if _, err := conn.Write(append(append(msg(2), msg(3)...), msg(4)...)); !assert.NoError(t, err) {
			return
		}
		<-next
		if _, err := conn.Write(msg(5)); !assert.NoError(t, err) {
			return
		}
		<-next // then the connection ends
	}))
	defer srv.Close()

	events := make(chan string, 64)
	gw, err := New(Config{
		URL: "ws" + srv.URL[len("http"):], Token: func() string { return "token" },
		OnDispatch: func(event string, data json.RawMessage) {
			if event == "LOBBY_MESSAGE_CREATE" {
				event += " " + strconv.Itoa(len(data))
			}
			events <- event
		},
		OnDrained: func() { events <- "drained" },
		Sleep:     func(ctx context.Context, _ time.Duration) error { <-ctx.Done(); return ctx.Err() },
	})
	require.NoError(t, err)
	gw.Start()
	defer gw.Close()
	take := func(n int) []string {
		var got []string
		for range n {
			select {
			case e := <-events:
				got = append(got, e)
			case <-time.After(10 * time.Second):
				require.Fail(t, "no event", "after %v", got)
			}
		}
		return got
	}
	for e := ""; e != "READY"; {
		e = take(1)[0]
	}
	lm := "LOBBY_MESSAGE_CREATE " + strconv.Itoa(len(benchFrame())-len(`{"op":0,"d":`)-len(`,"s":1234,"t":"LOBBY_MESSAGE_CREATE"}`))
	assert.Equal(t, []string{"drained"}, take(1), "READY's read is done")
	next <- struct{}{}
	assert.Equal(t, []string{lm, lm, lm, "drained"}, take(4), "the three frames of one read, then one OnDrained")
	next <- struct{}{}
	assert.Equal(t, []string{lm, "drained"}, take(2), "the next read's frame")
	next <- struct{}{}
	assert.Equal(t, []string{"drained"}, take(1), "the connection's end")
}
