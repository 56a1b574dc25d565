// Package jitter is the adaptive jitter buffer the voice engine keeps for each sender.
//
// Packets are pushed as they arrive from the network, with the caller's arrival time; each Pop
// says what to play next: a packet's payload, FEC data from the following packet in place of a
// missing one, concealment, or nothing (idle: before the first packet and after an end-of-speech
// marker). A packet carries its duration (Packet.Samples, from its Opus TOC), so the buffer
// follows a sender's frame size, 10 or 20 ms or a change between them; each Frame says how many
// samples it stands for, and the caller pops again when it needs more.
//
// The buffer holds each packet for a target delay measured from the earliest that the packet
// could have arrived, as NetEQ does: the transit time of every packet (arrival minus its sender
// timestamp) is compared with the smallest recent transit, and the excess goes into a histogram
// that forgets old packets within a couple of seconds. The target is the excess that 95% of
// packets stay within, raised by a peak detector to the height of delay peaks that recur (a
// sender whose microphone delivers in bursts sends its packets in bursts), bounded by
// Config.MinDelay (0 by default: no delay on a clean link) and Config.MaxDelay. It falls again
// a few seconds after the network calms. While packets are being lost the target is at least one
// frame, so that the packet after a lost one is there in time to recover it from its FEC data.
//
// The buffer follows the target by inserting concealed frames (expansion) when it is too short
// and by skipping a frame (acceleration) when it is too long, at most once per eight frames
// either way: it never stretches faster than it shrinks. The delay it compares with the target is
// measured at the playout schedule rather than at each Pop: a device that takes audio in bursts
// pops early now and late then, and the buffer steers by the earliest pops (the ones that need
// each packet soonest), so a bursty playout clock does not read as a buffer too short.
//
// Time is whatever the caller passes as time.Duration values on one monotonic scale (for
// example time since the engine started, or simulated time); the buffer never reads a clock.
// Payloads are copied into a pool of slots allocated up front; Push and Pop allocate nothing.
package jitter

import (
	"errors"
	"fmt"
	"math"
	"time"

	"sdkpp/audio/internal/window"
	"sdkpp/audio/pcm"
)

const (
	// MaxPayload is the largest payload a packet may carry (Opus's maximum frame size).
	MaxPayload = 1275
	// DefaultMinDelay is the default lower bound of the target delay: none. The arrival
	// histogram sets the target, so a clean link costs no buffering.
	DefaultMinDelay = 0
	// FECLossFraction is the smoothed loss fraction from which the target is at least one frame
	// (see the package doc).
	FECLossFraction = 0.01
	// DefaultMaxDelay is the default upper bound of the target delay.
	DefaultMaxDelay = 200 * time.Millisecond
	// DefaultCapacity is the default number of packet slots (1.28 s of 20 ms frames).
	DefaultCapacity = 64
	// Quantile is the share of packets the target delay waits for (NetEQ's 95%).
	Quantile = 0.95

	frame = pcm.FrameDurationMs * time.Millisecond // the default frame

	// The transit window covers 2.6 to 2.9 s of 20 ms packets (8 sub-windows of 16).
	windowSubs   = 8
	windowLength = 16
	// The playout phase window covers 32 to 36 pops (0.64 s of 20 ms frames): long enough to
	// see a device's bursts, short enough that a pop clock that fell behind for good (a stall,
	// an underrun) is taken as the new schedule, and the delay it added is shed, within a second.
	phaseSubs   = 8
	phaseLength = 4
	// stretchEvery is the fewest pops between two changes of the delay (a frame skipped or
	// inserted): changing by a frame at most every eight keeps the changes sparse while the
	// delay comes down within a second or two, and the buffer grows no faster than it shrinks.
	stretchEvery = 8
	// flushAbove is how far the delay may exceed the target before the buffer drops packets at
	// once down to a frame above the target instead of skipping a frame now and then: after a
	// stall of the receiver's playout or a burst of packets held up on the way, a second of
	// backlog would take ten seconds to shed one frame per stretchEvery pops. It is larger than
	// a device's bursts, which move the delay at each pop by a few periods.
	flushAbove = 100 * time.Millisecond
	// bucket is the histogram's resolution.
	bucket = time.Millisecond
	// forget is how much of the histogram's weight a 20 ms packet leaves: old packets weigh
	// less than 5% after about 2.4 s.
	forget = 0.975
	// A peak is an excess at least peakMargin above the quantile and twice it; two within
	// peakHold (at least peakGap apart) raise the target to the highest of them until they are
	// older than peakHold.
	peakMargin = 10 * time.Millisecond
	peakHold   = 3 * time.Second
	// peakGap is how far apart two late packets must come to count as two peaks.
	peakGap   = 100 * time.Millisecond
	peakSlots = 8
	// lossSmoothing is the weight of the newest packet in the smoothed loss fraction
	// (a time constant of 64 packets, about 1.3 s).
	lossSmoothing = 1.0 / 64
	// rfc3550Gain is RFC 3550's smoothing of the interarrival jitter (1/16).
	rfc3550Gain = 1.0 / 16
	// resyncTransit is how far above the smallest recent transit a packet arriving while the
	// buffer is idle and empty may lie before the transit history is restarted from it: the
	// sender's timestamps did not follow its clock through the silence.
	resyncTransit = time.Second
	// resetSpan is the sender timestamp jump (30 s of samples) taken as a new stream.
	resetSpan = 30 * pcm.SampleRate
)

