// Package nonblock writes to a TCP connection's socket without waiting: one system call that
// takes what the socket's buffer has room for, so that the gateway's dispatcher can write a few
// connections itself and leave the rest to their loops.
package nonblock
