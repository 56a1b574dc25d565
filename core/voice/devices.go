package voice

import "fmt"

// WithEngine runs fn with an engine: a call's if there is one, else a temporary one that
// the registry's factory (SetFactory; NewEngine when nil) makes and that is not started, since device lists and
// selection need no running engine.
func (r *Registry[H]) WithEngine(fn func(Engine) error) error {
	if calls := r.Calls(); len(calls) > 0 {
		return fn(calls[0].Engine())
	}
	newEngine, _ := r.Factory()
	if newEngine == nil {
		newEngine = NewEngine
	}
	eng, err := newEngine(EngineConfig{})
	if err != nil {
		return fmt.Errorf("audio engine: %w", err)
	}
	defer eng.Close()
	return fn(eng)
}

// SetDevice selects the input device id (the output device unless input) on every call's
// engine, or tries it on a temporary engine when there is no call, and records it for the calls
// to come. The first error wins and records nothing.
func (r *Registry[H]) SetDevice(input bool, id string) error {
	set := Engine.SetOutputDevice
	if input {
		set = Engine.SetInputDevice
	}
	var err error
	if calls := r.Calls(); len(calls) > 0 {
		for _, call := range calls {
			if e := set(call.Engine(), id); e != nil && err == nil {
				err = e
			}
		}
	} else {
		err = r.WithEngine(func(e Engine) error { return set(e, id) })
	}
	if err != nil {
		return err
	}
	r.Set(func(s *Settings) {
		if input {
			s.InputDevice = id
		} else {
			s.OutputDevice = id
		}
	}, nil)
	return nil
}
