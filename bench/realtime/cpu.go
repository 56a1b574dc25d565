package main

import (
	"errors"
	"os"
	"strconv"
	"strings"
	"time"
)

// clockTick is the unit of /proc/<pid>/stat's CPU times (USER_HZ, 100 on Linux).
const clockTick = 10 * time.Millisecond

// procCPU reads the CPU time (user and system) a process has used so far from /proc.
func procCPU(pid int) (time.Duration, error) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return 0, err
	}
	// The command name (field 2) may hold spaces; utime and stime are fields 14 and 15.
	end := strings.LastIndexByte(string(b), ')')
	if end < 0 {
		return 0, errors.New("malformed /proc stat")
	}
	f := strings.Fields(string(b[end+1:]))
	if len(f) < 13 {
		return 0, errors.New("short /proc stat")
	}
	utime, err := strconv.ParseInt(f[11], 10, 64)
	if err != nil {
		return 0, err
	}
	stime, err := strconv.ParseInt(f[12], 10, 64)
	if err != nil {
		return 0, err
	}
	return time.Duration(utime+stime) * clockTick, nil
}

// procSyscalls reads how many read and write system calls (read, write, pread, pwrite, sendmsg,
// recvmsg and their kin) a process has made so far, from /proc/<pid>/io.
func procSyscalls(pid int) (reads, writes int64, err error) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/io")
	if err != nil {
		return 0, 0, err
	}
	for _, line := range strings.Split(string(b), "\n") {
		k, v, ok := strings.Cut(line, ": ")
		if !ok {
			continue
		}
		n, err := strconv.ParseInt(strings.TrimSpace(v), 10, 64)
		if err != nil {
			return 0, 0, err
		}
		switch k {
		case "syscr":
			reads = n
		case "syscw":
			writes = n
		}
	}
	return reads, writes, nil
}

// cpuMeter sums the CPU time two processes use during measured spans: the server (the sdkpp
// service or redis-server) and this program, whose clients drive it.
type cpuMeter struct {
	server          int // its pid
	serverCPU, self time.Duration
	s0, c0          time.Duration
	// The server's read and write system calls during the spans, and at the span's start.
	reads, writes, r0, w0 int64
	// This program's (the clients'), likewise.
	selfReads, selfWrites, sr0, sw0 int64
}

// start begins a span.
func (m *cpuMeter) start() error {
	var err error
	if m.s0, err = procCPU(m.server); err != nil {
		return err
	}
	if m.r0, m.w0, err = procSyscalls(m.server); err != nil {
		return err
	}
	if m.sr0, m.sw0, err = procSyscalls(os.Getpid()); err != nil {
		return err
	}
	m.c0, err = procCPU(os.Getpid())
	return err
}

// stop ends the span begun by start and adds its CPU times.
func (m *cpuMeter) stop() error {
	s, err := procCPU(m.server)
	if err != nil {
		return err
	}
	c, err := procCPU(os.Getpid())
	if err != nil {
		return err
	}
	r, w, err := procSyscalls(m.server)
	if err != nil {
		return err
	}
	sr, sw, err := procSyscalls(os.Getpid())
	if err != nil {
		return err
	}
	m.selfReads += sr - m.sr0
	m.selfWrites += sw - m.sw0
	m.serverCPU += s - m.s0
	m.self += c - m.c0
	m.reads += r - m.r0
	m.writes += w - m.w0
	return nil
}

// perMessage is the CPU time per message of the server and of this program.
func (m *cpuMeter) perMessage(messages int) (server, self time.Duration) {
	n := time.Duration(max(messages, 1))
	return m.serverCPU / n, m.self / n
}

// syscallsPerMessage is the server's read and write system calls per message.
func (m *cpuMeter) syscallsPerMessage(messages int) (reads, writes float64) {
	n := float64(max(messages, 1))
	return float64(m.reads) / n, float64(m.writes) / n
}

// selfSyscallsPerMessage is this program's (the clients') read and write system calls per
// message.
func (m *cpuMeter) selfSyscallsPerMessage(messages int) (reads, writes float64) {
	n := float64(max(messages, 1))
	return float64(m.selfReads) / n, float64(m.selfWrites) / n
}
