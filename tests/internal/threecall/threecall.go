// Package threecall runs a three-player voice call end to end for tests: three SDK clients
// (core.Client), each connected to a service node of the test's choosing (the same node, or
// three nodes of a cluster), in one lobby's end-to-end encrypted call through the live service,
// each with the real voice engine (audio/engine) on in-memory sound devices that the package
// plays in real time. Each player's tone tells who is audible at each speaker (Level), and each
// player's recorded voice, heard by both others, is scored against what it said (Score,
// package speechscore).
package threecall

import (
	"fmt"
	"math"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"sdkpp/audio/engine"
	"sdkpp/audio/pcm"
	"sdkpp/audio/quality"
	"sdkpp/core"
	"sdkpp/core/voice"
	"sdkpp/server/servertest"
	"sdkpp/tests/internal/speechscore"
)

// Players is how many players a Call has.
const Players = 3

const period = pcm.SampleRate / 100 // one 10 ms device period

// Player is one SDK client in the call, with its sound devices and what its hooks saw.
type Player struct {
	Client *core.Client
	Call   *core.Call
	ID     uint64

	devs  *engine.MemoryDevices
	voice []int16 // what its microphone says once the speech starts

	// power[j] is the power of player j's tone at this player's speaker, averaged over the last
	// periods (written by the sound-system goroutine).
	power [Players]atomic.Uint64 // math.Float64bits

	// Written by the engine's processing thread (the hooks), read after the call ends or
	// atomically.
	steps atomic.Int64          // frames captured since the speech started
	next  [Players]atomic.Int64 // the frame of heard[j] that player j's next frame goes to (place)
	loud  [Players]atomic.Int64 // loud frames heard from each player before the speech
	heard [Players][]int16      // each other player's voice, frame after frame as played
}

// resyncFrames is how far a player's capture steps may run ahead of where its next heard frame
// of a sender goes before that frame goes where the steps are (place): a stall of 200 ms, more
// than the steps run ahead of the frames played when the playback is taken in bursts.
const resyncFrames = 10

// place returns the frame of heard[j] at which p records its next frame from player j: right
// after the one heard before from j, as its speaker played them, or where p's capture steps are
// once they have run more than resyncFrames ahead.
//
// The capture steps alone are no clock for it: the engine processes the microphone's periods as
// they arrive, several at once when it runs late, and the speaker's as the speaker takes them,
// so the steps counted at a playback frame run a frame ahead or behind from one frame to the
// next. Placed by them, a heard voice had frames written twice and frames left silent, scored as
// distortion (LSD up to 10 dB above its bound at a load of 18). They do keep the device's time
// over a stall: the frames p did not play of j (the engine late, or its jitter buffer gone
// idle) are left silent.
func (p *Player) place(j int) int {
	at := p.next[j].Load()
	if now := p.steps.Load() - 1; now-at > resyncFrames { // this step's captured hook ran first
		at = now
	}
	p.next[j].Store(at + 1)
	return int(at)
}

// Call is three players in one lobby's call.
type Call struct {
	t       *testing.T
	Players [Players]*Player
	Lobby   uint64

	frames   int // frames the speech lasts
	speaking atomic.Bool
	stop     atomic.Bool
	wg       sync.WaitGroup
}

// toneHz is player i's tone: whole cycles in one 10 ms period, so that each is one bin of it.
func toneHz(i int) float64 { return float64(300 + 100*i) }

// powerOf returns the power of the tone of hz in one period, relative to a full-scale tone's
// (Goertzel).
func powerOf(x []int16, hz float64) float64 {
	w := 2 * math.Pi * hz / pcm.SampleRate
	c := 2 * math.Cos(w)
	var s1, s2 float64
	for _, v := range x {
		s0 := float64(v)/32768 + c*s1 - s2
		s2, s1 = s1, s0
	}
	amp := 2 / float64(len(x))
	return max(s1*s1+s2*s2-c*s1*s2, 0) * amp * amp
}

