package store

import "golang.org/x/sys/unix"

// lowerThreadPriority adds by to the nice value of the calling thread (which the caller has
// locked), up to the lowest priority (19), and returns the thread's id. On Linux a nice value
// belongs to a thread, not to the process.
func lowerThreadPriority(by int) (int, error) {
	tid := unix.Gettid()
	// The system call answers 20 minus the nice value, so that a priority is never negative.
	raw, err := unix.Getpriority(unix.PRIO_PROCESS, tid)
	if err != nil {
		return tid, err
	}
	return tid, unix.Setpriority(unix.PRIO_PROCESS, tid, min(20-raw+by, 19))
}
