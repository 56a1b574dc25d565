package testsignal

import (
	"syscall"
	"testing"
	"time"
)

// ReportCPU makes b also report the process's CPU time per operation ("cpu-ns/op"), which stays
// meaningful when other processes share the cores and inflate the wall-clock ns/op. Call it
// right before the benchmark loop.
func ReportCPU(b *testing.B) {
	start := cpuTime()
	b.Cleanup(func() {
		if b.N > 0 {
			b.ReportMetric(float64(cpuTime()-start)/float64(b.N), "cpu-ns/op")
		}
	})
}

func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
