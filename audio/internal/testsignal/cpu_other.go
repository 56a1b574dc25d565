//go:build !linux

package testsignal

import "testing"

// ReportCPU reports nothing outside Linux; there it adds the CPU time per operation.
func ReportCPU(b *testing.B) {}
