package jitter

import (
	"encoding/binary"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"sdkpp/audio/netsim"
	"sdkpp/audio/pcm"
)

// stream is a sender's packets: one per frame from seq0/ts0, the payload carrying the frame's
// index so the tests can see what plays.
type stream struct {
	seq0 uint16
	ts0  uint32
	eos  map[int]bool // frame indexes flagged end of speech
	skip map[int]bool // frames the sender does not send (silence between spurts)
}

func (s stream) packet(i int, buf []byte) Packet {
	binary.BigEndian.PutUint32(buf, uint32(i))
	seq := s.seq0 + uint16(i)
	// Frames not sent consume no sequence numbers.
	for j := range i {
		if s.skip[j] {
			seq--
		}
	}
	return Packet{
		Seq: seq, Timestamp: s.ts0 + uint32(i*pcm.FrameSamples),
		EndOfSpeech: s.eos[i], Payload: buf[:4],
	}
}

func index(f Frame) int { return int(binary.BigEndian.Uint32(f.Payload)) }

// simulate sends frames 0..n-1 at 20 ms intervals through sim and pops at ticks offset by
// phase, for ticks ticks; it returns the frames popped.
func simulate(t *testing.T, b *Buffer, s stream, n int, sim *netsim.Sim, phase time.Duration, ticks int) []Frame {
	t.Helper()
	var sends []time.Duration
	var idx []int
	for i := range n {
		if !s.skip[i] {
			sends = append(sends, time.Duration(i)*frame)
			idx = append(idx, i)
		}
	}
	arrivals := sim.Schedule(sends)
	buf := make([]byte, 4)
	out := make([]Frame, 0, ticks)
	a := 0
	for k := range ticks {
		now := time.Duration(k)*frame + phase
		for ; a < len(arrivals) && arrivals[a].At <= now; a++ {
			require.NoError(t, b.Push(s.packet(idx[arrivals[a].Index], buf), arrivals[a].At))
		}
		f := b.Pop(now)
		if f.Payload != nil {
			f.Payload = append([]byte(nil), f.Payload...)
		}
		out = append(out, f)
	}
	return out
}

func kinds(fs []Frame) map[Kind]int {
	m := map[Kind]int{}
	for _, f := range fs {
		m[f.Kind]++
	}
	return m
}

func TestSteadyStreamPlaysInOrder(t *testing.T) {
	b := New(Config{})
	sim := netsim.New(netsim.Config{Delay: 30 * time.Millisecond})
	out := simulate(t, b, stream{seq0: 100, ts0: 5000, eos: map[int]bool{99: true}}, 100, sim, 7*time.Millisecond, 110)
	start := 0
	for start < len(out) && out[start].Kind == Idle {
		start++
	}
	assert.LessOrEqual(t, start, 2, "playout starts at the first tick after the first arrival")
	for i := range 100 {
		f := out[start+i]
		require.Equal(t, Play, f.Kind, "tick %d", start+i)
		assert.Equal(t, i, index(f))
		assert.Equal(t, uint16(100+i), f.Seq)
		assert.Equal(t, uint32(5000+i*pcm.FrameSamples), f.Timestamp)
	}
	st := b.Stats()
	assert.Zero(t, st.TargetDelay, "a clean link: no delay")
	assert.Zero(t, st.Lost)
	assert.Zero(t, st.Concealed)
	assert.EqualValues(t, 100, st.Played)
	assert.Zero(t, st.LossFraction)
}

func TestIdleBeforeFirstPacketAndAfterEndOfSpeech(t *testing.T) {
	b := New(Config{})
	for k := range 5 {
		assert.Equal(t, Frame{}, b.Pop(time.Duration(k)*frame))
	}
	// Two spurts with two seconds of silence between them.
	s := stream{eos: map[int]bool{9: true, 119: true}, skip: map[int]bool{}}
	for i := 10; i < 110; i++ {
		s.skip[i] = true
	}
	sim := netsim.New(netsim.Config{Delay: 10 * time.Millisecond})
	out := simulate(t, b, s, 120, sim, 0, 130)
	var played []int
	spurtEnds := 0
	for k, f := range out {
		switch f.Kind {
		case Play:
			played = append(played, index(f))
			if f.EndOfSpeech {
				spurtEnds++
				assert.Equal(t, Idle, out[k+1].Kind, "idle right after the marker")
			}
		case Idle:
		default:
			t.Fatalf("tick %d: %v", k, f.Kind)
		}
	}
	want := []int{}
	for i := range 120 {
		if !s.skip[i] {
			want = append(want, i)
		}
	}
	assert.Equal(t, want, played)
	assert.Equal(t, 2, spurtEnds)
	assert.Zero(t, b.Stats().Lost, "the silence between spurts is not loss")
}