// ErrPayloadTooLarge is returned by Push for a payload over MaxPayload bytes.
var ErrPayloadTooLarge = errors.New("jitter: payload too large")

// Packet is one received media packet.
type Packet struct {
	// Seq is the sender's packet sequence number, one per packet sent, wrapping.
	Seq uint16
	// Timestamp is the sender's sample clock at the packet's first sample, wrapping; it must
	// advance by the packet's samples per frame and keep counting through silence, as an RTP
	// timestamp does.
	Timestamp uint32
	// Samples is the packet's duration in samples at pcm.SampleRate (an Opus packet's TOC says
	// it); 0 means pcm.FrameSamples.
	Samples int
	// EndOfSpeech flags the last packet of a talk spurt.
	EndOfSpeech bool
	// Payload is the encoded frame; Push copies it.
	Payload []byte
}

// Kind says what a playout tick should do.
type Kind uint8

const (
	// Idle means there is nothing to play: output silence, do not run the decoder.
	Idle Kind = iota
	// Play means decode Frame.Payload.
	Play
	// FEC means the frame is missing but the next packet is here: decode the forward error
	// correction data in Frame.Payload (that next packet) in its place.
	FEC
	// Conceal means the frame is missing: run the decoder's loss concealment.
	Conceal
)

// String names the kind.
func (k Kind) String() string {
	switch k {
	case Idle:
		return "idle"
	case Play:
		return "play"
	case FEC:
		return "fec"
	case Conceal:
		return "conceal"
	}
	return "unknown"
}

// Frame is what one playout tick should play.
type Frame struct {
	// Kind is what to do.
	Kind Kind
	// Payload is the packet to decode (Play) or to take FEC data from (FEC). It points into
	// the buffer's storage and stays valid until the next call to Push, Pop or Reset.
	Payload []byte
	// Seq and Timestamp identify the packet in Payload.
	Seq       uint16
	Timestamp uint32
	// EndOfSpeech is set on the last frame of a talk spurt (Play only): fade out after it.
	EndOfSpeech bool
	// Samples is how many samples the tick stands for: the packet's (Play), the missing
	// frame's (FEC, Conceal), 0 when idle.
	Samples int
}

// Config shapes a Buffer; zero fields take the defaults.
type Config struct {
	// MinDelay is the smallest target delay (0: DefaultMinDelay, none).
	MinDelay time.Duration
	// MaxDelay is the largest target delay (DefaultMaxDelay).
	MaxDelay time.Duration
	// Capacity is the number of packet slots (DefaultCapacity).
	Capacity int
}

