package main

import (
	"context"
	"database/sql"
	"flag"
	"fmt"
	"math"
	"net"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	natsserver "github.com/nats-io/nats-server/v2/server"
)

// clusterCases picks cases of (d) by their numbers (1 one node on SQLite, 2 one node on
// PostgreSQL and NATS, 3 three nodes): "23" runs the last two; empty runs every one. A case's
// latency is put against one node on SQLite's when that case runs too.
var clusterCases = flag.String("cluster-cases", "", "(d): run only these cases, by number (1: one node on SQLite, 2: one node on PostgreSQL + NATS, 3: three nodes), e.g. 23")

// clusterMessaging measures (d): (a) with HTTP sends and (b), on one node on SQLite, one node on
// PostgreSQL and NATS, and three nodes on them, the sender on the first node and the receivers
// on the others; (b)'s anchor, Redis, takes turns with each, as in (b). Beside each fan-out it
// prints where the CPU went per message (each node, PostgreSQL, NATS, the clients) and how much
// of the machine was left idle: with the machine busy, the sends' waits are the other
// processes' turns on the CPU.
//
// The cases' latencies are ratios of one another (issue 23 bounds three nodes' against one
// node's), so every case is started first and their latency rounds take turns, a block of
// turnRounds each: a load that comes and goes on a shared machine then weighs on every case
// alike, where cases measured one after the other met whatever load their minute had.
//
// Their fan-outs send as many messages as (b)'s: with a fifth of them (turns of 400 messages),
// every turn's start (the lobby's order lock taken again after the other side's turn, groups
// growing to the window) weighed on the figure. In 4 pairs under load, the three nodes' CPU per
// message of all processes read a median of 592 µs with 2,000 messages and 540 µs with 10,000.
func clusterMessaging(rd *redisServer, rounds, members, messages, window int) error {
	pg, err := startPostgres()
	if err != nil {
		return err
	}
	defer pg.stop()
	rounds = max(rounds/6, 1) // 500 by default: each of them crosses nodes over HTTP, in several sides
	fmt.Printf("(d) Beyond one machine: (a) over HTTP, %d messages one at a time, the cases' rounds in turns, and (b), %d-member lobby, %d messages, %d in flight\n",
		rounds, members, messages, window)
	var trace string
	if *clusterTrace { // the nodes inherit it
		dir, err := os.MkdirTemp("", "sdkpp-bench-trace-")
		if err != nil {
			return err
		}
		defer os.RemoveAll(dir)
		trace = filepath.Join(dir, "sends")
		os.Setenv("SDKPP_SEND_TRACE", trace)
		defer os.Unsetenv("SDKPP_SEND_TRACE")
		os.Setenv("SDKPP_BUS_TRACE", trace+"-bus")
		defer os.Unsetenv("SDKPP_BUS_TRACE")
	}
	// The latency floors take turns with the first case and the third (latfloor.go).
	floorStore := map[bool]string{true: "sqlite", false: "memory"}[storeName == "sqlite"]
	floors := [3]*caseSides{singleFloor(floorStore), nil, clusterFloor(pg)}
	cases := [3]struct {
		name  string
		nodes int
		pg    bool
	}{{"one node, SQLite                ", 1, false}, {"one node, PostgreSQL + NATS     ", 1, true},
		{"three nodes, PostgreSQL + NATS  ", 3, true}}
	var runs [3]*clusterRun
	defer func() {
		for _, c := range runs {
			if c != nil {
				c.close()
			}
		}
	}()
	for i, c := range cases {
		if *clusterCases != "" && !strings.Contains(*clusterCases, strconv.Itoa(i+1)) {
			continue
		}
		if runs[i], err = startClusterRun(pg, c.nodes, c.pg, members, window, trace, floors[i]); err != nil {
			return fmt.Errorf("%s: %w", c.name, err)
		}
	}
	for first := 0; first < rounds+warmup; first += turnRounds {
		last := min(first+turnRounds, rounds+warmup)
		for i, c := range runs {
			if c == nil {
				continue
			}
			if err := c.latencyBlock(first, last); err != nil {
				return fmt.Errorf("%s: %w", cases[i].name, err)
			}
		}
	}
	var sdkp [3][2]time.Duration // each case's p50 and p99
	for i, c := range runs {
		if c == nil {
			continue
		}
		var err error
		if sdkp[i][0], sdkp[i][1], err = c.endLatency(); err != nil {
			return fmt.Errorf("%s: %w", cases[i].name, err)
		}
	}
	single := sdkp[0][0]
	for i, c := range runs {
		if c == nil {
			continue
		}
		name := cases[i].name
		line := fmt.Sprintf("  sdkpp %s latency p50 %8s  p99 %8s", name, sdkp[i][0], sdkp[i][1])
		if i > 0 && single != 0 {
			line += fmt.Sprintf(" (%.2fx one node on SQLite)", ratio(sdkp[i][0], single))
		}
		fmt.Println(line)
		if trace != "" && c.onPG {
			if err := printLatencyTimeline(trace, c.cpu.sender, c.cpu.receiver, c.cpu.rounds); err != nil {
				return fmt.Errorf("%s: %w", name, err)
			}
		}
		if latencyOnly {
			continue
		}
		rate, base, err := c.fanout(rd, members, messages, window)
		if err != nil {
			return fmt.Errorf("%s: %w", name, err)
		}
		cpu := c.cpu
		fmt.Printf("        %s fan-out %10.0f deliveries/s  Redis %10.0f  ratio %.2fx\n", name, rate, base, rate/base)
		fmt.Printf("        %s fan-out CPU per message of each node %v, PostgreSQL %v, NATS %v, this program (clients) %v; machine idle %.0f%%; write system calls per message of each node %v\n",
			name, cpu.nodes, cpu.pg, cpu.nats, cpu.self, 100*cpu.idle, cpu.writes)
		c.close() // its nodes write their traces as they end, and leave the next case the machine
		runs[i] = nil
		if trace != "" && c.onPG {
			sends, err := readSendTrace(trace, cpu.sender, cpu.messages)
			if err != nil {
				return fmt.Errorf("%s: %w", name, err)
			}
			printSendTimeline(sends, cpu.took/time.Duration(max(cpu.messages, 1)))
		}
	}
	label := map[string]string{"sqlite": "WAL, synchronous=NORMAL, a data directory", "memory": "in memory, as the node's"}[storeName]
	if label == "" { // the node's store is the caller's PostgreSQL
		label = "in memory"
	}
	printFloors(floors[0], floors[2], sdkp[0][0], sdkp[2][0], label)
	fmt.Println("  targets: three nodes' latency (sender and receiver on different nodes) <= 2x one node's; their fan-out >= 0.5x Redis's")
	return nil
}

