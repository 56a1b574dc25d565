package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"runtime/pprof"
	"strconv"
	"strings"
	"time"

	"github.com/coder/websocket"

	"sdkpp/server"
	"sdkpp/server/gateway"
	"sdkpp/server/ratelimit"
)

// The services under test run in child processes of this program (started with -serve), as
// redis-server does, so that each one's memory is its own and it has its own scheduler. A child
// prints one JSON line (childHello) and then answers each "mem" line on its standard input with a
// memReport line; it exits when its standard input closes.

// childHello is the first line a child prints.
type childHello struct {
	Addr     string `json:"addr"`      // host:port
	BotToken string `json:"bot_token"` // the dev application's bot token (sdkpp only)
}

// memReport is a child's memory after a forced garbage collection.
type memReport struct {
	RSS   int64 `json:"rss"`    // resident set size
	GoMem int64 `json:"go_mem"` // heap in use plus goroutine stacks
}

// serveChild runs the service kind ("sdkpp", "bare", "nats", "floor" (floor.go), "latfloor" or
// "hop" (latfloor.go)) until standard input closes; with a profile path it writes a CPU profile
// of that whole time there (and its allocations beside it, see profileSelf). node.Store is
// sdkpp's store (and a latency floor's): memory, sqlite (a fresh data directory) or a database
// URL.
func serveChild(kind string, heartbeat time.Duration, profile string, node nodeConfig) error {
	if profile != "" {
		stop, err := profileSelf(profile)
		if err != nil {
			return err
		}
		defer stop()
	}
	var hello childHello
	var stop func()
	var gw func() gateway.Stats // the sdkpp service's gateway counters
	switch kind {
	case "sdkpp":
		logger, closeLog, err := serviceLogger(node.LogDir)
		if err != nil {
			return err
		}
		defer closeLog()
		cfg := server.Config{Addr: "127.0.0.1:0", Dev: true, GatewayHeartbeat: heartbeat,
			RateLimits: ratelimit.Config{Disabled: true}, // the service itself is measured, as Redis is
			Logger:     logger}
		cfg.Bus, cfg.NodeID = node.Bus, node.ID
		switch node.Store {
		case "", "memory":
		case "sqlite":
			dir, err := os.MkdirTemp("", "sdkpp-bench-realtime-")
			if err != nil {
				return err
			}
			defer os.RemoveAll(dir)
			cfg.DataDir = dir
		default:
			cfg.Store = node.Store
		}
		srv, err := server.New(cfg)
		if err != nil {
			return err
		}
		if err := srv.Start(); err != nil {
			srv.Close()
			return err
		}
		stop, gw = func() { srv.Close() }, srv.Hub().Stats
		hello = childHello{Addr: strings.TrimPrefix(srv.URL(), "http://"), BotToken: srv.DevCredentials().Applications[0].BotToken}
	case "nats": // (d)'s bus: its own process, as PostgreSQL and Redis are
		ns, err := startNATS()
		if err != nil {
			return err
		}
		stop = ns.stop
		hello = childHello{Addr: strings.TrimPrefix(ns.url, "nats://")}
	case "floor": // node.Store: a PostgreSQL URL of the floor's own database, else SQLite in a data directory
		store := node.Store
		if store == "" || store == "memory" || store == "sqlite" {
			dir, err := os.MkdirTemp("", "sdkpp-bench-floor-")
			if err != nil {
				return err
			}
			defer os.RemoveAll(dir)
			store = "sqlite:" + dir
		}
		addr, stopFloor, err := serveFloor(store)
		if err != nil {
			return err
		}
		stop, hello = stopFloor, childHello{Addr: addr}
	case "latfloor": // (d)'s latency floors (latfloor.go): node.Store and node.Bus say which process, node.ID which floor
		store := node.Store
		if store == "sqlite" {
			dir, err := os.MkdirTemp("", "sdkpp-bench-floor-")
			if err != nil {
				return err
			}
			defer os.RemoveAll(dir)
			store = "sqlite:" + dir
		}
		addr, stopFloor, err := serveLatFloor(store, node.Bus, node.ID == everyNodeFloor)
		if err != nil {
			return err
		}
		stop, hello = stopFloor, childHello{Addr: addr}
	case "hop": // (d)'s hop between two idle processes (latfloor.go): node.Bus is the peer's address
		addr, stopHop, err := serveHop(node.Bus)
		if err != nil {
			return err
		}
		stop, hello = stopHop, childHello{Addr: addr}
	case "bare":
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return err
		}
		hs := &http.Server{Handler: http.HandlerFunc(bareWebSocket)}
		go hs.Serve(ln) // owned by stop below
		stop = func() { hs.Close() }
		hello = childHello{Addr: ln.Addr().String()}
	default:
		return fmt.Errorf("unknown service %q", kind)
	}
	defer stop()
	out := json.NewEncoder(os.Stdout)
	if err := out.Encode(hello); err != nil {
		return err
	}
	in := bufio.NewScanner(os.Stdin)
	for in.Scan() {
		if path, ok := strings.CutPrefix(in.Text(), "heap "); ok { // after a GC, as mem measures
			runtime.GC()
			if err := writeHeap(path); err != nil {
				return err
			}
			continue
		}
		if in.Text() == "gateway" && gw != nil {
			if err := out.Encode(gatewayReportOf(gw())); err != nil {
				return err
			}
			continue
		}
		if in.Text() != "mem" {
			continue
		}
		m, err := selfMemory()
		if err != nil {
			return err
		}
		if err := out.Encode(m); err != nil {
			return err
		}
	}
	return nil
}

