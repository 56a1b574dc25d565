package device

import (
	"syscall"
	"unsafe"
)

// rawRead reads a non-blocking descriptor without entering the scheduler's system-call state.
func rawRead(fd uintptr, p []byte) (int, syscall.Errno) {
	n, _, errno := syscall.RawSyscall(syscall.SYS_READ, fd, uintptr(unsafe.Pointer(unsafe.SliceData(p))), uintptr(len(p)))
	return int(n), errno
}
