package main

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A sender runs at most Ahead messages ahead of its slowest receiver: it is held until that
// receiver reads on, whatever the others read.
func TestHoldKeepsTheSenderWithinAheadOfTheSlowest(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		d := newDeliveries(3)
		for range 2 * Ahead {
			d.add(0)
			d.add(1)
		}
		for range 10 {
			d.add(2) // the slowest: 10 read
		}
		require.NoError(t, d.hold(Ahead+10), "message Ahead+10 is Ahead after the slowest's 10th")
		var sent atomic.Bool
		go func() {
			if assert.NoError(t, d.hold(Ahead+11)) {
				sent.Store(true)
			}
		}()
		synctest.Wait()
		assert.False(t, sent.Load(), "held while the slowest receiver has read only 10")
		d.add(0) // the others reading on does not release it
		synctest.Wait()
		assert.False(t, sent.Load())
		d.add(2)
		synctest.Wait()
		assert.True(t, sent.Load(), "released once the slowest read its 11th")
	})
}

// A held sender whose slowest receiver stops fails after Stall, naming where it stopped, instead
// of waiting for a delivery that will not come; one that reads on, however slowly, keeps it held.
func TestHoldFailsOnceTheSlowestStops(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		d := newDeliveries(2)
		for range Ahead + 100 {
			d.add(0)
		}
		errc := make(chan error, 1)
		go func() { errc <- d.hold(Ahead + 5) }()
		for range 4 { // a slow receiver: one message every 0.9 Stall
			time.Sleep(Stall * 9 / 10)
			d.add(1)
		}
		select {
		case err := <-errc:
			require.NoError(t, err)
		default:
		}
		time.Sleep(Stall * 9 / 10)
		d.add(1) // the 5th: room
		require.NoError(t, <-errc)

		go func() { errc <- d.hold(Ahead + 6) }()
		start := time.Now()
		err := <-errc
		require.Error(t, err)
		assert.Equal(t, Stall, time.Since(start))
		assert.Contains(t, err.Error(), "the slowest receiver read 5")
	})
}

// A turn's wait ends with an error once no delivery came for Stall, not after minutes; while
// deliveries come, it waits on.
func TestWaitFailsFastOnceDeliveriesStop(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		d := newDeliveries(2)
		wait := d.expect(4, nil)
		errc := make(chan error, 1)
		start := time.Now()
		go func() { errc <- wait() }()
		d.add(0)
		time.Sleep(Stall / 2)
		d.add(1)
		time.Sleep(Stall)
		d.add(0) // 3 of 4; member 1 never reads its second
		err := <-errc
		require.Error(t, err)
		assert.Contains(t, err.Error(), "3 of 4 deliveries")
		assert.LessOrEqual(t, time.Since(start), 4*Stall)

		wait = d.expect(1, nil)
		go func() { errc <- wait() }()
		d.add(1)
		require.NoError(t, <-errc)
	})
}

// The floor's sender, held by a member that lags (Ahead-2 behind, counted so: it reads as fast
// as the others), sends the held messages once there is room, each once and in order (every
// member's reader checks the order), and the turns end with every delivery.
func TestFloorFanoutHeldBySlowestMember(t *testing.T) {
	addr, stop, err := serveFloor("sqlite:" + t.TempDir())
	require.NoError(t, err)
	defer stop()
	f, err := newFloorFanout(addr, 3, 400)
	require.NoError(t, err)
	defer f.Close()
	f.got.per[2].Add(-(Ahead - 2))
	per := Ahead/2 + 20 // the second turn's messages run past Ahead
	for range 2 {
		_, err := f.turn(per, 8)
		require.NoError(t, err)
	}
	assert.Positive(t, f.got.refused.Load(), "the sender was held")
	assert.EqualValues(t, 2*per, f.got.per[0].Load())
	assert.EqualValues(t, 2*per, f.got.per[1].Load())
	assert.EqualValues(t, 2*per-(Ahead-2), f.got.per[2].Load())
}

// A floor turn whose sends are never answered fails once none was answered for the stall, not
// after minutes.
func TestFloorTurnFailsOnceAnswersStop(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		c, rd, err := wsUpgrade(w, r)
		if err != nil {
			return
		}
		defer c.Close()
		if _, err := c.Write(appendFrame(nil, floorHello, false, [4]byte{})); err != nil {
			return
		}
		for err == nil { // reads the sends and answers none
			_, err = readFrame(rd, nil)
		}
	}))
	defer srv.Close()
	f, err := newFloorFanout(strings.TrimPrefix(srv.URL, "http://"), 2, 100)
	require.NoError(t, err)
	defer f.Close()
	f.got.stall = 50 * time.Millisecond
	errc := make(chan error, 1)
	go func() { _, err := f.turn(20, 8); errc <- err }()
	select {
	case err := <-errc:
		require.Error(t, err)
		assert.Contains(t, err.Error(), "0 of 20 sends answered, none in the last 50ms")
	case <-time.After(time.Minute):
		t.Fatal("the turn still waits after a minute")
	}
}