func TestSingleLossUsesFEC(t *testing.T) {
	b := New(Config{})
	buf := make([]byte, 4)
	s := stream{}
	now := time.Duration(0)
	for i := range 3 {
		require.NoError(t, b.Push(s.packet(i, buf), now+time.Duration(i)*frame))
	}
	// Frame 3 is lost; 4 and 5 arrive.
	require.NoError(t, b.Push(s.packet(4, buf), 4*frame))
	require.NoError(t, b.Push(s.packet(5, buf), 5*frame))
	var got []Frame
	for k := 1; k <= 6; k++ {
		f := b.Pop(time.Duration(k)*frame + 3*frame)
		f.Payload = append([]byte(nil), f.Payload...)
		got = append(got, f)
	}
	require.Equal(t, []Kind{Play, Play, Play, FEC, Play, Play}, []Kind{got[0].Kind, got[1].Kind, got[2].Kind, got[3].Kind, got[4].Kind, got[5].Kind})
	assert.Equal(t, 4, index(got[3]), "FEC comes from the next packet")
	assert.Equal(t, 4, index(got[4]))
	st := b.Stats()
	assert.EqualValues(t, 1, st.FECRecovered)
	assert.EqualValues(t, 1, st.Lost)
}

func TestBurstLossConcealsThenFEC(t *testing.T) {
	b := New(Config{})
	buf := make([]byte, 4)
	s := stream{}
	for _, i := range []int{0, 1, 4, 5} {
		require.NoError(t, b.Push(s.packet(i, buf), time.Duration(i)*frame))
	}
	var ks []Kind
	for k := range 6 {
		ks = append(ks, b.Pop(time.Duration(k)*frame+4*frame).Kind)
	}
	assert.Equal(t, []Kind{Play, Play, Conceal, FEC, Play, Play}, ks)
	assert.EqualValues(t, 2, b.Stats().Lost)
}

func TestLateAndDuplicatePackets(t *testing.T) {
	b := New(Config{})
	buf := make([]byte, 4)
	s := stream{}
	require.NoError(t, b.Push(s.packet(0, buf), 0))
	require.NoError(t, b.Push(s.packet(0, buf), 0)) // duplicate in the buffer
	require.NoError(t, b.Push(s.packet(2, buf), 2*frame))
	assert.Equal(t, Play, b.Pop(2*frame).Kind)
	require.NoError(t, b.Push(s.packet(0, buf), 3*frame)) // duplicate of a played packet
	assert.Equal(t, FEC, b.Pop(5*frame).Kind, "frame 1 is given up, its successor is here")
	require.NoError(t, b.Push(s.packet(1, buf), 5*frame)) // late
	st := b.Stats()
	assert.EqualValues(t, 1, st.Late)
	assert.EqualValues(t, 2, st.Duplicate)
	assert.EqualValues(t, 5, st.Received)
	assert.Equal(t, 1, st.Buffered)
}

func TestReorderingWithinTheBuffer(t *testing.T) {
	b := New(Config{MinDelay: 60 * time.Millisecond})
	buf := make([]byte, 4)
	s := stream{}
	for _, i := range []int{0, 2, 1, 4, 3, 5} {
		require.NoError(t, b.Push(s.packet(i, buf), time.Duration(i)*frame))
	}
	var got []int
	for k := range 12 {
		if f := b.Pop(time.Duration(k) * frame); f.Kind == Play {
			got = append(got, index(f))
		}
	}
	assert.Equal(t, []int{0, 1, 2, 3, 4, 5}, got)
}

func TestWrapAround(t *testing.T) {
	b := New(Config{})
	sim := netsim.New(netsim.Config{Seed: 4, Delay: 5 * time.Millisecond, Jitter: 30 * time.Millisecond})
	s := stream{seq0: 65500, ts0: 1<<32 - 20*pcm.FrameSamples}
	out := simulate(t, b, s, 200, sim, 3*time.Millisecond, 220)
	last := -1
	for _, f := range out {
		if f.Kind == Play {
			assert.Greater(t, index(f), last)
			last = index(f)
		}
	}
	assert.Greater(t, last, 190)
	assert.Less(t, b.Stats().Lost, uint64(10))
}

