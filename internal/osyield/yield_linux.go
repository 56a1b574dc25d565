package osyield

import "syscall"

// Yield lets the threads waiting for this CPU run before the caller goes on (sched_yield). It
// returns at once when none waits.
func Yield() { _ = schedYield() }

func schedYield() syscall.Errno {
	_, _, errno := syscall.Syscall(syscall.SYS_SCHED_YIELD, 0, 0, 0)
	return errno
}
