// Package hookrelay runs the game's raw-audio hooks on a companion of the thread that calls them:
// a thread that runs nothing but the hooks, and never Go code.
//
// A hook written in C# makes its managed runtime attach the thread it runs on. Mono stops the
// world by suspending attached threads that are in native code with signals, and retries a thread
// it finds on a stack other than the thread's own, which is where Go code runs: a thread that also
// runs the SDK's audio processing could be found waiting in Go, on a goroutine stack, for a lock
// held by a thread Mono has already suspended, and be retried for ever. So the audio thread hands
// each hook to its companion and waits in C; the companion is created at the first hook and ends
// when the audio thread ends.
//
// C code calls sdkpp_hook_relay (relay.h) directly; this package only links it in.
package hookrelay

/*
#include "relay.h"
*/
import "C"

// live returns the number of companion threads that have not ended.
func live() int { return int(C.sdkpp_hook_relay_live()) }

// probe runs a function on the calling thread's companion and returns the companion's system id.
func probe() uint64 { return uint64(C.sdkpp_hook_relay_probe()) }