// turnRounds is how many latency rounds each side of a case of (d) takes in a turn.
const turnRounds = 10

// clusterCPU is the CPU time used per message of a case's fan-out: by each node, by PostgreSQL
// and NATS (0 without them) and by this program (its clients).
type clusterCPU struct {
	nodes          []time.Duration
	pg, nats, self time.Duration
	// writes are each node's write system calls per message.
	writes []float64
	// idle is the share of the machine's CPU time left idle during the fan-out's turns.
	idle float64
	// sender is the sending node's pid; messages the fan-out's, sent in took (its turns).
	sender, messages int
	took             time.Duration
	// receiver is the latency rounds' receiving node's pid, rounds their times (with a trace).
	receiver int
	rounds   []latencyRound
}

// clusterRun is one case of (d) started: its processes, its players, its latency round and the
// sides that take turns with it. clusterMessaging owns it; close stops its processes.
type clusterRun struct {
	pg       *postgres // nil unless onPG
	onPG     bool
	trace    string // the traces' path; empty without -cluster-trace
	children []*child
	nats     *child // its NATS server; nil without one
	recv     []string
	a        *api
	ps       []player
	size     int
	to       *receiver
	r        round
	done     func() error
	sides    *caseSides
	others   []sideRound
	stop     func() // stops the sides; a no-op once they are stopped
	ds       []time.Duration
	cpu      clusterCPU
}