func TestPayloadTooLarge(t *testing.T) {
	b := New(Config{})
	err := b.Push(Packet{Payload: make([]byte, MaxPayload+1)}, 0)
	require.ErrorIs(t, err, ErrPayloadTooLarge)
	require.NoError(t, b.Push(Packet{Payload: make([]byte, MaxPayload)}, 0))
}

func TestOverflowKeepsTheNewest(t *testing.T) {
	b := New(Config{Capacity: 4, MinDelay: time.Second, MaxDelay: time.Second})
	buf := make([]byte, 4)
	s := stream{}
	for i := range 6 {
		require.NoError(t, b.Push(s.packet(i, buf), 0))
	}
	st := b.Stats()
	assert.EqualValues(t, 2, st.Overflow)
	assert.Equal(t, 4, st.Buffered)
	f := b.Pop(time.Second)
	require.Equal(t, Play, f.Kind)
	assert.Equal(t, 2, index(f))
}

func TestStreamStopsWithoutMarker(t *testing.T) {
	b := New(Config{})
	sim := netsim.New(netsim.Config{})
	out := simulate(t, b, stream{}, 50, sim, 0, 100)
	k := kinds(out)
	assert.Equal(t, 50, k[Play])
	assert.LessOrEqual(t, k[Conceal], 10, "concealment gives up after the longest wait")
	assert.Equal(t, Idle, out[len(out)-1].Kind)
}

func TestLossFraction(t *testing.T) {
	b := New(Config{MinDelay: -1}) // no minimum: the wait below is the FEC rule's
	sim := netsim.New(netsim.Config{Seed: 11, Loss: 0.1, Delay: 20 * time.Millisecond})
	simulate(t, b, stream{}, 3000, sim, 0, 3010)
	st := b.Stats()
	assert.InDelta(t, 300, float64(st.Lost), 40)
	assert.InDelta(t, 0.1, st.LossFraction, 0.06)
	assert.GreaterOrEqual(t, st.FECRecovered+st.Concealed-st.Expanded, st.Lost, "every loss is filled")
	// Losing packets, the buffer waits a frame so that the next packet's FEC data is there.
	assert.Equal(t, frame, st.TargetDelay)
	assert.Greater(t, float64(st.FECRecovered), 0.8*float64(st.Lost), "most losses recovered by FEC: %+v", st)
}

// TestJitterAndReorderingLeaveNoGap is the check: with 40 ms of jitter and reordering,
// every playout tick of the talk spurt yields a packet, FEC or concealment, and the delay falls
// back within a few seconds of the jitter stopping.
func TestJitterAndReorderingLeaveNoGap(t *testing.T) {
	for seed := range uint64(5) {
		b := New(Config{})
		const jittery, calm = 1500, 500 // 30 s of 40 ms jitter, then 10 s without
		var sends []time.Duration
		for i := range jittery + calm {
			sends = append(sends, time.Duration(i)*frame)
		}
		noisy := netsim.New(netsim.Config{Seed: seed, Delay: 30 * time.Millisecond, Jitter: 40 * time.Millisecond, Reorder: 0.02, ReorderDelay: 30 * time.Millisecond})
		quiet := netsim.New(netsim.Config{Delay: 30 * time.Millisecond})
		arrivals := append(noisy.Schedule(sends[:jittery]), quiet.Schedule(sends[jittery:])...)
		for i := range arrivals[len(arrivals)-calm:] {
			arrivals[len(arrivals)-calm+i].Index += jittery
		}
		sortByArrival(arrivals)

		s := stream{seq0: uint16(seed * 1000), ts0: uint32(seed) * 77777}
		buf := make([]byte, 4)
		a, started, reordered := 0, false, 0
		var delays []time.Duration
		for k := range jittery + calm {
			now := time.Duration(k)*frame + 13*time.Millisecond
			for ; a < len(arrivals) && arrivals[a].At <= now; a++ {
				if a > 0 && arrivals[a].Index < arrivals[a-1].Index {
					reordered++
				}
				require.NoError(t, b.Push(s.packet(arrivals[a].Index, buf), arrivals[a].At))
			}
			f := b.Pop(now)
			if f.Kind != Idle {
				started = true
			}
			if started && k < jittery+calm-10 {
				require.NotEqual(t, Idle, f.Kind, "seed %d tick %d: a gap in the spurt", seed, k)
			}
			delays = append(delays, b.Stats().CurrentDelay)
		}
		st := b.Stats()
		assert.Greater(t, reordered, 100, "seed %d: the network reorders", seed)
		assert.Less(t, float64(st.Lost), 0.02*float64(jittery), "seed %d: few packets lost: %+v", seed, st)
		peak := time.Duration(0)
		for _, d := range delays[:jittery] {
			peak = max(peak, d)
		}
		assert.GreaterOrEqual(t, peak, 40*time.Millisecond, "seed %d: the buffer grew for the jitter", seed)
		// Within 5 s of the jitter stopping the delay is back to one or two frames.
		settled := jittery + calm
		for k := jittery + calm - 1; k >= jittery && delays[k] < 2*frame+time.Millisecond; k-- {
			settled = k
		}
		assert.Less(t, settled-jittery, 250, "seed %d: settled %v after the jitter stopped", seed, time.Duration(settled-jittery)*frame)
		t.Logf("seed %d: settled %v after calm; peak delay %v, final delay %v target %v; lost %d late %d fec %d concealed %d expanded %d accelerated %d",
			seed, time.Duration(settled-jittery)*frame, peak, st.CurrentDelay, st.TargetDelay, st.Lost, st.Late, st.FECRecovered, st.Concealed, st.Expanded, st.Accelerated)
	}
}

