package main

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"strconv"
	"time"
)

// redisServer is a redis-server process on a loopback port, without persistence.
type redisServer struct {
	addr string
	cmd  *exec.Cmd
}

// startRedis starts redis-server and waits until it answers PING.
func startRedis() (*redisServer, error) {
	bin, err := exec.LookPath("redis-server")
	if err != nil {
		return nil, fmt.Errorf("redis-server is not installed (build/scripts/deps.sh bench installs it): %w", err)
	}
	addr, err := freeAddr()
	if err != nil {
		return nil, err
	}
	_, port, _ := net.SplitHostPort(addr)
	cmd := exec.Command(bin, "--bind", "127.0.0.1", "--port", port, "--save", "", "--appendonly", "no",
		"--protected-mode", "no", "--loglevel", "warning", "--maxclients", "20000")
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	r := &redisServer{addr: addr, cmd: cmd}
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		c, err := dialRedis(addr)
		if err == nil {
			_, err = c.do("PING")
			c.Close()
			if err == nil {
				return r, nil
			}
		}
		if time.Now().After(deadline) {
			r.Close()
			return nil, fmt.Errorf("redis-server did not answer: %w", err)
		}
	}
}

// Close stops the process and waits for it.
func (r *redisServer) Close() {
	_ = r.cmd.Process.Kill()
	_ = r.cmd.Wait()
}

// rss is the process's resident set size in bytes.
func (r *redisServer) rss() (int64, error) { return procRSS(r.cmd.Process.Pid) }

// redisConn is a minimal RESP2 client: commands as arrays of bulk strings, replies parsed as
// simple strings, errors, integers, bulk strings and arrays.
type redisConn struct {
	c net.Conn
	r *bufio.Reader
	w *bufio.Writer
}

func dialRedis(addr string) (*redisConn, error) {
	c, err := net.Dial("tcp", addr)
	if err != nil {
		return nil, err
	}
	return &redisConn{c: c, r: bufio.NewReaderSize(c, 64<<10), w: bufio.NewWriterSize(c, 64<<10)}, nil
}

func (c *redisConn) Close() error { return c.c.Close() }

// send buffers one command; flush writes what is buffered.
func (c *redisConn) send(args ...string) {
	c.w.WriteString("*" + strconv.Itoa(len(args)) + "\r\n")
	for _, a := range args {
		c.w.WriteString("$" + strconv.Itoa(len(a)) + "\r\n")
		c.w.WriteString(a)
		c.w.WriteString("\r\n")
	}
}

func (c *redisConn) flush() error { return c.w.Flush() }

// do sends one command and reads its reply.
func (c *redisConn) do(args ...string) (any, error) {
	c.send(args...)
	if err := c.flush(); err != nil {
		return nil, err
	}
	return c.reply()
}

// reply reads one reply: string, int64, []byte (nil for a null bulk string), []any, or an error
// for a RESP error.
func (c *redisConn) reply() (any, error) {
	line, err := c.r.ReadSlice('\n')
	if err != nil {
		return nil, err
	}
	if len(line) < 3 || line[len(line)-2] != '\r' {
		return nil, errors.New("redis: malformed reply")
	}
	kind, body := line[0], string(line[1:len(line)-2])
	switch kind {
	case '+':
		return body, nil
	case '-':
		return nil, errors.New("redis: " + body)
	case ':':
		return strconv.ParseInt(body, 10, 64)
	case '$':
		n, err := strconv.Atoi(body)
		if err != nil || n < 0 {
			return []byte(nil), err
		}
		buf := make([]byte, n+2)
		if _, err := io.ReadFull(c.r, buf); err != nil {
			return nil, err
		}
		return buf[:n], nil
	case '*':
		n, err := strconv.Atoi(body)
		if err != nil || n < 0 {
			return []any(nil), err
		}
		out := make([]any, n)
		for i := range out {
			if out[i], err = c.reply(); err != nil {
				return nil, err
			}
		}
		return out, nil
	}
	return nil, fmt.Errorf("redis: unknown reply type %q", kind)
}

// subscribe subscribes to channel and reads the confirmation.
func (c *redisConn) subscribe(channel string) error {
	v, err := c.do("SUBSCRIBE", channel)
	if err != nil {
		return err
	}
	if a, ok := v.([]any); !ok || len(a) != 3 || string(asBytes(a[0])) != "subscribe" {
		return fmt.Errorf("redis: unexpected SUBSCRIBE reply %v", v)
	}
	return nil
}

// message reads the next pub/sub message and returns its payload.
func (c *redisConn) message() ([]byte, error) {
	v, err := c.reply()
	if err != nil {
		return nil, err
	}
	a, ok := v.([]any)
	if !ok || len(a) != 3 || string(asBytes(a[0])) != "message" {
		return nil, fmt.Errorf("redis: expected a message, got %v", v)
	}
	return asBytes(a[2]), nil
}

func asBytes(v any) []byte {
	switch x := v.(type) {
	case []byte:
		return x
	case string:
		return []byte(x)
	}
	return nil
}
