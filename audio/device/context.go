package device

/*
#include "devices.h"
*/
import "C"

import (
	"encoding/hex"
	"fmt"
	"runtime/cgo"
	"slices"
	"sync"
	"time"

	"github.com/gen2brain/malgo"

	"sdkpp/audio/pcm"
)

// Backend selects the sound system a Context talks to.
type Backend int

const (
	// BackendDefault lets miniaudio pick the platform's first working sound system.
	BackendDefault Backend = iota
	// BackendPulseAudio uses PulseAudio (or PipeWire's PulseAudio server); PULSE_SERVER selects
	// the server.
	BackendPulseAudio
	// BackendNull uses miniaudio's null backend: capture yields silence, playback goes nowhere,
	// and periods come at real-time pace. For timing tests.
	BackendNull
)

// malgo returns the backends to hand malgo.InitContext for b: none for the default order.
func (b Backend) malgo() ([]malgo.Backend, error) {
	ma, err := b.maBackend()
	if err != nil || ma == sdkppBackendDefault {
		return nil, err
	}
	return []malgo.Backend{malgo.Backend(ma)}, nil
}

// DefaultPollInterval is how often a Context looks for devices coming and going when Options
// leaves PollInterval zero.
const DefaultPollInterval = time.Second

// Options configures a Context.
type Options struct {
	// Backend is the sound system to use.
	Backend Backend
	// PollInterval is how often the device list is read to notice devices appearing and
	// disappearing; zero means DefaultPollInterval, negative turns polling off.
	PollInterval time.Duration
	// Log, when set, receives miniaudio's log messages (on miniaudio's threads).
	Log func(message string)
}

// Change says what happened to a device.
type Change int

const (
	// Added: the device appeared.
	Added Change = iota + 1
	// Removed: the device disappeared.
	Removed
	// DefaultChanged: the device became or stopped being the default (Device.IsDefault says which).
	DefaultChanged
)

// String names the change.
func (c Change) String() string {
	switch c {
	case Added:
		return "added"
	case Removed:
		return "removed"
	case DefaultChanged:
		return "default changed"
	}
	return "unknown"
}

// Event reports a change in the device list.
type Event struct {
	// Change is what happened.
	Change Change
	// Kind is the device's kind.
	Kind Kind
	// Device is the device as listed after the change (before it, for Removed).
	Device Info
}

// eventBuffer is how many events wait for a reader before the poller waits for it.
const eventBuffer = 64

// Context is a connection to one sound system. It lists devices, opens streams, and watches the
// device list on a goroutine it owns. It holds two miniaudio contexts on the same backend: malgo's,
// which lists devices, and one of its own (devices.c), on which the streams' devices are opened
// so that their data callbacks can be C. Its methods may be called from any goroutine but not from a
// device callback. Close releases it and the streams it opened.
type Context struct {
	// mu serializes every call into the miniaudio contexts (device enumeration and device
	// initialization share a context's connection to the sound system) and guards the fields
	// below.
	mu      sync.Mutex
	ctx     *malgo.AllocatedContext
	cctx    *C.sdkpp_context
	log     cgo.Handle // of Options.Log, for the C context; zero without one
	streams map[*stream]struct{}
	closed  bool

	events chan Event
	stop   chan struct{}
	done   chan struct{}
}