// Stats are a buffer's counters and estimates.
type Stats struct {
	// CurrentDelay is how long the frame played at the last tick waited beyond the earliest it
	// could have arrived (0 while idle).
	CurrentDelay time.Duration
	// ScheduledDelay is CurrentDelay at the playout schedule: less how late the last pop came
	// after the earliest recent pops. The buffer steers it towards the target.
	ScheduledDelay time.Duration
	// TargetDelay is the delay the buffer steers towards.
	TargetDelay time.Duration
	// Jitter is RFC 3550's smoothed interarrival jitter.
	Jitter time.Duration
	// Buffered is the number of packets held.
	Buffered int
	// Received counts pushed packets, including late and duplicate ones.
	Received uint64
	// Late counts packets that arrived after their frame was played or concealed; dropped.
	Late uint64
	// Duplicate counts packets received twice; dropped.
	Duplicate uint64
	// Lost counts packets never played: gaps in the sequence numbers, late packets included.
	Lost uint64
	// Played counts frames played from packets.
	Played uint64
	// Concealed counts Conceal ticks (losses, expansions and DTX gaps alike).
	Concealed uint64
	// FECRecovered counts FEC ticks.
	FECRecovered uint64
	// Expanded counts Conceal ticks inserted to grow the delay.
	Expanded uint64
	// Accelerated counts packets skipped to shrink the delay.
	Accelerated uint64
	// Flushed counts packets dropped at once because the delay exceeded the target by far.
	Flushed uint64
	// Overflow counts packets dropped because every slot was taken.
	Overflow uint64
	// LossFraction is the smoothed share of lost packets (0..1) over the last second or two,
	// for the receiver's loss report (the sender's encoder takes it as expected loss).
	LossFraction float64
}

type slot struct {
	used bool
	eos  bool
	seq  uint16
	n    int
	dur  int64 // samples
	ext  int64 // extended (unwrapped) sender timestamp
	data [MaxPayload]byte
}

// Buffer is one sender's jitter buffer. It is not safe for concurrent use: one goroutine (the
// engine's receive path) calls Push and Pop.
type Buffer struct {
	cfg   Config
	slots []slot
	used  int

	// Timestamp unwrapping.
	haveRef bool
	refTS   uint32
	refExt  int64

	// Delay estimation, in seconds.
	transit     window.Window // smallest transit
	hist        []float64     // weights of transit beyond the smallest, per bucket
	histN       int           // packets in hist, for the start-up weighting
	peaks       [peakSlots]peak
	peakNext    int
	rfcJitter   float64
	prevTransit float64
	havePrev    bool
	frameTS     int64 // the stream's frame in samples: the newest packet's duration

	// Playout.
	playing     bool
	playExt     int64 // extended timestamp of the next frame to play
	haveFloor   bool
	floorExt    int64 // packets before this were played or given up
	haveLast    bool
	lastSeq     uint16 // newest sequence number played (or skipped)
	history     uint64 // bit k: lastSeq-k was played or skipped
	conceals    int    // consecutive Conceal ticks
	sinceChange int    // pops since the delay was last changed on purpose
	outTS       int64  // samples handed out since playout started
	playStart   time.Duration
	phase       window.Window // earliest pop relative to the playout schedule

	stats Stats
}

// New returns an empty buffer shaped by cfg.
func New(cfg Config) *Buffer {
	if cfg.MinDelay == 0 {
		cfg.MinDelay = DefaultMinDelay
	}
	cfg.MinDelay = max(cfg.MinDelay, 0)
	if cfg.MaxDelay <= 0 {
		cfg.MaxDelay = DefaultMaxDelay
	}
	cfg.MaxDelay = max(cfg.MaxDelay, cfg.MinDelay)
	if cfg.Capacity <= 0 {
		cfg.Capacity = DefaultCapacity
	}
	b := &Buffer{cfg: cfg, slots: make([]slot, cfg.Capacity), hist: make([]float64, int(cfg.MaxDelay/bucket)+1)}
	b.Reset()
	return b
}