// startClusterRun starts a case of (d): nodes children, on a fresh database of pg and a NATS
// server of its own when onPG, else one on the store of -store; its players (members of them),
// the latency rounds' lobby of two, their receiver, and sides. On an error it stops what it
// started.
func startClusterRun(pg *postgres, nodes int, onPG bool, members, window int, trace string, sides *caseSides) (_ *clusterRun, err error) {
	c := &clusterRun{onPG: onPG, trace: trace, sides: sides, stop: func() {}}
	defer func() {
		if err != nil {
			c.close()
		}
	}()
	if !onPG {
		ch, err := startChild("sdkpp", 0)
		if err != nil {
			return nil, err
		}
		c.children = append(c.children, ch)
	} else {
		c.pg = pg
		db, err := pg.database()
		if err != nil {
			return nil, err
		}
		// NATS runs in a process of its own, as it would beside the nodes, and as PostgreSQL
		// and Redis do: inside this one, its goroutines would wait behind the clients'.
		if c.nats, err = startChild("nats", 0); err != nil {
			return nil, err
		}
		for i := range nodes { // one after the other: the first seeds the dev data
			ch, err := startNode("sdkpp", 0, nodeConfig{Store: db, Bus: "nats://" + c.nats.Addr, ID: i + 1})
			if err != nil {
				return nil, err
			}
			c.children = append(c.children, ch)
		}
	}
	send := c.children[0]
	c.recv = []string{send.Addr}
	if len(c.children) > 1 {
		c.recv = nil
		for _, ch := range c.children[1:] {
			c.recv = append(c.recv, ch.Addr)
		}
	}
	c.a = newAPI(send.Addr, window)
	if c.ps, err = c.a.players(send.BotToken, "d-", members); err != nil {
		return nil, err
	}
	pair, err := c.a.lobby("d-latency", c.ps[:2])
	if err != nil {
		return nil, err
	}
	if c.size, err = probeSize(c.a, c.recv[0], pair, c.ps[0], c.ps[1]); err != nil {
		return nil, err
	}
	if c.to, err = newReceiver(c.recv[0], c.ps[1]); err != nil {
		return nil, err
	}
	c.r, c.done = sdkppRound(c.a, pair, c.ps[0], nil, c.to, poll, "d")
	if sides != nil {
		natsAddr := ""
		if c.nats != nil {
			natsAddr = c.nats.Addr
		}
		var stop func()
		if c.others, stop, err = sides.start(natsAddr, c.size); err != nil {
			return nil, fmt.Errorf("floor: %w", err)
		}
		c.stop = func() { stop(); c.stop = func() {} }
		sides.ds = make([][]time.Duration, len(c.others))
	}
	c.cpu.sender, c.cpu.receiver = send.cmd.Process.Pid, c.children[len(c.children)-len(c.recv)].cmd.Process.Pid
	return c, nil
}

// latencyBlock runs the case's latency rounds first to last (the first warmup rounds are not
// kept) and its sides' rounds. The sides take turns with sdkpp in blocks of rounds: a node keeps
// a lobby's order lock a moment after a message (lobbies.Service.LockLinger, 2 ms), and the other
// sides' rounds between each two of sdkpp's would space them past it, so that each would take
// the lock again, which messages sent one after the other do not. A side that is to meet the
// processes as idle as sdkpp's rounds leave them (the hop) runs after each of sdkpp's rounds
// instead.
func (c *clusterRun) latencyBlock(first, last int) error {
	side := func(k, i int) error {
		d, err := c.others[k].r(i)
		if err == nil && i >= warmup {
			c.sides.ds[k] = append(c.sides.ds[k], d)
		}
		return err
	}
	for i := first; i < last; i++ {
		sent := time.Now()
		d, err := c.r(i)
		if err != nil {
			return err
		}
		if i >= warmup {
			c.ds = append(c.ds, d)
			if c.trace != "" {
				c.cpu.rounds = append(c.cpu.rounds, latencyRound{sent.UnixNano(), sent.Add(d).UnixNano()})
			}
		}
		for k, o := range c.others {
			if o.each {
				if err := side(k, i); err != nil {
					return err
				}
			}
		}
	}
	for k, o := range c.others {
		for i := first; i < last && !o.each; i++ {
			if err := side(k, i); err != nil {
				return err
			}
		}
	}
	return nil
}

// endLatency ends the latency rounds: it closes their receiver, stops the sides (before the
// fan-out, which they would only weigh on), checks every send succeeded, and returns the rounds'
// p50 and p99.
func (c *clusterRun) endLatency() (p50, p99 time.Duration, err error) {
	c.to.c.Close()
	c.to = nil
	c.stop()
	if err := c.done(); err != nil {
		return 0, 0, err
	}
	p50, p99 = percentiles(c.ds)
	return p50, p99, nil
}