// NewContext connects to the sound system opts.Backend names and starts watching its devices.
func NewContext(opts Options) (*Context, error) {
	backends, err := opts.Backend.malgo()
	if err != nil {
		return nil, err
	}
	var logProc malgo.LogProc
	if opts.Log != nil {
		logProc = opts.Log
	}
	mctx, err := malgo.InitContext(backends, malgo.ContextConfig{}, logProc)
	if err != nil {
		return nil, fmt.Errorf("device: init context: %w", err)
	}
	ma, _ := opts.Backend.maBackend() // valid: malgo() accepted it
	var log cgo.Handle
	if opts.Log != nil {
		log = cgo.NewHandle(opts.Log)
	}
	var cctx *C.sdkpp_context
	if err := maError(C.sdkpp_context_new(ma, C.uintptr_t(log), &cctx)); err != nil {
		if log != 0 {
			log.Delete()
		}
		_ = mctx.Uninit()
		mctx.Free()
		return nil, fmt.Errorf("device: init context: %w", err)
	}
	c := &Context{
		ctx:     mctx,
		cctx:    cctx,
		log:     log,
		streams: make(map[*stream]struct{}),
		events:  make(chan Event, eventBuffer),
		stop:    make(chan struct{}),
		done:    make(chan struct{}),
	}
	interval := opts.PollInterval
	if interval == 0 {
		interval = DefaultPollInterval
	}
	if interval < 0 {
		close(c.done)
		close(c.events)
		return c, nil
	}
	first, err := c.Devices()
	if err != nil {
		c.release()
		return nil, err
	}
	go c.poll(interval, first)
	return c, nil
}

// Events delivers device changes found by polling, in order. It is closed when the Context is
// closed (or at once when polling is off). Polling waits while the channel is full.
func (c *Context) Events() <-chan Event { return c.events }

// Devices lists the capture and playback devices now present.
func (c *Context) Devices() (List, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed {
		return List{}, fmt.Errorf("device: list: %w", ErrClosed)
	}
	return c.devicesLocked()
}

// listRetries are the waits before listing a kind of device again after the sound system
// failed to: a busy PulseAudio now and then answers an enumeration with an error (miniaudio's
// MA_ERROR, "Unknown error") that the next one does not repeat, as make test's parallel
// packages showed; once in fifteen runs of a sound-server test the first two retries failed
// too. At most 310 ms in all, which a game's device menu can wait.
var listRetries = []time.Duration{10 * time.Millisecond, 50 * time.Millisecond, 250 * time.Millisecond}

func (c *Context) devicesLocked() (List, error) {
	var l List
	for _, k := range []Kind{Capture, Playback} {
		infos, err := c.ctx.Devices(malgoKind(k))
		for _, wait := range listRetries {
			if err == nil {
				break
			}
			time.Sleep(wait)
			infos, err = c.ctx.Devices(malgoKind(k))
		}
		if err != nil {
			return List{}, fmt.Errorf("device: list %s devices: %w", k, err)
		}
		out := make([]Info, 0, len(infos))
		for i := range infos {
			out = append(out, Info{
				ID:        infos[i].ID.String(),
				Name:      infos[i].Name(),
				IsDefault: infos[i].IsDefault != 0,
			})
		}
		if k == Capture {
			l.Capture = out
		} else {
			l.Playback = out
		}
	}
	return l, nil
}

// poll reads the device list every interval and reports the differences until Close.
func (c *Context) poll(interval time.Duration, last List) {
	defer close(c.done)
	defer close(c.events)
	ticker := time.NewTicker(interval)
	defer ticker.Stop()
	for {
		select {
		case <-c.stop:
			return
		case <-ticker.C:
		}
		now, err := c.Devices()
		if err != nil {
			// A sound server that went away lists nothing; try again next tick.
			continue
		}
		for _, ev := range Diff(last, now) {
			select {
			case c.events <- ev:
			case <-c.stop:
				return
			}
		}
		last = now
	}
}

// Diff returns the events that lead from the device list before to the one after: removals first,
// then additions, then default changes, each in list order.
func Diff(before, after List) []Event {
	var events []Event
	for _, k := range []Kind{Capture, Playback} {
		old, cur := before.Of(k), after.Of(k)
		for _, d := range old {
			if !slices.ContainsFunc(cur, sameID(d)) {
				events = append(events, Event{Change: Removed, Kind: k, Device: d})
			}
		}
		for _, d := range cur {
			i := slices.IndexFunc(old, sameID(d))
			switch {
			case i < 0:
				events = append(events, Event{Change: Added, Kind: k, Device: d})
			case old[i].IsDefault != d.IsDefault:
				events = append(events, Event{Change: DefaultChanged, Kind: k, Device: d})
			}
		}
	}
	return events
}

