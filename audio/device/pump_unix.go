//go:build unix

package device

/*
#include "sides.h"
*/
import "C"

import (
	"os"
	"syscall"
)

// pump waits on the notifier's pipe through the runtime's poller and delivers each wake-up, until
// the notifier is closed (the pipe's writing end: end of file). It reads the pipe without telling
// the scheduler (a raw read of a non-blocking pipe cannot block), because every system call a
// goroutine makes while the process is idle wakes the runtime's sysmon.
func (r *rings) pump() {
	defer close(r.pumpDone)
	f := os.NewFile(uintptr(C.sdkpp_notifier_handle(r.n)), "sdkpp device wake-ups")
	defer f.Close()
	rc, err := f.SyscallConn()
	if err != nil {
		return
	}
	var buf [64]byte
	for {
		var n int
		var errno syscall.Errno
		err := rc.Read(func(fd uintptr) bool {
			n, errno = rawRead(fd, buf[:])
			return errno != syscall.EAGAIN
		})
		r.deliver()
		if err != nil || n == 0 || errno != 0 && errno != syscall.EINTR {
			return
		}
	}
}
