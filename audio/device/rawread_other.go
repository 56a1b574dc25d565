//go:build unix && !linux

package device

import "syscall"

// rawRead reads a non-blocking descriptor.
func rawRead(fd uintptr, p []byte) (int, syscall.Errno) {
	n, err := syscall.Read(int(fd), p)
	if errno, ok := err.(syscall.Errno); ok {
		return max(n, 0), errno
	}
	return max(n, 0), 0
}