func sortByArrival(a []netsim.Arrival) {
	for i := 1; i < len(a); i++ {
		for j := i; j > 0 && a[j].At < a[j-1].At; j-- {
			a[j], a[j-1] = a[j-1], a[j]
		}
	}
}

func TestTargetFollowsTheQuantileAndRecurringPeaks(t *testing.T) {
	b := New(Config{})
	buf := make([]byte, 4)
	s := stream{}
	i := 0
	// feed pushes frames from i on, frame j's arrival late by lateness(j), popping every frame.
	feed := func(n int, lateness func(j int) time.Duration) {
		for range n {
			require.NoError(t, b.Push(s.packet(i, buf), time.Duration(i)*frame+lateness(i)))
			b.Pop(time.Duration(i)*frame + 15*time.Millisecond)
			i++
		}
	}
	feed(100, func(int) time.Duration { return 0 })
	assert.Zero(t, b.Stats().TargetDelay, "a clean link: no delay")

	// Up to 8 ms of jitter, spread evenly: the target is its 95th percentile.
	feed(200, func(j int) time.Duration { return time.Duration(j%9) * time.Millisecond })
	assert.InDelta(t, float64(8*time.Millisecond), float64(b.Stats().TargetDelay), float64(time.Millisecond))

	// A single clump of late packets is not a reason to wait for every packet: one peak.
	feed(200, func(int) time.Duration { return 0 })
	require.Zero(t, b.Stats().TargetDelay)
	feed(3, func(int) time.Duration { return 90 * time.Millisecond })
	feed(20, func(int) time.Duration { return 0 })
	assert.Zero(t, b.Stats().TargetDelay, "one peak")

	// A second within peakHold: peaks recur (a sender's microphone delivering in bursts), the
	// target covers them.
	feed(1, func(int) time.Duration { return 50 * time.Millisecond })
	feed(20, func(int) time.Duration { return 0 })
	assert.InDelta(t, float64(90*time.Millisecond), float64(b.Stats().TargetDelay), float64(time.Millisecond), "two peaks")

	// Peaks every half a second keep it there; when they stop it falls within peakHold.
	feed(250, func(j int) time.Duration {
		if j%25 == 0 {
			return 40 * time.Millisecond
		}
		return 0
	})
	assert.InDelta(t, float64(40*time.Millisecond), float64(b.Stats().TargetDelay), float64(time.Millisecond), "recurring peaks")
	feed(int(peakHold/frame)+1, func(int) time.Duration { return 0 })
	assert.Zero(t, b.Stats().TargetDelay, "the peaks are over")

	// A quarter of the packets 30 ms late is jitter, not peaks: the quantile covers it, and
	// forgets it within a few seconds.
	feed(200, func(j int) time.Duration { return time.Duration(j%4/3) * 30 * time.Millisecond })
	assert.InDelta(t, float64(30*time.Millisecond), float64(b.Stats().TargetDelay), float64(time.Millisecond))
	feed(150, func(int) time.Duration { return 0 })
	assert.Zero(t, b.Stats().TargetDelay, "falls again within 3 s")

	b2 := New(Config{MaxDelay: 60 * time.Millisecond})
	for j := range 50 {
		require.NoError(t, b2.Push(s.packet(j, buf), time.Duration(j)*frame+time.Duration(j%2)*time.Second/2))
	}
	b2.Pop(50 * frame)
	assert.Equal(t, 60*time.Millisecond, b2.Stats().TargetDelay, "bounded by MaxDelay")
}

