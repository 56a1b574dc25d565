package voice

import (
	"cmp"
	"encoding/json"
	"errors"
	"slices"
	"sync"
)

// Settings are the player's voice settings that apply to every call of a Client, present and
// future.
type Settings struct {
	SelfMute, SelfDeaf        bool
	InputVolume               float32 // 0..100
	OutputVolume              float32 // 0..200
	InputDevice, OutputDevice string  // "" is the system's default
	NoInputThreshold          float32 // dBFS
	EchoCancellation          bool
	NoiseSuppression          bool
	AutoGain                  bool
	NoiseCancellation         bool
}

// DefaultSettings are the settings of a new Client: full volume, echo cancellation, noise
// suppression and gain control on, noise cancellation off.
func DefaultSettings() Settings {
	return Settings{InputVolume: 100, OutputVolume: 100, NoInputThreshold: -100,
		EchoCancellation: true, NoiseSuppression: true, AutoGain: true}
}

// ApplyTo sets the engine settings of s on the engine of a new call (self mute and deafen are
// the call's, given in its Config).
func (s Settings) ApplyTo(e Engine) {
	e.SetInputVolume(s.InputVolume)
	e.SetOutputVolume(s.OutputVolume)
	e.SetNoInputThreshold(s.NoInputThreshold)
	e.SetEchoCancellation(s.EchoCancellation)
	e.SetNoiseSuppression(s.NoiseSuppression)
	e.SetAutoGain(s.AutoGain)
	e.SetNoiseCancellation(s.NoiseCancellation)
}

// ErrInCall is a call started in a lobby whose call the player is already in.
var ErrInCall = errors.New("already in that call")

// Entry is a call of a Registry and what its owner keeps with it.
type Entry[H any] struct {
	Call  *Call
	Hooks H
}

// Registry holds a Client's calls, one per lobby, and the settings that apply to all of them.
// Its lock is held while a call starts (Start), so that two calls of one lobby never start; a
// call's events may take other locks meanwhile, so the registry's lock is never taken while
// holding a lock that a call's events take.
type Registry[H any] struct {
	mu       sync.Mutex
	calls    map[uint64]*Entry[H]
	settings *Settings // nil until first used: DefaultSettings

	// The engine factory of the calls (nil: NewEngine) and a last change to each new call's
	// configuration (nil: none), which tests set (SetFactory).
	newEngine func(EngineConfig) (Engine, error)
	tune      func(*Config)
}

// SetFactory makes the registry's calls, and the temporary engines of WithEngine and SetDevice,
// use newEngine (nil: NewEngine), and passes each new call's configuration through tune (nil:
// none) before the call starts. Tests use it for in-memory engines and signaling.
func (r *Registry[H]) SetFactory(newEngine func(EngineConfig) (Engine, error), tune func(*Config)) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.newEngine, r.tune = newEngine, tune
}

// Factory returns what SetFactory set.
func (r *Registry[H]) Factory() (newEngine func(EngineConfig) (Engine, error), tune func(*Config)) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.newEngine, r.tune
}

func (r *Registry[H]) settingsLocked() *Settings {
	if r.settings == nil {
		s := DefaultSettings()
		r.settings = &s
	}
	return r.settings
}

// Settings returns the settings.
func (r *Registry[H]) Settings() Settings {
	r.mu.Lock()
	defer r.mu.Unlock()
	return *r.settingsLocked()
}

// Set changes the settings with change, then, if apply is not nil, applies the change with it to
// every call, in lobby order, without the registry's lock.
func (r *Registry[H]) Set(change func(*Settings), apply func(*Call)) {
	r.mu.Lock()
	change(r.settingsLocked())
	r.mu.Unlock()
	if apply != nil {
		for _, c := range r.Calls() {
			apply(c)
		}
	}
}

// SetEngines is Set for a setting of the calls' engines: apply sets it on each call's engine.
func (r *Registry[H]) SetEngines(change func(*Settings), apply func(Engine)) {
	r.Set(change, func(c *Call) { apply(c.Engine()) })
}

// SetInputVolume sets the microphone volume of every call, present and future (0..100).
func (r *Registry[H]) SetInputVolume(v float32) {
	v = min(max(v, 0), 100)
	r.SetEngines(func(s *Settings) { s.InputVolume = v }, func(e Engine) { e.SetInputVolume(v) })
}

// SetOutputVolume sets the playback volume of every call, present and future (0..200).
func (r *Registry[H]) SetOutputVolume(v float32) {
	v = min(max(v, 0), 200)
	r.SetEngines(func(s *Settings) { s.OutputVolume = v }, func(e Engine) { e.SetOutputVolume(v) })
}

// SetNoInputThreshold sets the level (dBFS) below which every call's input counts as silent.
func (r *Registry[H]) SetNoInputThreshold(dBFS float32) {
	r.SetEngines(func(s *Settings) { s.NoInputThreshold = dBFS }, func(e Engine) { e.SetNoInputThreshold(dBFS) })
}

// Start adds the call that start makes for lobbyID with the current settings, or returns
// ErrInCall when the lobby has a call. start runs under the registry's lock.
func (r *Registry[H]) Start(lobbyID uint64, start func(Settings) (*Entry[H], error)) (*Entry[H], error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.calls[lobbyID] != nil {
		return nil, ErrInCall
	}
	e, err := start(*r.settingsLocked())
	if err != nil {
		return nil, err
	}
	if r.calls == nil {
		r.calls = map[uint64]*Entry[H]{}
	}
	r.calls[lobbyID] = e
	return e, nil
}

// Get returns the entry of a lobby's call, or nil.
func (r *Registry[H]) Get(lobbyID uint64) *Entry[H] {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.calls[lobbyID]
}

// Entries returns every entry, in lobby order.
func (r *Registry[H]) Entries() []*Entry[H] {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.sortedLocked(false)
}

// sortedLocked returns every entry in lobby order, and removes them all if take is set.
func (r *Registry[H]) sortedLocked(take bool) []*Entry[H] {
	out := make([]*Entry[H], 0, len(r.calls))
	for id, e := range r.calls {
		out = append(out, e)
		if take {
			delete(r.calls, id)
		}
	}
	slices.SortFunc(out, func(a, b *Entry[H]) int { return cmp.Compare(a.Call.LobbyID(), b.Call.LobbyID()) })
	return out
}

// Calls returns every call, in lobby order.
func (r *Registry[H]) Calls() []*Call {
	var out []*Call
	for _, e := range r.Entries() {
		out = append(out, e.Call)
	}
	return out
}

// Take removes the entry of a lobby's call and returns it, or nil; the caller ends the call.
func (r *Registry[H]) Take(lobbyID uint64) *Entry[H] {
	r.mu.Lock()
	defer r.mu.Unlock()
	e := r.calls[lobbyID]
	delete(r.calls, lobbyID)
	return e
}

// TakeAll removes every entry and returns them, in lobby order; the caller ends the calls.
func (r *Registry[H]) TakeAll() []*Entry[H] {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.sortedLocked(true)
}

// HandleDispatch hands a voice dispatch of the gateway to every call.
func (r *Registry[H]) HandleDispatch(event string, data json.RawMessage) {
	for _, c := range r.Calls() {
		c.HandleDispatch(event, data)
	}
}

// SignalingLost tells every call that the gateway session dropped: the service ends a call with
// its gateway connection (rule ST-4).
func (r *Registry[H]) SignalingLost() {
	for _, c := range r.Calls() {
		c.SignalingLost()
	}
}
