// Package voicecall tests voice calls from Go end to end: three SDK clients (core.Client) in one
// lobby's call through the live service on loopback, each with the real voice engine
// (audio/engine) on in-memory sound devices that the test plays in real time.
package voicecall

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"net/http"
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

const (
	players = 3
	period  = pcm.SampleRate / 100 // one 10 ms device period
)

// player is one SDK client in the call, with its sound devices and what its hooks saw.
type player struct {
	client *core.Client
	call   *core.Call
	devs   *engine.MemoryDevices
	id     uint64
	voice  []int16 // what its microphone says once the speech starts

	// power[j] is the power of player j's tone at this player's speaker, averaged over the last
	// periods (written by the sound-system goroutine).
	power [players]atomic.Uint64 // math.Float64bits

	// Written by the engine's processing thread (the hooks), read after the call ends or
	// atomically.
	steps atomic.Int64          // processing steps since the speech started
	loud  [players]atomic.Int64 // loud frames heard from each player before the speech
	heard [players][]int16      // each other player's voice, by this player's steps
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

// rule VER-2: three players talk in an end-to-end encrypted call through the service's relay:
// each one's recorded voice, captured by its engine from its in-memory microphone, reaches both
// others, scored by log-spectral distance against the same voice through Opus alone
// (speechscore). Then, heard at the speakers: participant volume, local mute, deafen,
// push-to-talk and self mute do what they say.
func TestThreePlayersHearEachOther(t *testing.T) {
	env := servertest.Start(t)
	devs := make(chan *engine.MemoryDevices, players)
	voice.SetEngineFactory(func(cfg voice.EngineConfig) (voice.Engine, error) {
		select {
		case d := <-devs:
			return engine.New(cfg, engine.Options{Devices: d})
		default:
			return nil, fmt.Errorf("no memory devices left for another engine")
		}
	})
	t.Cleanup(func() { voice.SetEngineFactory(nil) })

	var ps [players]*player
	longest := 0
	for i := range ps {
		p := &player{devs: engine.NewMemoryDevices(), voice: quality.SpeechLike(4*pcm.SampleRate, pcm.SampleRate, uint64(i+1))}
		p.client = core.NewClientWithBases(env.APIURL, env.URL)
		t.Cleanup(p.client.Close)
		p.client.UpdateToken(core.AuthorizationTokenTypeBearer, botToken(t, env, fmt.Sprint("voicecall-", i)), core.Func(func(*core.ClientResult) {}))
		p.client.Connect()
		require.True(t, pump(30*time.Second, func() bool {
			return p.client.GetStatus() == core.ClientStatusReady && p.client.GetCurrentUserV2() != nil
		}), "player %d connects", i)
		p.id = p.client.GetCurrentUserV2().Id()
		// The voice goes in through the microphone unprocessed: what is scored is the call.
		p.client.SetEchoCancellation(false)
		p.client.SetNoiseSuppression(false)
		p.client.SetAutomaticGainControl(false)
		longest = max(longest, len(p.voice))
		ps[i] = p
	}
	var lobby uint64
	for i, p := range ps {
		var res *core.ClientResult
		p.client.CreateOrJoinLobby("voicecall", core.Func(func(r *core.ClientResult, id uint64) { res, lobby = r, id }))
		require.True(t, pump(30*time.Second, func() bool { return res != nil }), "player %d joins", i)
		require.True(t, res.Successful(), res.ToString())
	}

	// The speech lasts the longest voice and 1.5 s of tail; the hooks only copy into this.
	frames := longest/pcm.FrameSamples + 75
	var speaking atomic.Bool
	for i, p := range ps {
		for j := range p.heard {
			p.heard[j] = make([]int16, frames*pcm.FrameSamples)
		}
		from := func(user uint64) int {
			for j, q := range ps {
				if q.id == user {
					return j
				}
			}
			return -1
		}
		devs <- p.devs
		p.call = p.client.StartCallWithAudioCallbacks(lobby,
			core.Callback[core.ClientUserAudioReceivedCallback]{Fn: func(user uint64, data []int16, n uint64, _ int32, _ uint64, _ *bool) {
				j := from(user)
				if j < 0 {
					return
				}
				if speaking.Load() {
					at := int(p.steps.Load()-1) * pcm.FrameSamples // this step's captured hook ran first
					if at >= 0 && at+len(data) <= len(p.heard[j]) {
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
				if speaking.Load() {
					p.steps.Add(1)
				}
			}})
		require.NotNil(t, p.call, "player %d starts the call", i)
		p.call.SetAudioMode(core.AudioModeTypeMODE_PTT) // the gate stays open: every frame is sent
		p.call.SetPTTActive(true)
	}
	require.True(t, pump(30*time.Second, func() bool {
		for _, p := range ps {
			if p.call.GetStatus() != core.CallStatusConnected || len(p.call.GetParticipants()) != players {
				return false
			}
		}
		return true
	}), "all three Connected with three participants")
	code := ps[0].call.GetVerificationCode()
	for _, p := range ps {
		assert.Equal(t, code, p.call.GetVerificationCode(), "one verification code on every screen")
	}

	// The sound systems, in real time: a tone from every microphone until each player hears
	// both others (the keys have arrived), then each voice once.
	var stop atomic.Bool
	var wg sync.WaitGroup
	var started [players]atomic.Int64 // the period at which each microphone started its voice
	wg.Add(1)
	go func() {
		defer wg.Done()
		in, out := make([]int16, period), make([]int16, period)
		begin := time.Now()
		for k := 0; !stop.Load(); k++ {
			time.Sleep(time.Until(begin.Add(time.Duration(k) * 10 * time.Millisecond)))
			for i, p := range ps {
				s := p.devs.Stream()
				if s == nil {
					continue
				}
				if !speaking.Load() {
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
	defer func() { stop.Store(true); wg.Wait() }()
	require.True(t, pump(30*time.Second, func() bool {
		for i, p := range ps {
			for j := range ps {
				if i != j && p.loud[j].Load() < 10 {
					return false
				}
			}
		}
		return true
	}), "each player hears both others' tone")
	speaking.Store(true)
	require.True(t, pump(60*time.Second, func() bool {
		for _, p := range ps {
			if p.steps.Load() < int64(frames) {
				return false
			}
		}
		return true
	}), "each voice played and recorded")
	speaking.Store(false)

	// The controls, heard at the speakers: each player's tone is one frequency, so each speaker's
	// mix tells who is audible in it.
	level := func(listener, sender int) float64 { // dBFS
		return 10 * math.Log10(math.Float64frombits(ps[listener].power[sender].Load())+1e-12)
	}
	audible := func(l, s int) bool { return level(l, s) > -30 } // the tones are sent at -12 dBFS
	silent := func(l, s int) bool { return level(l, s) < -60 }
	require.True(t, pump(30*time.Second, func() bool {
		for l := range ps {
			for s := range ps {
				if l != s && level(l, s) < -14 { // settled near the tones' -12 dBFS
					return false
				}
			}
		}
		return true
	}), "every speaker plays both others' tones")
	// Player 2 hears players 0 and 1 alike; at volume 50, player 0 is 6 dB below player 1.
	require.True(t, pump(10*time.Second, func() bool { return math.Abs(level(2, 0)-level(2, 1)) < 1 }),
		"players 0 and 1 equally loud at player 2's speaker (%.1f, %.1f dBFS)", level(2, 0), level(2, 1))
	ps[2].call.SetParticipantVolume(ps[0].id, 50)
	assert.True(t, pump(10*time.Second, func() bool { return math.Abs(level(2, 0)-level(2, 1)+6.02) < 1 }),
		"participant volume 50: player 0 is 6 dB below player 1 at player 2's speaker (%.1f, %.1f dBFS)", level(2, 0), level(2, 1))
	ps[2].call.SetParticipantVolume(ps[0].id, 100)

	ps[1].call.SetLocalMute(ps[0].id, true)
	assert.True(t, pump(10*time.Second, func() bool { return silent(1, 0) }), "local mute: player 1 no longer plays player 0")
	assert.True(t, audible(1, 2), "local mute: player 1 still plays player 2")
	ps[1].call.SetLocalMute(ps[0].id, false)
	assert.True(t, pump(10*time.Second, func() bool { return audible(1, 0) }), "local mute undone")

	ps[2].call.SetSelfDeaf(true)
	assert.True(t, pump(10*time.Second, func() bool { return silent(2, 0) && silent(2, 1) }), "deafen: player 2's speaker plays no one")
	ps[2].call.SetSelfDeaf(false)

	ps[0].call.SetPTTActive(false)
	assert.True(t, pump(10*time.Second, func() bool { return silent(1, 0) && silent(2, 0) }),
		"push-to-talk released: no one hears player 0")
	assert.True(t, audible(0, 1) && audible(1, 2), "the others still talk")
	ps[0].call.SetPTTActive(true)
	assert.True(t, pump(10*time.Second, func() bool { return audible(1, 0) }), "push-to-talk pressed: player 0 is heard again")

	ps[1].call.SetSelfMute(true)
	assert.True(t, pump(10*time.Second, func() bool { return silent(0, 1) && silent(2, 1) }), "self mute: no one hears player 1")
	assert.True(t, pump(10*time.Second, func() bool { return audible(0, 2) }), "player 2 is still heard")

	ended := 0
	for _, p := range ps {
		p.client.EndCall(lobby, core.Func(func() { ended++ }))
	}
	require.True(t, pump(30*time.Second, func() bool { return ended == players }), "EndCall completes")
	// The engines have stopped: no hook writes the recordings any more.
	for s, sender := range ps {
		for l, listener := range ps {
			if l == s {
				continue
			}
			score, err := speechscore.Compare(sender.voice, listener.heard[s])
			require.NoError(t, err)
			t.Logf("player %d hears player %d at %s", l, s, score)
			assert.True(t, score.OK(), "player %d hearing player %d: %s", l, s, score)
		}
	}
}

// pump runs the SDK's callbacks until done or the timeout.
func pump(timeout time.Duration, done func() bool) bool {
	for deadline := time.Now().Add(timeout); time.Now().Before(deadline); {
		core.RunCallbacks()
		if done() {
			return true
		}
		core.WaitCallbacks(10 * time.Millisecond)
	}
	return false
}

// botToken gets a provisional player's token from the bot endpoint, as a game backend does.
func botToken(t *testing.T, env *servertest.Env, externalID string) string {
	t.Helper()
	body, _ := json.Marshal(map[string]string{"external_user_id": externalID})
	req, err := http.NewRequest(http.MethodPost, env.APIURL+"/partner-sdk/token/bot", bytes.NewReader(body))
	require.NoError(t, err)
	req.Header.Set("Authorization", "Bot "+env.App.BotToken)
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	require.Equal(t, http.StatusOK, resp.StatusCode)
	var tr struct {
		AccessToken string `json:"access_token"`
	}
	require.NoError(t, json.NewDecoder(resp.Body).Decode(&tr))
	return tr.AccessToken
}
