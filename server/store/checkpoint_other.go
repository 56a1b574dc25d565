//go:build !linux

package store

// lowerThreadPriority leaves the thread's priority as it is where a nice value belongs to the
// whole process; it reports thread 0.
func lowerThreadPriority(int) (int, error) { return 0, nil }