func sameID(d Info) func(Info) bool { return func(o Info) bool { return o.ID == d.ID } }

// Open opens the devices cfg names, stopped. The Context keeps track of the stream and closes it
// if it is still open when the Context closes.
func (c *Context) Open(cfg Config) (Stream, error) {
	if !cfg.Capture && !cfg.Playback {
		return nil, fmt.Errorf("device: open: %w", ErrNothingToOpen)
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed {
		return nil, fmt.Errorf("device: open: %w", ErrClosed)
	}
	list, err := c.devicesLocked()
	if err != nil {
		return nil, fmt.Errorf("device: open: %w", err)
	}
	rg, err := newRings(cfg)
	if err != nil {
		return nil, err
	}
	s := &stream{ctx: c, rings: rg}
	var capture, playback Info
	if cfg.Capture {
		if capture, err = s.open(list, Capture, cfg.CaptureID, pcm.Channels); err != nil {
			s.release()
			return nil, err
		}
	}
	if cfg.Playback {
		if playback, err = s.open(list, Playback, cfg.PlaybackID, cfg.PlaybackChannels); err != nil {
			s.release()
			return nil, err
		}
	}
	s.info = streamInfo(capture, playback)
	c.streams[s] = struct{}{}
	return s, nil
}

// Close stops watching devices, closes the streams still open, and disconnects from the sound
// system. It is safe to call more than once.
func (c *Context) Close() error {
	c.mu.Lock()
	if c.closed {
		c.mu.Unlock()
		return nil
	}
	c.closed = true
	close(c.stop)
	c.mu.Unlock()
	<-c.done // the poller takes mu, so it is waited for without holding it

	c.mu.Lock()
	defer c.mu.Unlock()
	for s := range c.streams {
		s.closeLocked()
	}
	return c.release()
}

func (c *Context) release() error {
	C.sdkpp_context_free(c.cctx)
	if c.log != 0 {
		c.log.Delete()
	}
	err := c.ctx.Uninit()
	c.ctx.Free()
	if err != nil {
		return fmt.Errorf("device: uninit context: %w", err)
	}
	return nil
}

// lookup finds the device Open will use: the one with id, or the default when id is empty.
func lookup(list List, k Kind, id string) (Info, malgo.DeviceID, error) {
	devices := list.Of(k)
	if id == "" {
		for _, d := range devices {
			if d.IsDefault {
				return d, malgo.DeviceID{}, nil
			}
		}
		// The sound system marks no default; miniaudio still opens its own choice.
		return Info{Name: "default", IsDefault: true}, malgo.DeviceID{}, nil
	}
	i := slices.IndexFunc(devices, func(d Info) bool { return d.ID == id })
	if i < 0 {
		return Info{}, malgo.DeviceID{}, fmt.Errorf("device: open %s %q: %w", k, id, ErrNoDevice)
	}
	raw, err := parseID(id)
	if err != nil {
		return Info{}, malgo.DeviceID{}, fmt.Errorf("device: open %s %q: %w", k, id, err)
	}
	return devices[i], raw, nil
}

// parseID turns an Info.ID back into miniaudio's device ID (the inverse of malgo.DeviceID.String:
// hex with trailing zero bytes trimmed).
func parseID(id string) (malgo.DeviceID, error) {
	var raw malgo.DeviceID
	b, err := hex.DecodeString(id)
	if err != nil || len(b) > len(raw) {
		return raw, fmt.Errorf("%w: malformed id", ErrNoDevice)
	}
	copy(raw[:], b)
	return raw, nil
}

func malgoKind(k Kind) malgo.DeviceType {
	if k == Capture {
		return malgo.Capture
	}
	return malgo.Playback
}
