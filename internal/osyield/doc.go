// Package osyield gives up the calling thread's CPU to the threads waiting for it, as a hint to
// the operating system's scheduler.
//
// A server thread that has just written to a socket has usually woken the reading thread on its
// own CPU (Linux places the wakee beside a waker it expects to sleep soon). When the writer goes
// on with work of its own instead, the reader waits for it. Calling Yield between the write and
// that work lets the reader run first.
package osyield