// Reset forgets every packet, estimate and counter.
func (b *Buffer) Reset() {
	b.resetStream()
	b.resetHistory()
	b.rfcJitter, b.havePrev = 0, false
	b.stats = Stats{TargetDelay: b.cfg.MinDelay}
}

// resetStream forgets the packets and the timeline, keeping counters and the jitter estimate.
func (b *Buffer) resetStream() {
	for i := range b.slots {
		b.slots[i].used = false
	}
	b.used = 0
	b.haveRef, b.refTS, b.refExt = false, 0, 0
	b.transit.Init(windowSubs, windowLength, false)
	b.playing, b.playExt = false, 0
	b.haveFloor, b.floorExt = false, 0
	b.haveLast, b.lastSeq, b.history = false, 0, 0
	b.conceals, b.sinceChange = 0, 0
	b.frameTS = pcm.FrameSamples
}

// resetHistory forgets the delay histogram and its peaks.
func (b *Buffer) resetHistory() {
	clear(b.hist)
	b.histN = 0
	b.peaks = [peakSlots]peak{}
}

// peak is a delay peak: its height and when it came.
type peak struct {
	at     time.Duration
	height time.Duration
}

// Push stores a packet that arrived at arrival. Late and duplicate packets are counted and
// dropped without error; a payload over MaxPayload is refused.
func (b *Buffer) Push(p Packet, arrival time.Duration) error {
	if len(p.Payload) > MaxPayload {
		return fmt.Errorf("push packet %d of %d bytes: %w", p.Seq, len(p.Payload), ErrPayloadTooLarge)
	}
	b.stats.Received++
	if b.haveRef {
		if d := int32(p.Timestamp - b.refTS); d > resetSpan || d < -resetSpan {
			b.resetStream()
		}
	}
	ext := b.extend(p.Timestamp)
	if b.find(ext, ext+1) >= 0 {
		b.stats.Duplicate++
		return nil
	}
	if b.haveFloor && ext < b.floorExt && b.wasPlayed(p.Seq) {
		b.stats.Duplicate++
		return nil
	}
	dur := int64(p.Samples)
	if dur <= 0 {
		dur = pcm.FrameSamples
	}
	if ext >= b.refExt {
		b.frameTS = dur // the newest packet's frame size is the stream's
	}
	b.measure(ext, dur, arrival)
	if b.haveFloor && ext+dur <= b.floorExt {
		b.stats.Late++
		return nil
	}
	b.store(p, ext, dur)
	return nil
}

// extend unwraps a sender timestamp relative to the newest one seen.
func (b *Buffer) extend(ts uint32) int64 {
	if !b.haveRef {
		b.haveRef, b.refTS, b.refExt = true, ts, 0
		return 0
	}
	d := int32(ts - b.refTS)
	ext := b.refExt + int64(d)
	if d > 0 {
		b.refTS, b.refExt = ts, ext
	}
	return ext
}

// senderTime converts an extended timestamp into seconds of the sender's clock.
func senderTime(ext int64) float64 { return float64(ext) / pcm.SampleRate }

// measure feeds one packet's transit into the delay estimates.
func (b *Buffer) measure(ext, dur int64, arrival time.Duration) {
	transit := arrival.Seconds() - senderTime(ext)
	if base, ok := b.transit.Value(); ok && !b.playing && b.used == 0 &&
		transit-base > resyncTransit.Seconds() {
		b.transit.Reset()
		b.resetHistory()
		b.havePrev = false
	}
	b.transit.Add(transit)
	base, _ := b.transit.Value()
	b.addExcess(time.Duration((transit-base)*float64(time.Second)), arrival, dur)
	if b.havePrev {
		b.rfcJitter += (math.Abs(transit-b.prevTransit) - b.rfcJitter) * rfc3550Gain
	}
	b.prevTransit, b.havePrev = transit, true
}