// Start connects player i to envs[i] (a provisional player of that node's application, name
// prefix and i), puts the three in a lobby and its call, checks that they are Connected with
// one verification code, and starts their sound systems: each microphone plays its tone until
// each player hears both others. The sound stops when the test ends.
func Start(t *testing.T, envs [Players]*servertest.Env, prefix string) *Call {
	devs := make(chan *engine.MemoryDevices, Players)
	voice.SetEngineFactory(func(cfg voice.EngineConfig) (voice.Engine, error) {
		select {
		case d := <-devs:
			return engine.New(cfg, engine.Options{Devices: d})
		default:
			return nil, fmt.Errorf("no memory devices left for another engine")
		}
	})
	t.Cleanup(func() { voice.SetEngineFactory(nil) })

	c := &Call{t: t}
	ps := &c.Players
	longest := 0
	for i := range ps {
		env := envs[i]
		p := &Player{devs: engine.NewMemoryDevices(), voice: quality.SpeechLike(4*pcm.SampleRate, pcm.SampleRate, uint64(i+1))}
		p.Client = core.NewClientWithBases(env.APIURL, env.URL)
		t.Cleanup(p.Client.Close)
		p.Client.UpdateToken(core.AuthorizationTokenTypeBearer, env.ProvisionalToken(t, fmt.Sprint(prefix, i), ""), core.Func(func(*core.ClientResult) {}))
		p.Client.Connect()
		require.True(t, Pump(30*time.Second, func() bool {
			return p.Client.GetStatus() == core.ClientStatusReady && p.Client.GetCurrentUserV2() != nil
		}), "player %d connects", i)
		p.ID = p.Client.GetCurrentUserV2().Id()
		// The voice goes in through the microphone unprocessed: what is scored is the call.
		p.Client.SetEchoCancellation(false)
		p.Client.SetNoiseSuppression(false)
		p.Client.SetAutomaticGainControl(false)
		longest = max(longest, len(p.voice))
		ps[i] = p
	}
	for i, p := range ps {
		var res *core.ClientResult
		p.Client.CreateOrJoinLobby(prefix, core.Func(func(r *core.ClientResult, id uint64) { res, c.Lobby = r, id }))
		require.True(t, Pump(30*time.Second, func() bool { return res != nil }), "player %d joins", i)
		require.True(t, res.Successful(), res.ToString())
	}

	// The speech lasts the longest voice and 1.5 s of tail; the hooks only copy into this.
	c.frames = longest/pcm.FrameSamples + 75
	for i, p := range ps {
		for j := range p.heard {
			p.heard[j] = make([]int16, c.frames*pcm.FrameSamples)
		}
		from := func(user uint64) int {
			for j, q := range ps {
				if q.ID == user {
					return j
				}
			}
			return -1
		}
		devs <- p.devs
		p.Call = p.Client.StartCallWithAudioCallbacks(c.Lobby,
			core.Callback[core.ClientUserAudioReceivedCallback]{Fn: func(user uint64, data []int16, n uint64, _ int32, _ uint64, _ *bool) {
				j := from(user)
				if j < 0 {
					return
				}
				if c.speaking.Load() {
					at := p.place(j) * pcm.FrameSamples
					if at+len(data) <= len(p.heard[j]) {
						copy(p.heard[j][at:], data)
					}
					return
				}
				for _, v := range data {
					if v > 2000 || v < -2000 {
						p.loud[j].Add(1)
						return
					}
				}
			}},
			core.Callback[core.ClientUserAudioCapturedCallback]{Fn: func([]int16, uint64, int32, uint64) {
				if c.speaking.Load() {
					p.steps.Add(1)
				}
			}})
		require.NotNil(t, p.Call, "player %d starts the call", i)
		p.Call.SetAudioMode(core.AudioModeTypeMODE_PTT) // the gate stays open: every frame is sent
		p.Call.SetPTTActive(true)
	}
	require.True(t, Pump(30*time.Second, func() bool {
		for _, p := range ps {
			if p.Call.GetStatus() != core.CallStatusConnected || len(p.Call.GetParticipants()) != Players {
				return false
			}
		}
		return true
	}), "all three Connected with three participants")
	code := ps[0].Call.GetVerificationCode()
	for _, p := range ps {
		assert.Equal(t, code, p.Call.GetVerificationCode(), "one verification code on every screen")
	}

	// The sound systems, in real time: a tone from every microphone until each player hears
	// both others (the keys have arrived), then each voice once (Speak).
	var started [Players]atomic.Int64 // the period at which each microphone started its voice
	c.wg.Add(1)
	go func() { // owned by the Call: the test's cleanup stops it and waits
		defer c.wg.Done()
		in, out := make([]int16, period), make([]int16, period)
		begin := time.Now()
		for k := 0; !c.stop.Load(); k++ {
			time.Sleep(time.Until(begin.Add(time.Duration(k) * 10 * time.Millisecond)))
			for i, p := range ps {
				s := p.devs.Stream()
				if s == nil {
					continue
				}
				if !c.speaking.Load() {
					for n := range in {
						in[n] = int16(8000 * math.Sin(2*math.Pi*toneHz(i)*float64(k*period+n)/pcm.SampleRate))
					}
				} else {
					if started[i].Load() == 0 {
						started[i].Store(int64(k))
					}
					at := (k - int(started[i].Load())) * period
					clear(in)
					if at < len(p.voice) {
						copy(in, p.voice[at:])
					}
				}
				s.Period(in, out)
				for j := range ps {
					old := math.Float64frombits(p.power[j].Load())
					p.power[j].Store(math.Float64bits(0.9*old + 0.1*powerOf(out, toneHz(j))))
				}
			}
		}
	}()
	t.Cleanup(func() { c.stop.Store(true); c.wg.Wait() })
	require.True(t, Pump(30*time.Second, func() bool {
		for i, p := range ps {
			for j := range ps {
				if i != j && p.loud[j].Load() < 10 {
					return false
				}
			}
		}
		return true
	}), "each player hears both others' tone")
	return c
}