// fanout runs the case's fan-out, messages from one sender on the first node to all its players
// connected to the other nodes (or its one), window in flight, in turns with Redis pub/sub to as
// many subscribers, and returns both sides' deliveries per second; c.cpu then holds where the
// CPU went.
func (c *clusterRun) fanout(rd *redisServer, members, messages, window int) (rate, base float64, err error) {
	all, err := c.a.lobby("d-fanout", c.ps)
	if err != nil {
		return 0, 0, err
	}
	ours, err := newSpreadFanout(c.a, c.recv, all, c.ps)
	if err != nil {
		return 0, 0, err
	}
	defer ours.Close()
	theirs, err := newRedisFanout(rd, members, c.size)
	if err != nil {
		return 0, 0, err
	}
	defer theirs.Close()
	var natsCPU cpuMeter // its server's; 0 without one
	if c.nats != nil {
		natsCPU.server = c.nats.cmd.Process.Pid
	}
	// The two take turns, a fifth of the messages each time, as in (b): on a shared machine a
	// load that comes and goes then weighs on both sides alike.
	per := max(messages/fanTurns, 1)
	var ourTime, baseTime time.Duration
	nodesCPU := make([]cpuMeter, len(c.children))
	for i, ch := range c.children {
		nodesCPU[i].server = ch.cmd.Process.Pid
	}
	var pgCPU time.Duration
	var idle, total int64
	for range fanTurns {
		i0, a0 := machineIdle()
		if natsCPU.server != 0 {
			if err := natsCPU.start(); err != nil {
				return 0, 0, err
			}
		}
		if c.onPG {
			d, err := c.pg.cpu()
			if err != nil {
				return 0, 0, err
			}
			pgCPU -= d
		}
		for i := range nodesCPU {
			if err := nodesCPU[i].start(); err != nil {
				return 0, 0, err
			}
		}
		d, err := ours.turn(per, window)
		if err != nil {
			return 0, 0, err
		}
		for i := range nodesCPU {
			if err := nodesCPU[i].stop(); err != nil {
				return 0, 0, err
			}
		}
		ourTime += d
		if natsCPU.server != 0 {
			if err := natsCPU.stop(); err != nil {
				return 0, 0, err
			}
		}
		i1, a1 := machineIdle()
		idle, total = idle+i1-i0, total+a1-a0
		if c.onPG {
			d, err := c.pg.cpu()
			if err != nil {
				return 0, 0, err
			}
			pgCPU += d
		}
		if d, err = theirs.turn(per, window); err != nil {
			return 0, 0, err
		}
		baseTime += d
	}
	messages = per * fanTurns
	cpu := &c.cpu
	cpu.messages, cpu.took = messages, ourTime
	cpu.nodes = make([]time.Duration, len(nodesCPU))
	for i := range nodesCPU {
		cpu.nodes[i], cpu.self = nodesCPU[i].perMessage(messages)
		cpu.nodes[i] = cpu.nodes[i].Round(100 * time.Nanosecond)
		_, w := nodesCPU[i].syscallsPerMessage(messages)
		cpu.writes = append(cpu.writes, math.Round(w*10)/10)
	}
	cpu.self = cpu.self.Round(100 * time.Nanosecond)
	if total > 0 {
		cpu.idle = float64(idle) / float64(total)
	}
	cpu.pg = (pgCPU / time.Duration(messages)).Round(100 * time.Nanosecond)
	cpu.nats, _ = natsCPU.perMessage(messages)
	cpu.nats = cpu.nats.Round(100 * time.Nanosecond)
	n := float64(messages * members)
	return n / ourTime.Seconds(), n / baseTime.Seconds(), nil
}

// close stops the case's sides and processes, the nodes before their NATS server (a node stops
// within a moment only while its bus answers). It may be called more than once.
func (c *clusterRun) close() {
	if c.to != nil {
		c.to.c.Close()
		c.to = nil
	}
	c.stop()
	for _, ch := range c.children {
		ch.Close()
	}
	c.children = nil
	if c.nats != nil {
		c.nats.Close()
		c.nats = nil
	}
}

// postgres is a private PostgreSQL server (build/scripts/pg.sh) under build/bench.
type postgres struct {
	dir, admin string
	n          int
}

// startPostgres starts a PostgreSQL server in a directory of its own under build/bench, so that
// it never meets another one there (bench/run.sh's, beside which a run may go).
func startPostgres() (*postgres, error) {
	parent, err := filepath.Abs(filepath.Join("build", "bench"))
	if err != nil {
		return nil, err
	}
	if err := os.MkdirAll(parent, 0o755); err != nil {
		return nil, err
	}
	dir, err := os.MkdirTemp(parent, "pg-realtime-")
	if err != nil {
		return nil, err
	}
	addr, err := freeAddr()
	if err != nil {
		return nil, err
	}
	_, port, _ := net.SplitHostPort(addr)
	cmd := exec.Command("bash", "build/scripts/pg.sh", "start", dir, port)
	cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
	if err := cmd.Run(); err != nil {
		os.RemoveAll(dir)
		return nil, fmt.Errorf("start PostgreSQL (build/scripts/pg.sh): %w", err)
	}
	return &postgres{dir: dir, admin: "postgres://postgres@127.0.0.1:" + port + "/postgres?sslmode=disable"}, nil
}