// store copies the packet into a free slot, evicting the oldest packet when none is free.
func (b *Buffer) store(p Packet, ext, dur int64) {
	i := -1
	if b.used < len(b.slots) {
		for j := range b.slots {
			if !b.slots[j].used {
				i = j
				break
			}
		}
	} else {
		b.stats.Overflow++
		i = b.earliest(math.MinInt64)
		if b.slots[i].ext > ext {
			return // the new packet is the oldest of all: drop it instead
		}
		b.slots[i].used = false
		b.used--
	}
	s := &b.slots[i]
	s.used, s.eos, s.seq, s.ext, s.dur = true, p.EndOfSpeech, p.Seq, ext, dur
	s.n = copy(s.data[:], p.Payload)
	b.used++
}

// find returns the slot holding a packet with from <= ext < to, or -1.
func (b *Buffer) find(from, to int64) int {
	for i := range b.slots {
		if s := &b.slots[i]; s.used && s.ext >= from && s.ext < to {
			return i
		}
	}
	return -1
}

// overlapping returns the slot of a packet that holds the sample at ext, or else one that starts
// within the frame from ext, or -1. A packet that starts before ext is one whose beginning was
// given up as lost before it came (a sender that changed its frame size in a loss): it is
// played whole.
func (b *Buffer) overlapping(ext int64) int {
	for i := range b.slots {
		if s := &b.slots[i]; s.used && s.ext <= ext && s.ext+s.dur > ext {
			return i
		}
	}
	return b.find(ext, ext+b.frameTS)
}

// earliest returns the slot with the smallest timestamp at or after from, or -1.
func (b *Buffer) earliest(from int64) int {
	best := -1
	for i := range b.slots {
		if s := &b.slots[i]; s.used && s.ext >= from && (best < 0 || s.ext < b.slots[best].ext) {
			best = i
		}
	}
	return best
}

func (b *Buffer) free(i int) {
	b.slots[i].used = false
	b.used--
}

// wasPlayed reports whether seq was played or skipped recently.
func (b *Buffer) wasPlayed(seq uint16) bool {
	d := int16(b.lastSeq - seq)
	return b.haveLast && d >= 0 && d < 64 && b.history>>uint(d)&1 == 1
}

// consume records that the packet seq leaves the buffer (played or skipped), counting the
// sequence numbers skipped since the previous one as lost.
func (b *Buffer) consume(seq uint16) {
	if !b.haveLast {
		b.haveLast, b.lastSeq, b.history = true, seq, 1
		b.account(0)
		return
	}
	d := int16(seq - b.lastSeq)
	switch {
	case d <= 0:
		if -d < 64 {
			b.history |= 1 << uint(-d)
		}
		return
	case d >= 64:
		b.history = 1
	default:
		b.history = b.history<<uint(d) | 1
	}
	b.lastSeq = seq
	b.account(int(d) - 1)
}

// account updates the loss counters with lost packets followed by one received.
func (b *Buffer) account(lost int) {
	b.stats.Lost += uint64(lost)
	f := b.stats.LossFraction
	for range min(lost, 256) {
		f += (1 - f) * lossSmoothing
	}
	b.stats.LossFraction = f - f*lossSmoothing
}

// addExcess records one packet's transit beyond the smallest recent one, a packet of dur
// samples that arrived at arrival: into the histogram, and as a peak when it stands out.
func (b *Buffer) addExcess(ex, arrival time.Duration, dur int64) {
	q := b.quantile()
	if ex >= max(q+peakMargin, 2*q) {
		last := &b.peaks[(b.peakNext+peakSlots-1)%peakSlots]
		if last.height > 0 && arrival-last.at < peakGap {
			// The same peak: packets that came late together.
			last.at, last.height = arrival, max(last.height, ex)
		} else {
			b.peaks[b.peakNext] = peak{at: arrival, height: ex}
			b.peakNext = (b.peakNext + 1) % peakSlots
		}
	}
	// The first packets are averaged; then older ones fade at forget per 20 ms of audio.
	b.histN++
	f := math.Pow(forget, float64(dur)/pcm.FrameSamples)
	f = min(f, 1-1/float64(b.histN))
	for i := range b.hist {
		b.hist[i] *= f
	}
	i := min(max(int(ex/bucket), 0), len(b.hist)-1)
	b.hist[i] += 1 - f
}