// Speak plays each player's voice once into its microphone, recording what each hears of the
// others (Player.place), then goes back to the tones.
func (c *Call) Speak() {
	c.speaking.Store(true)
	require.True(c.t, Pump(60*time.Second, func() bool {
		for l, p := range c.Players {
			if p.steps.Load() < int64(c.frames) {
				return false
			}
			for s := range c.Players {
				if s != l && p.next[s].Load() < int64(c.frames) {
					return false
				}
			}
		}
		return true
	}), "each voice played and recorded")
	c.speaking.Store(false)
}

// Level is the level of sender's tone at listener's speaker, in dBFS (the tones are sent at
// -12 dBFS).
func (c *Call) Level(listener, sender int) float64 {
	return 10 * math.Log10(math.Float64frombits(c.Players[listener].power[sender].Load())+1e-12)
}

// End ends every player's call and waits until the engines have stopped.
func (c *Call) End() {
	ended := 0
	for _, p := range c.Players {
		p.Client.EndCall(c.Lobby, core.Func(func() { ended++ }))
	}
	require.True(c.t, Pump(30*time.Second, func() bool { return ended == Players }), "EndCall completes")
}

// Score scores what each player heard of each other during Speak against what that one said
// (speechscore), logging each score and failing the test for one out of bounds. Call after End:
// no hook writes the recordings any more.
func (c *Call) Score() {
	for s, sender := range c.Players {
		for l, listener := range c.Players {
			if l == s {
				continue
			}
			score, err := speechscore.Compare(sender.voice, listener.heard[s])
			require.NoError(c.t, err)
			c.t.Logf("player %d hears player %d at %s", l, s, score)
			assert.True(c.t, score.OK(), "player %d hearing player %d: %s", l, s, score)
		}
	}
}

// Pump runs the SDK's callbacks until done or the timeout.
func Pump(timeout time.Duration, done func() bool) bool {
	for deadline := time.Now().Add(timeout); time.Now().Before(deadline); {
		core.RunCallbacks()
		if done() {
			return true
		}
		core.WaitCallbacks(10 * time.Millisecond)
	}
	return false
}