// bareWebSocket is the anchor of the idle-connection figure: coder/websocket (the SDK's library;
// the gateway used it before it moved to gobwas/ws, and the anchor stays so that the figure
// compares with earlier runs), accepting a connection, sending one small frame (as the
// gateway's Hello) and reading until the peer goes away. It keeps no session and starts no
// other goroutine.
func bareWebSocket(w http.ResponseWriter, r *http.Request) {
	c, err := websocket.Accept(w, r, nil)
	if err != nil {
		return
	}
	defer c.CloseNow()
	ctx := context.Background()
	if c.Write(ctx, websocket.MessageText, []byte(`{"op":10,"d":{"heartbeat_interval":41250},"s":null,"t":null}`)) != nil {
		return
	}
	for {
		if _, _, err := c.Read(ctx); err != nil {
			return
		}
	}
}

// writeHeap writes this process's heap profile to path (go tool pprof -sample_index=inuse_space).
func writeHeap(path string) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	defer f.Close()
	return pprof.Lookup("heap").WriteTo(f, 0)
}

// selfMemory collects garbage, returns freed memory to the system and reports what is left.
func selfMemory() (memReport, error) {
	runtime.GC()
	debug.FreeOSMemory()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	rss, err := procRSS(os.Getpid())
	return memReport{RSS: rss, GoMem: int64(ms.HeapInuse + ms.StackInuse)}, err
}

// procRSS reads a process's resident set size from /proc.
func procRSS(pid int) (int64, error) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/status")
	if err != nil {
		return 0, err
	}
	for _, line := range strings.Split(string(b), "\n") {
		if f := strings.Fields(line); len(f) == 3 && f[0] == "VmRSS:" {
			kb, err := strconv.ParseInt(f[1], 10, 64)
			return kb << 10, err
		}
	}
	return 0, errors.New("no VmRSS in /proc status")
}

// profileDir, when set (-cpuprofile-dir), is where each child writes a CPU profile.
var profileDir string

// storeName is the sdkpp children's store (-store; a database URL once made).
var storeName string

// child is a service running in a child process.
type child struct {
	childHello
	cmd *exec.Cmd
	in  io.WriteCloser
	out *bufio.Scanner
}