// quantile returns the delay that Quantile of the recent packets' excess stays within (to the
// bucket below: a millisecond is nothing against a frame).
func (b *Buffer) quantile() time.Duration {
	if b.histN == 0 {
		return 0
	}
	var sum float64
	for _, w := range b.hist {
		sum += w
	}
	acc := 0.0
	for i, w := range b.hist {
		if acc += w; acc >= Quantile*sum {
			return time.Duration(i) * bucket
		}
	}
	return time.Duration(len(b.hist)) * bucket
}

// peakHeight returns the highest of the recent delay peaks while at least two came within
// peakHold of now, else 0.
func (b *Buffer) peakHeight(now time.Duration) time.Duration {
	n, h := 0, time.Duration(0)
	for _, p := range b.peaks {
		if p.height > 0 && now-p.at < peakHold {
			n++
			h = max(h, p.height)
		}
	}
	if n < 2 {
		return 0
	}
	return h
}

// target returns the delay to steer towards at now.
func (b *Buffer) target(now time.Duration) time.Duration {
	t := max(b.quantile(), b.peakHeight(now), b.cfg.MinDelay)
	if b.stats.LossFraction >= FECLossFraction {
		t = max(t, b.frameDur())
	}
	return min(t, b.cfg.MaxDelay)
}

// frameDur is the stream's frame as a duration.
func (b *Buffer) frameDur() time.Duration {
	return time.Duration(b.frameTS) * time.Second / pcm.SampleRate
}

// schedule records a pop at now while playing and returns how late it came after the playout
// schedule: now less the time the samples handed out so far took, against the earliest such
// pop recently.
func (b *Buffer) schedule(now time.Duration) time.Duration {
	phase := now - time.Duration(b.outTS)*time.Second/pcm.SampleRate - b.playStart
	b.phase.Add(phase.Seconds())
	earliest, _ := b.phase.Value()
	return phase - time.Duration(earliest*float64(time.Second))
}

// delay returns how long past its earliest possible arrival the frame at ext is played at now.
func (b *Buffer) delay(ext int64, now time.Duration) time.Duration {
	base, _ := b.transit.Value()
	return now - time.Duration((senderTime(ext)+base)*float64(time.Second))
}

// Pop returns what to play at now. Call it whenever the output needs the next frame: once per
// frame period, or again at once when the frame returned was shorter than the output's.
func (b *Buffer) Pop(now time.Duration) Frame {
	target := b.target(now)
	b.stats.TargetDelay = target
	b.sinceChange++
	starting := !b.playing
	if starting {
		i := b.earliest(math.MinInt64)
		if i < 0 {
			b.stats.CurrentDelay, b.stats.ScheduledDelay = 0, 0
			return Frame{}
		}
		if b.delay(b.slots[i].ext, now) < target {
			b.stats.CurrentDelay, b.stats.ScheduledDelay = 0, 0
			return Frame{}
		}
		b.playing, b.playExt, b.conceals = true, b.slots[i].ext, 0
		b.outTS, b.playStart = 0, now
		b.phase.Init(phaseSubs, phaseLength, false)
	}
	fd := b.frameDur()
	late := b.schedule(now)
	cur := b.delay(b.playExt, now)
	if cur > target+flushAbove && !starting {
		// Steered by the actual delay: a pop that stalled is late for good (the device played
		// silence meanwhile), which the schedule would take for a burst for a while. The
		// schedule starts over from this pop.
		b.flush(cur - target - fd)
		cur = b.delay(b.playExt, now)
		b.phase.Init(phaseSubs, phaseLength, false)
		late = b.schedule(now)
	}
	sched := cur - late
	b.stats.CurrentDelay, b.stats.ScheduledDelay = cur, sched
	if i := b.overlapping(b.playExt); i >= 0 {
		if sched+fd/2 < target && cur < b.cfg.MaxDelay && b.sinceChange >= stretchEvery {
			// The delay is well below a target that rose: stretch before the jitter
			// catches the buffer empty.
			b.sinceChange = 0
			return b.expand()
		}
		if sched >= target+fd && b.sinceChange >= stretchEvery && !b.slots[i].eos {
			s := &b.slots[i]
			if next := b.find(s.ext+s.dur, s.ext+s.dur+b.frameTS); next >= 0 {
				b.stats.Accelerated++
				b.sinceChange = 0
				b.consume(s.seq)
				b.free(i)
				i = next
				b.stats.CurrentDelay -= time.Duration(s.dur) * time.Second / pcm.SampleRate
			}
		}
		return b.play(i)
	}

	// The frame is missing.
	if cur < target && cur < b.cfg.MaxDelay && b.conceals < b.maxConceals() {
		return b.expand() // it may still come: wait a frame
	}
	next := b.earliest(b.playExt + 1)
	dtx := next >= 0 && b.haveLast && b.slots[next].seq == b.lastSeq+1
	lost := b.frameTS
	if next >= 0 {
		lost = min(lost, b.slots[next].ext-b.playExt)
	}
	b.playExt += lost
	b.outTS += lost
	b.floorExt, b.haveFloor = b.playExt, true
	b.conceals++
	if !dtx && next >= 0 && b.slots[next].ext == b.playExt {
		b.stats.FECRecovered++
		s := &b.slots[next]
		return Frame{Kind: FEC, Payload: s.data[:s.n], Seq: s.seq, Timestamp: b.wrap(s.ext), Samples: int(lost)}
	}
	if b.used == 0 && b.conceals >= b.maxConceals() {
		// Nothing has come for as long as the buffer may wait: the stream stopped without
		// an end-of-speech marker. Go idle until packets come again.
		b.playing = false
		return Frame{}
	}
	b.stats.Concealed++
	return Frame{Kind: Conceal, Samples: int(lost)}
}