// TestBurstyPlayoutDoesNotStretch pops the way a device that takes two periods at once does:
// two frames at the same instant every 40 ms. The early pops find their packets missing now
// and then; the buffer must not read that as a buffer too short and grow frame after frame.
func TestBurstyPlayoutDoesNotStretch(t *testing.T) {
	b := New(Config{})
	buf := make([]byte, 4)
	s := stream{}
	a := 0
	var out []Frame
	for k := range 1000 {
		now := time.Duration(k/2*2)*frame + 5*time.Millisecond // pops in pairs
		for ; a <= k+1 && time.Duration(a)*frame+2*time.Millisecond <= now; a++ {
			require.NoError(t, b.Push(s.packet(a, buf), time.Duration(a)*frame+2*time.Millisecond))
		}
		out = append(out, b.Pop(now))
	}
	st := b.Stats()
	assert.Less(t, st.CurrentDelay, 3*frame, "the delay stays within the burst")
	assert.LessOrEqual(t, st.Expanded, uint64(2))
	assert.Zero(t, st.Lost)
	assert.GreaterOrEqual(t, kinds(out)[Play], 990)
}

// TestBurstySenderAndPlayoutStayBounded is the PulseAudio case that made a buffer without a
// minimum run away (227 ms on the null sinks): the sender's microphone delivers 30 ms at once
// every 30 ms, so its frames leave in clumps, now and then a 60 ms clump, while the receiver's
// device takes two frames at once. For a minute the delay stays within the bursts (no run-away),
// nothing is lost, and the buffer stretches only as often as it shrinks, give or take a few.
func TestBurstySenderAndPlayoutStayBounded(t *testing.T) {
	b := New(Config{})
	buf := make([]byte, 4)
	s := stream{}
	const n = 3000 // a minute of 20 ms frames
	arrival := make([]time.Duration, n)
	for i := range n {
		ready := time.Duration(i+1) * frame // the frame's last sample is captured
		const burst = 30 * time.Millisecond // the microphone hands over 30 ms at a time
		deliver := (ready + burst - 1) / burst * burst
		if (i/50)%7 == 3 && i%50 < 3 {
			deliver += 30 * time.Millisecond // a late delivery, now and then
		}
		arrival[i] = deliver + 3*time.Millisecond
	}
	a := 0
	var maxDelay time.Duration
	for k := range n + 20 {
		now := time.Duration(k/2*2)*frame + 40*time.Millisecond // two frames at once
		for ; a < n && arrival[a] <= now; a++ {
			require.NoError(t, b.Push(s.packet(a, buf), arrival[a]))
		}
		b.Pop(now)
		if k > 100 && k < n {
			maxDelay = max(maxDelay, b.Stats().CurrentDelay)
		}
	}
	st := b.Stats()
	t.Logf("max delay %v; %+v", maxDelay, st)
	assert.Less(t, maxDelay, 110*time.Millisecond, "the delay stays within the bursts")
	assert.Less(t, float64(st.Lost), 0.01*n)
	assert.LessOrEqual(t, st.Expanded, st.Accelerated+5)
}

// TestPlayoutThatFellBehindShedsTheDelay: the receiver's device stalls for 80 ms once (its pops
// come that much later from then on, as after an underrun): the packets that piled up are shed
// by acceleration within a few seconds instead of being taken for the device's burstiness.
func TestPlayoutThatFellBehindShedsTheDelay(t *testing.T) {
	b := New(Config{})
	buf := make([]byte, 4)
	s := stream{}
	a := 0
	var after []time.Duration
	for k := range 500 {
		now := time.Duration(k)*frame + 5*time.Millisecond
		if k >= 100 {
			now += 80 * time.Millisecond // the stall
		}
		for ; a < 600 && time.Duration(a)*frame+time.Millisecond <= now; a++ {
			require.NoError(t, b.Push(s.packet(a, buf), time.Duration(a)*frame+time.Millisecond))
		}
		b.Pop(now)
		after = append(after, b.Stats().CurrentDelay)
	}
	assert.Greater(t, after[101], 70*time.Millisecond, "the stall added its delay")
	assert.Less(t, after[225], 30*time.Millisecond, "shed within 2.5 s: %v", after[225])
	assert.Zero(t, b.Stats().Lost)
}