// nodeConfig makes a child a node of a cluster: its store URL, bus URL and node id (zero: a
// node alone on in-memory SQLite).
type nodeConfig struct {
	Store, Bus string
	ID         int
	LogDir     string // an sdkpp node's log goes there (serviceLogger); "": none
}

// startChild starts this program with -serve kind and reads its hello.
func startChild(kind string, heartbeat time.Duration) (*child, error) {
	return startNode(kind, heartbeat, nodeConfig{Store: storeName})
}

// startNode is startChild with the child a node of a cluster.
func startNode(kind string, heartbeat time.Duration, node nodeConfig) (*child, error) {
	self, err := os.Executable()
	if err != nil {
		return nil, err
	}
	args := []string{"-serve", kind, "-serve-heartbeat", heartbeat.String(),
		"-serve-store", node.Store, "-serve-bus", node.Bus, "-serve-node", strconv.Itoa(node.ID), "-serve-log-dir", logDir}
	if profileDir != "" {
		args = append(args, "-serve-cpuprofile", filepath.Join(profileDir, kind+"-"+strconv.Itoa(os.Getpid())+"-"+
			strconv.FormatInt(time.Now().UnixNano(), 36)+".pprof"))
	}
	cmd := exec.Command(self, args...)
	cmd.Stderr = os.Stderr
	in, err := cmd.StdinPipe()
	if err != nil {
		return nil, err
	}
	outPipe, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	c := &child{cmd: cmd, in: in, out: bufio.NewScanner(outPipe)}
	if err := c.readLine(&c.childHello); err != nil {
		c.Close()
		return nil, fmt.Errorf("%s service: %w", kind, err)
	}
	return c, nil
}

func (c *child) readLine(v any) error {
	if !c.out.Scan() {
		if err := c.out.Err(); err != nil {
			return err
		}
		return errors.New("the child process ended")
	}
	return json.Unmarshal(c.out.Bytes(), v)
}

// heap asks the child to write its heap profile to path.
func (c *child) heap(path string) error {
	_, err := io.WriteString(c.in, "heap "+path+"\n")
	return err
}

// gatewayReport is an sdkpp child's gateway counters (gateway.Stats without its events).
type gatewayReport struct {
	Connections, Sessions, Connected int
	Queued, QueuedMax                int64
	Identifies, Resumes, Replayed    uint64
	Closes                           map[int]uint64 // by the close code sent (0: the peer went first)
}

func gatewayReportOf(st gateway.Stats) gatewayReport {
	return gatewayReport{Connections: st.Connections, Sessions: st.Sessions, Connected: st.Connected,
		Queued: st.Queued, QueuedMax: st.QueuedMax, Identifies: st.Identifies, Resumes: st.Resumes,
		Replayed: st.Replayed, Closes: st.Closes}
}

// gateway asks an sdkpp child for its gateway counters, as a line of JSON.
func (c *child) gateway() (string, error) {
	if _, err := io.WriteString(c.in, "gateway\n"); err != nil {
		return "", err
	}
	var r gatewayReport
	if err := c.readLine(&r); err != nil {
		return "", err
	}
	b, err := json.Marshal(r)
	return string(b), err
}

// memory asks the child for its memory report.
func (c *child) memory() (memReport, error) {
	var m memReport
	if _, err := io.WriteString(c.in, "mem\n"); err != nil {
		return m, err
	}
	return m, c.readLine(&m)
}

// Close ends the child (closing its standard input) and waits for it.
func (c *child) Close() {
	c.in.Close()
	done := make(chan struct{})
	go func() { // owned by Close, which waits for it
		c.cmd.Wait()
		close(done)
	}()
	select {
	case <-done:
	case <-time.After(15 * time.Second):
		c.cmd.Process.Kill()
		<-done
	}
}

// freeAddr returns a loopback host:port that was free a moment ago.
func freeAddr() (string, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", err
	}
	defer ln.Close()
	return ln.Addr().String(), nil
}
