// Package osthread runs a function on an operating-system thread of its own, created for it and
// ended when the function returns.
//
// A goroutine locked with runtime.LockOSThread takes its thread with it when it exits, except
// when it was scheduled onto the runtime's first thread, which Go never ends. Code that lends its
// thread to a foreign runtime needs a thread that certainly ends: the game's raw-audio hooks make
// Mono and IL2CPP attach the thread they run on (the C ABI runs them on a companion of the audio
// thread that ends with it), and Mono waits at exit for every thread it attached. This package
// creates the thread in C; the function runs there as a cgo callback, which keeps it on that
// thread from start to end.
package osthread

/*
#include <stdint.h>
int sdkpp_osthread_start(uintptr_t h);
*/
import "C"

import (
	"fmt"
	"runtime/cgo"
)

// Go runs fn on a new OS thread, which ends when fn returns. It returns once the thread is
// created, or an error if the system refused to create one (then fn never runs).
func Go(fn func()) error {
	h := cgo.NewHandle(fn)
	if rc := C.sdkpp_osthread_start(C.uintptr_t(h)); rc != 0 {
		h.Delete()
		return fmt.Errorf("osthread: creating a thread: system error %d", int(rc))
	}
	return nil
}

//export sdkppOSThreadRun
func sdkppOSThreadRun(h C.uintptr_t) {
	handle := cgo.Handle(h)
	fn := handle.Value().(func())
	handle.Delete()
	fn()
}