// TestBacklogIsFlushed: after the receiver's playout stalled for a second, the backlog beyond
// the target is dropped at once rather than shed a frame at a time for ten seconds.
func TestBacklogIsFlushed(t *testing.T) {
	b := New(Config{})
	buf := make([]byte, 4)
	s := stream{}
	for i := range 60 {
		require.NoError(t, b.Push(s.packet(i, buf), time.Duration(i)*frame))
		if i < 10 || i >= 59 { // no pops from frame 10 to 58: the stall
			require.Equal(t, Play, b.Pop(time.Duration(i)*frame).Kind)
		}
	}
	st := b.Stats()
	assert.Less(t, st.CurrentDelay, 120*time.Millisecond, "%+v", st)
	assert.GreaterOrEqual(t, st.Flushed, uint64(40))
	f := b.Pop(60 * frame)
	assert.NotEqual(t, Idle, f.Kind)
}

// TestStretchesNoFasterThanItShrinks: when the target jumps, the buffer grows by at most one
// frame per stretchEvery pops while it still has the packet to play.
func TestStretchesNoFasterThanItShrinks(t *testing.T) {
	b := New(Config{})
	buf := make([]byte, 4)
	s := stream{}
	var ks []Kind
	for i := range 400 {
		late := time.Duration(0)
		if i >= 100 && i%10 == 0 {
			late = 60 * time.Millisecond // recurring peaks from frame 100 on
		}
		require.NoError(t, b.Push(s.packet(i, buf), time.Duration(i)*frame+late))
		f := b.Pop(time.Duration(i)*frame + 65*time.Millisecond)
		ks = append(ks, f.Kind)
	}
	st := b.Stats()
	assert.InDelta(t, float64(60*time.Millisecond), float64(st.TargetDelay), float64(time.Millisecond))
	for k := range len(ks) - stretchEvery {
		n := 0
		for _, kind := range ks[k : k+stretchEvery] {
			if kind == Conceal {
				n++
			}
		}
		assert.LessOrEqual(t, n, 1, "pops %d..%d", k, k+stretchEvery)
	}
}

// TestFollowsTheSendersFrameSize: 10 ms packets are played 10 ms at a time, and a sender that
// switches to 20 ms frames mid-spurt is followed, losses included.
func TestFollowsTheSendersFrameSize(t *testing.T) {
	b := New(Config{})
	payload := make([]byte, 4)
	const half = pcm.FrameSamples / 2
	push := func(seq int, ts, samples int, at time.Duration) {
		binary.BigEndian.PutUint32(payload, uint32(seq))
		require.NoError(t, b.Push(Packet{Seq: uint16(seq), Timestamp: uint32(ts), Samples: samples, Payload: payload}, at))
	}
	type tick struct {
		kind    Kind
		samples int
		index   int
	}
	var got []tick
	pop := func(now time.Duration) {
		f := b.Pop(now)
		tk := tick{kind: f.Kind, samples: f.Samples, index: -1}
		if f.Payload != nil {
			tk.index = index(f)
		}
		got = append(got, tk)
	}
	// Ten 10 ms packets, the sixth lost; then 20 ms packets, the second of them lost.
	ms := time.Millisecond
	for seq := range 10 {
		if seq != 5 {
			push(seq, seq*half, half, time.Duration(seq)*10*ms)
		}
		pop(time.Duration(seq)*10*ms + ms)
	}
	for j := range 4 {
		seq, ts := 10+j, 10*half+j*pcm.FrameSamples
		if j != 1 {
			push(seq, ts, pcm.FrameSamples, 100*ms+time.Duration(j)*20*ms)
		}
		pop(100*ms + time.Duration(j)*20*ms + ms)
	}
	// Frame 5 is missing at its tick and its successor not there yet: concealed; then, losses
	// calling for a frame of delay (FEC), one 10 ms frame is inserted.
	want := []tick{{Play, half, 0}, {Play, half, 1}, {Play, half, 2}, {Play, half, 3}, {Play, half, 4},
		{Conceal, half, -1}, {Play, half, 6}, {Conceal, half, -1}, {Play, half, 7}, {Play, half, 8}}
	assert.Equal(t, want, got[:10])

	// The 10 ms frame 9 and the 20 ms frame 10 came; at 100 ms frame 9 plays (one behind after
	// the wait for frame 5), then 10, then 11 is lost and recovered by 12's FEC.
	assert.Equal(t, []tick{{Play, half, 9}, {Play, pcm.FrameSamples, 10}, {FEC, pcm.FrameSamples, 12}, {Play, pcm.FrameSamples, 12}}, got[10:])
}

