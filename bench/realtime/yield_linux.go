package main

import "syscall"

// yieldThread gives the thread's core to any other runnable thread (sched_yield).
func yieldThread() { _, _, _ = syscall.RawSyscall(syscall.SYS_SCHED_YIELD, 0, 0, 0) }
