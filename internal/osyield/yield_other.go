//go:build !linux

package osyield

// Yield does nothing on this system: the wake placement it works around is Linux's.
func Yield() {}