// flush drops the packets that the next excess of delay would play, up to an end of speech, and
// moves the playout point to the first packet left.
func (b *Buffer) flush(excess time.Duration) {
	limit := b.playExt + int64(excess.Seconds()*pcm.SampleRate)
	for {
		i := b.earliest(math.MinInt64)
		if i < 0 {
			return
		}
		s := &b.slots[i]
		if s.ext+s.dur > limit || s.eos {
			b.playExt = max(b.playExt, s.ext)
			b.floorExt, b.haveFloor = b.playExt, true
			return
		}
		b.stats.Flushed++
		b.consume(s.seq)
		b.playExt = s.ext + s.dur
		b.free(i)
	}
}

// wrap turns an extended timestamp back into the sender's.
func (b *Buffer) wrap(ext int64) uint32 { return uint32(ext + int64(b.refTS) - b.refExt) }

// maxConceals is how many concealed frames in a row end playout when nothing is buffered.
func (b *Buffer) maxConceals() int { return max(int(b.cfg.MaxDelay/b.frameDur()), 1) }

// expand returns a concealed frame without advancing the playout point.
func (b *Buffer) expand() Frame {
	b.stats.Expanded++
	b.stats.Concealed++
	b.conceals++
	b.outTS += b.frameTS
	return Frame{Kind: Conceal, Samples: int(b.frameTS)}
}

// play plays the packet in slot i.
func (b *Buffer) play(i int) Frame {
	s := &b.slots[i]
	b.free(i)
	b.consume(s.seq)
	b.playExt = s.ext + s.dur
	b.outTS += s.dur
	b.floorExt, b.haveFloor = b.playExt, true
	b.conceals = 0
	b.stats.Played++
	if s.eos {
		b.playing = false
	}
	return Frame{
		Kind: Play, Payload: s.data[:s.n], Seq: s.seq, EndOfSpeech: s.eos,
		Timestamp: b.wrap(s.ext), Samples: int(s.dur),
	}
}

// Idle reports whether the buffer holds no packet and plays nothing: Pop would return an idle
// frame until the next Push.
func (b *Buffer) Idle() bool { return !b.playing && b.used == 0 }

// Stats returns the counters and estimates.
func (b *Buffer) Stats() Stats {
	st := b.stats
	st.Buffered = b.used
	st.Jitter = time.Duration(b.rfcJitter * float64(time.Second))
	return st
}