// TestFrameSizeChangeInALoss: a 20 ms packet whose first half was given up as lost while the
// buffer still counted in 10 ms frames is played whole when it comes, not dropped as late.
func TestFrameSizeChangeInALoss(t *testing.T) {
	b := New(Config{})
	payload := make([]byte, 4)
	const half = pcm.FrameSamples / 2
	ms := time.Millisecond
	for seq := range 3 {
		binary.BigEndian.PutUint32(payload, uint32(seq))
		require.NoError(t, b.Push(Packet{Seq: uint16(seq), Timestamp: uint32(seq * half), Samples: half, Payload: payload}, time.Duration(seq)*10*ms))
		require.Equal(t, Play, b.Pop(time.Duration(seq)*10*ms).Kind)
	}
	f := b.Pop(30 * ms)
	require.Equal(t, Conceal, f.Kind, "the next 10 ms are missing: given up")
	require.Equal(t, half, f.Samples)
	binary.BigEndian.PutUint32(payload, 3)
	require.NoError(t, b.Push(Packet{Seq: 3, Timestamp: 3 * half, Samples: pcm.FrameSamples, Payload: payload}, 35*ms))
	f = b.Pop(40 * ms)
	require.Equal(t, Play, f.Kind)
	assert.Equal(t, 3, index(f))
	assert.Equal(t, pcm.FrameSamples, f.Samples)
	assert.Zero(t, b.Stats().Late)
}

func TestStreamRestartIsFollowed(t *testing.T) {
	b := New(Config{})
	sim := netsim.New(netsim.Config{Delay: 10 * time.Millisecond})
	simulate(t, b, stream{seq0: 10, ts0: 1000, eos: map[int]bool{49: true}}, 50, sim, 0, 60)
	// The sender restarts with unrelated sequence numbers and timestamps.
	b2 := b
	out := simulate(t, b2, stream{seq0: 40000, ts0: 3_000_000_000}, 50, netsim.New(netsim.Config{Delay: 10 * time.Millisecond}), 0, 60)
	assert.Equal(t, 50, kinds(out)[Play])
}

func TestPushPopDoNotAllocate(t *testing.T) {
	b := New(Config{})
	buf := make([]byte, 200)
	s := stream{}
	i := 0
	allocs := testing.AllocsPerRun(2000, func() {
		p := s.packet(i, buf)
		p.Payload = buf
		_ = b.Push(p, time.Duration(i)*frame+time.Duration(i%3)*10*time.Millisecond)
		b.Pop(time.Duration(i)*frame + 5*time.Millisecond)
		_ = b.Stats()
		i++
	})
	assert.Zero(t, allocs)
}

func TestKindString(t *testing.T) {
	assert.Equal(t, "idle", Idle.String())
	assert.Equal(t, "play", Play.String())
	assert.Equal(t, "fec", FEC.String())
	assert.Equal(t, "conceal", Conceal.String())
	assert.Equal(t, "unknown", Kind(9).String())
}

// BenchmarkPushPop is one sender's work per 20 ms frame: one Push of a 71-byte packet (Opus at
// 32 kbps) and one Pop.
func BenchmarkPushPop(b *testing.B) {
	buf := New(Config{})
	payload := make([]byte, 71)
	i := 0
	for b.Loop() {
		p := Packet{Seq: uint16(i), Timestamp: uint32(i * pcm.FrameSamples), Payload: payload}
		_ = buf.Push(p, time.Duration(i)*frame+time.Duration(i%3)*10*time.Millisecond)
		buf.Pop(time.Duration(i)*frame + 5*time.Millisecond)
		i++
	}
}
