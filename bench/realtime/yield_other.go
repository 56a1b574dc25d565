//go:build !linux

package main

// yieldThread does nothing where sched_yield is not at hand; the Go scheduler still yields.
func yieldThread() {}
