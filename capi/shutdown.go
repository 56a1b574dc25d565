package main

import "C"

import "sdkpp/core"

// maxShutdownRounds bounds the RunCallbacks rounds of Sdkpp_Shutdown: a callback that keeps
// queueing work (by creating a Client, say) cannot keep it from returning.
const maxShutdownRounds = 8

// Sdkpp_Shutdown returns the library to its state at load, for an engine that reloads its scripts
// without unloading the library (Unity's domain reload): afterwards it holds no handle, callback
// or userData of the game's.
//
//export Sdkpp_Shutdown
func Sdkpp_Shutdown() {
	defer guard("Shutdown")
	core.SetFallbackLogCallback(core.Callback[core.ClientLogCallback]{}, core.LoggingSeverityNone)
	entries := objects.RemoveAll()
	for _, e := range entries {
		if c, ok := e.Value.(*core.Client); ok { // its connection, calls, timers and handlers end
			c.Close()
		}
	}
	// Closing queued every pending one-shot with ClientDestroyed (or kept the result it had
	// already queued): run them here, on the caller's thread, so each fires exactly once and its
	// userData is freed after it.
	for range maxShutdownRounds {
		if core.RunCallbacks() == 0 {
			break
		}
	}
	core.ResetCallbacks() // what the last round's callbacks queued: freed, never called
	// The results the callbacks were given, and anything they made, go too: no handle outlives
	// the call.
	late := objects.RemoveAll()
	for _, e := range late {
		if c, ok := e.Value.(*core.Client); ok {
			c.Close()
		}
	}
	core.ResetCallbacks()
	abiRefused.Store(false)
	core.Log(core.LoggingSeverityInfo, "Sdkpp_Shutdown: dropped %d objects", len(entries)+len(late))
}