// database creates a fresh database and returns its URL.
func (p *postgres) database() (string, error) {
	db, err := sql.Open("pgx", p.admin)
	if err != nil {
		return "", err
	}
	defer db.Close()
	p.n++
	name := "bench_" + strconv.Itoa(os.Getpid()) + "_" + strconv.Itoa(p.n)
	if _, err := db.ExecContext(context.Background(), "CREATE DATABASE "+name); err != nil {
		return "", fmt.Errorf("create database: %w", err)
	}
	u, err := url.Parse(p.admin)
	if err != nil {
		return "", err
	}
	u.Path = "/" + name
	return u.String(), nil
}

func (p *postgres) stop() {
	cmd := exec.Command("bash", "build/scripts/pg.sh", "stop", p.dir)
	cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
	_ = cmd.Run()
	os.RemoveAll(p.dir)
}

// natsServer is a NATS server with JetStream inside this process.
type natsServer struct {
	s   *natsserver.Server
	dir string
	url string
}

func startNATS() (*natsServer, error) {
	dir, err := os.MkdirTemp("", "sdkpp-bench-nats")
	if err != nil {
		return nil, err
	}
	s, err := natsserver.NewServer(&natsserver.Options{Host: "127.0.0.1", Port: -1, JetStream: true, StoreDir: dir,
		NoLog: true, NoSigs: true})
	if err != nil {
		os.RemoveAll(dir)
		return nil, err
	}
	s.Start()
	if !s.ReadyForConnections(10 * time.Second) {
		s.Shutdown()
		os.RemoveAll(dir)
		return nil, fmt.Errorf("NATS did not start")
	}
	return &natsServer{s: s, dir: dir, url: s.ClientURL()}, nil
}

func (n *natsServer) stop() {
	n.s.Shutdown()
	n.s.WaitForShutdown()
	os.RemoveAll(n.dir)
}

// cpu is the CPU time PostgreSQL's processes have used so far: its postmaster (the first line
// of its data directory's postmaster.pid) and every process it started.
func (p *postgres) cpu() (time.Duration, error) {
	b, err := os.ReadFile(filepath.Join(p.dir, "data", "postmaster.pid"))
	if err != nil {
		return 0, err
	}
	first, _, _ := strings.Cut(string(b), "\n")
	pid, err := strconv.Atoi(strings.TrimSpace(first))
	if err != nil {
		return 0, fmt.Errorf("postmaster.pid: %w", err)
	}
	total, err := procCPU(pid)
	if err != nil {
		return 0, err
	}
	procs, err := os.ReadDir("/proc")
	if err != nil {
		return 0, err
	}
	for _, e := range procs {
		child, err := strconv.Atoi(e.Name())
		if err != nil || procParent(child) != pid {
			continue
		}
		if d, err := procCPU(child); err == nil { // a backend that ended meanwhile is left out
			total += d
		}
	}
	return total, nil
}

// procParent is a process's parent's pid, 0 when it cannot be read.
func procParent(pid int) int {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return 0
	}
	end := strings.LastIndexByte(string(b), ')')
	if end < 0 {
		return 0
	}
	f := strings.Fields(string(b[end+1:]))
	if len(f) < 2 {
		return 0
	}
	ppid, _ := strconv.Atoi(f[1])
	return ppid
}

// machineIdle reads the machine's idle CPU time (idle and waiting for I/O) and its whole CPU
// time so far, in clock ticks, from /proc/stat (zeros when it cannot be read).
func machineIdle() (idle, all int64) {
	b, err := os.ReadFile("/proc/stat")
	if err != nil {
		return 0, 0
	}
	line, _, _ := strings.Cut(string(b), "\n")
	f := strings.Fields(line)
	if len(f) < 6 || f[0] != "cpu" {
		return 0, 0
	}
	for i, v := range f[1:] {
		n, _ := strconv.ParseInt(v, 10, 64)
		all += n
		if i == 3 || i == 4 { // idle, iowait
			idle += n
		}
	}
	return idle, all
}
