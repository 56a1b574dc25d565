// Command realtime measures the realtime path on loopback, each figure beside an anchor measured
// in the same run on the same machine with the same method:
//
//   - (a) Lobby message latency, p50 and p99: one player sends, with its SDK's SendLobbyMessage
//     (over its gateway connection) and, as a second figure, with an HTTP POST
//     /lobbies/{id}/messages; the clock stops when the other player's SDK (core.Client) runs its
//     MessageCreated callback in RunCallbacks, called by a thread that waits for callbacks in
//     WaitCallbacks between calls; one message at a time. Anchor: Redis PUBLISH of a payload of
//     the same size until a SUBSCRIBEd connection has read it. A fourth figure sends over the
//     gateway again to a game loop that instead polls RunCallbacks with the shortest sleeps. The
//     four take turns message by message. With -floor, (a)'s floor takes its turns too: the
//     required parts alone (latfloor.go), a bare WebSocket send whose dispatch is written to a
//     bare receiver, the CPU yielded to it, before its row is committed to the run's store, as
//     sdkpp orders a send.
//   - (b) Fan-out: one sender, a 100-member lobby, every member connected with the SDK gateway
//     client; messages delivered (the dispatch decoded by a member's gateway client) per second,
//     with the same number of sends in flight. The sender sends as the SDK's SendLobbyMessage
//     does when connected: as API requests over its own gateway connection (op 100, core/tunnel),
//     each with a nonce it enforces, its answer decoded, window of them in flight on the one
//     connection (which is also the sender's member connection, as a game has one); each answer's
//     callback sends the next message (tunnel.SendThen, as core sends and takes the outcome by
//     callback), on the goroutine that read the answer, as the anchor's publisher sends its next
//     PUBLISH from its loop that reads the replies. Anchor: Redis pub/sub with 100 subscribers
//     and a pipelined publisher. On every side the sender runs at
//     most Ahead messages ahead of its slowest receiver (progress.go), and a turn whose deliveries
//     stop fails after Stall with what each member got. A third side sends the same way a
//     game's backend does, with HTTP POST on one connection per send in flight, to the same
//     sessions (the send path of the figures before op 100 took lobby messages). The three take
//     turns, a fifth of the messages each time, each turn from a collected heap (a runtime.GC()
//     before it, untimed: the clients of every side share this process's heap). With -floor, a fourth side takes its turns: the
//     floor (floor.go), the least any service with sdkpp's guarantees must do for the same
//     deliveries (a durable commit per batch of sends in flight to the run's store, SQLite or a
//     database of its own on the run's PostgreSQL, one write per member per batch) with the
//     cheapest correct clients, a lower bound on what sdkpp can cost.
//   - (d) Beyond one machine: (a) with HTTP sends and (b) again, on one node on SQLite, one node on
//     PostgreSQL and NATS, and three nodes on them with the sender and the receivers on different
//     nodes (cluster.go); (b)'s anchor is Redis again. The latencies have floors (latfloor.go):
//     the required parts alone, taking turns with sdkpp's rounds (one node: an HTTP handler
//     committing to SQLite and writing to a bare WebSocket receiver; three nodes: the same with
//     PostgreSQL and a JetStream stream between two processes), and beside them the cost of one
//     hop between processes that wait, so that issue 23's bound (three nodes <= 2x one node) can
//     be read against what its required parts allow.
//   - (e) Idle connections across three nodes (-cluster-idle N, clusteridle.go): N identified
//     sessions on each of three nodes on PostgreSQL and NATS, held by three client processes;
//     memory per connection against the bare server of (c) holding N connections.
//   - (c) Idle connections: memory per connection of the service holding 10,000 identified gateway
//     sessions, measured inside its process after a forced GC. Anchor: a bare coder/websocket
//     server (the SDK's library, and the gateway's before gobwas/ws) holding 10,000 connections
//     it has sent one frame to.
//
// The services run in child processes of this program (-serve), as redis-server runs in its own.
// Run by bench/run.sh (make bench).
package main

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"runtime/metrics"
	"runtime/pprof"
	"sort"
	"strconv"
	"strings"
	"time"

	"sdkpp/bench/internal/benchdb"
	"sdkpp/server"
)

// warmup rounds of (d)'s latency are not counted.
const warmup = 20

// latencyWarmup rounds of (a) are not counted, on every side alike: a run's first second or so
// is not its steady state. In a 10,000-round run on PostgreSQL, sdkpp's median fell from 151 µs
// in the first 250 rounds to about 116 µs after 1,000, and Redis's p95 from 186 to about 150 µs;
// the p99 of 1,000 rounds (their 10th slowest) read from 1.15x to 1.61x of Redis's in the run's
// successive blocks, and of 3,000 rounds after the first 1,000, 1.26x to 1.45x.
const latencyWarmup = 1000

func main() {
	defer func() { os.Exit(exit) }()
	serve := flag.String("serve", "", "internal: run this service (sdkpp or bare) as a child process")
	serveHeartbeat := flag.Duration("serve-heartbeat", 0, "internal: the child service's gateway heartbeat interval")
	serveProfile := flag.String("serve-cpuprofile", "", "internal: the child service's CPU profile")
	flag.StringVar(&profileDir, "cpuprofile-dir", "", "write a CPU profile of each service process into this directory")
	flag.StringVar(&storeName, "store", "memory", "the service's store: memory (SQLite in memory), sqlite (SQLite in a fresh data directory) or a PostgreSQL admin URL (a fresh database on it)")
	rounds := flag.Int("rounds", 3000, "latency: messages sent one at a time, each side, counted after the warm-up's (1000); (d) sends a sixth as many")
	flag.StringVar(&roundsFile, "rounds-file", "", "(a): write each counted round's latencies into this file, a line a round: its number, then Redis's, the gateway's, HTTP's and the polling loop's in nanoseconds, then the GC cycles this process completed by its end; with -floor, then the floor's")
	members := flag.Int("members", 100, "fan-out: lobby members")
	messages := flag.Int("messages", 10000, "fan-out: messages sent, in five turns (more give steadier figures on a shared machine)")
	window := flag.Int("window", 8, "fan-out: sends in flight")
	idle := flag.Int("idle", 10000, "idle connections held")
	flag.BoolVar(&latencyOnly, "latency-only", false, "measure only (a), the latency of messages sent one at a time (with -cluster-only: only (d)'s latency)")
	flag.BoolVar(&floorSide, "floor", false, "(a) and (b): add the floor sides (latfloor.go, floor.go), the least any service with sdkpp's guarantees must do, taking turns with the others")
	flag.BoolVar(&turnGC, "turn-gc", true, "(b): collect the clients' heap before each side's turn, untimed, so that no side pays for another's garbage (false: measure without)")
	flag.BoolVar(&fanoutOnly, "fanout-only", false, "measure only (b) over op 100 against Redis, without its HTTP side (for comparing builds and profiling the service's send path)")
	var node nodeConfig
	flag.StringVar(&node.Store, "serve-store", "", "internal: the child service's store (memory, sqlite or a database URL)")
	flag.StringVar(&node.Bus, "serve-bus", "", "internal: the child service's bus URL")
	flag.IntVar(&node.ID, "serve-node", 0, "internal: the child service's node id")
	flag.StringVar(&node.LogDir, "serve-log-dir", "", "internal: the child service's log directory")
	flag.StringVar(&logDir, "log-dir", "", "write the sdkpp services' logs (Debug level) and the fan-out's gateway clients' life (statuses, drops and their causes) into this directory")
	clusterOnly := flag.Bool("cluster-only", false, "measure only (d), the cluster")
	clusterIdlePer := flag.Int("cluster-idle", 0, "measure only (e): idle identified sessions held on each of three nodes")
	hold := flag.Bool("hold", false, "internal: hold idle gateway connections as a child process")
	flag.Parse()
	if *hold {
		if err := serveHold(); err != nil {
			fmt.Fprintln(os.Stderr, "bench holder:", err)
			exit = 1
		}
		return
	}
	if *serve == "" && profileDir != "" {
		stop, err := profileSelf(filepath.Join(profileDir, "bench-"+strconv.Itoa(os.Getpid())+".pprof"))
		if err != nil {
			fmt.Fprintln(os.Stderr, "bench:", err)
			os.Exit(1)
		}
		defer stop()
	}
	if *serve == "" {
		closeLog, err := clients.open()
		if err != nil {
			fmt.Fprintln(os.Stderr, "bench:", err)
			os.Exit(1)
		}
		defer closeLog()
	}
	if *serve != "" {
		if err := serveChild(*serve, *serveHeartbeat, *serveProfile, node); err != nil {
			fmt.Fprintln(os.Stderr, "bench child:", err)
			exit = 1
		}
		return
	}
	if *clusterIdlePer > 0 {
		if err := clusterIdle(*clusterIdlePer); err != nil {
			fmt.Fprintln(os.Stderr, "bench:", err)
			exit = 1
		}
		return
	}
	fmt.Printf("The service's store: %s\n", map[string]string{"memory": "SQLite in memory", "sqlite": "SQLite in a data directory"}[storeName]+
		map[bool]string{true: "PostgreSQL"}[storeName != "memory" && storeName != "sqlite"]+
		map[bool]string{true: ", over its Unix socket"}[strings.Contains(storeName, "host=/")])
	// (d) starts its own PostgreSQL and NATS whatever the store: it runs with the SQLite and
	// in-memory stores (or alone, -cluster-only), not again beside a PostgreSQL of the caller's.
	onPostgres := storeName != "memory" && storeName != "sqlite"
	if onPostgres {
		u, drop, err := benchdb.Postgres(storeName, "bench_realtime")
		if err != nil {
			fmt.Fprintln(os.Stderr, "bench:", err)
			os.Exit(1)
		}
		defer drop()
		if floorSide { // the floor's database: of its own, on the same server
			fu, dropFloor, err := benchdb.Postgres(storeName, "bench_floor")
			if err != nil {
				fmt.Fprintln(os.Stderr, "bench:", err)
				os.Exit(1)
			}
			defer dropFloor()
			lu, dropLatFloor, err := benchdb.Postgres(storeName, "bench_latfloor") // (a)'s floor's
			if err != nil {
				fmt.Fprintln(os.Stderr, "bench:", err)
				os.Exit(1)
			}
			defer dropLatFloor()
			floorDSN, latFloorDSN = fu, lu
		}
		storeName = u
	}
	if err := run(*rounds, *members, *messages, *window, *idle, *clusterOnly, *clusterOnly || !onPostgres); err != nil {
		fmt.Fprintln(os.Stderr, "bench:", err)
		exit = 1
	}
}

// roundsFile is where (a) writes each round's latencies (-rounds-file), or "".
var roundsFile string

// exit is the status main ends with, after its deferred calls have run.
var exit int

// latencyOnly: measure (a) only (-latency-only), for comparing builds in quick turns.
var latencyOnly bool

// floorSide: (b) has the floor side too (-floor, floor.go).
var floorSide bool

// floorDSN is the floor's store: "" for SQLite in a data directory, or on PostgreSQL the URL of
// the floor's own database on the run's server; latFloorDSN is (a)'s floor's, on PostgreSQL.
var floorDSN, latFloorDSN string

// fanoutOnly: measure (b) only, over op 100 and against Redis (-fanout-only), for comparing builds
// and profiling the service's send path without the other figures' work in the profile.
var fanoutOnly bool

func run(rounds, members, messages, window, idle int, clusterOnly, cluster bool) error {
	rd, err := startRedis()
	if err != nil {
		return err
	}
	defer rd.Close()
	if !clusterOnly {
		if err := messaging(rd, rounds, members, messages, window); err != nil {
			return err
		}
	}
	if cluster && (!latencyOnly || clusterOnly) && !fanoutOnly {
		if err := clusterMessaging(rd, rounds, members, messages, window); err != nil {
			return err
		}
	}
	if clusterOnly {
		return nil
	}
	if idle == 0 || latencyOnly || fanoutOnly {
		return nil
	}
	return idleConnections(idle)
}

// messaging measures (a) and (b).
func messaging(rd *redisServer, rounds, members, messages, window int) error {
	svc, err := startChild("sdkpp", 0)
	if err != nil {
		return err
	}
	defer svc.Close()
	a := newAPI(svc.Addr, window)
	ps, err := a.players(svc.BotToken, "bench-", members)
	if err != nil {
		return err
	}
	pair, err := a.lobby("latency", ps[:2])
	if err != nil {
		return err
	}
	size, err := probeSize(a, svc.Addr, pair, ps[0], ps[1])
	if err != nil {
		return err
	}
	// The four are measured in turns, one message each, so that every figure meets the same
	// moments of the machine (on a shared two-core machine the anchor alone moves by 2x).
	to, err := newReceiver(svc.Addr, ps[1])
	if err != nil {
		return err
	}
	defer to.c.Close()
	// One sender client for both gateway rounds, so that every message has the same recipients.
	sc, err := sdkClient(svc.Addr, ps[0])
	if err != nil {
		return err
	}
	defer sc.Close()
	redis, redisDone, err := redisRound(rd, size)
	if err != nil {
		return err
	}
	defer redisDone()
	turns := []round{redis, nil, nil, nil}
	var dones [3]func() error
	turns[1], dones[0] = sdkppRound(a, pair, ps[0], sc, to, poll, "gateway")
	turns[2], dones[1] = sdkppRound(a, pair, ps[0], nil, to, poll, "http")
	turns[3], dones[2] = sdkppRound(a, pair, ps[0], sc, to, spin, "gateway-spin")
	var base, ours, overHTTP, spinning, floorLat []time.Duration
	outs := []*[]time.Duration{&base, &ours, &overHTTP, &spinning}
	var aFloor *latencyFloorSide
	if floorSide && !fanoutOnly { // (a)'s floor (latfloor.go) takes its turns too
		if aFloor, err = latencyFloor(size); err != nil {
			return err
		}
		defer aFloor.Close()
		turns, outs = append(turns, aFloor.round), append(outs, &floorLat)
	}
	var byRound []byte // -rounds-file
	loadBefore, gcBefore := loadAverage(), gcCycles()
	for i := 0; i < rounds+latencyWarmup && !fanoutOnly; i++ {
		for k, out := range outs {
			d, err := turns[k](i)
			if err != nil {
				return err
			}
			if i >= latencyWarmup {
				*out = append(*out, d)
			}
		}
		if i >= latencyWarmup && roundsFile != "" {
			byRound = fmt.Appendf(byRound, "%d %d %d %d %d %d", i, base[len(base)-1], ours[len(ours)-1],
				overHTTP[len(overHTTP)-1], spinning[len(spinning)-1], gcCycles())
			if floorLat != nil {
				byRound = fmt.Appendf(byRound, " %d", floorLat[len(floorLat)-1])
			}
			byRound = append(byRound, '\n')
		}
	}
	if roundsFile != "" {
		if err := os.WriteFile(roundsFile, byRound, 0o644); err != nil {
			return err
		}
	}
	for _, done := range dones {
		if err := done(); err != nil {
			return err
		}
	}
	if aFloor != nil {
		aFloor.Close() // not idle beside the fan-out
	}
	sc.Close()
	to.c.Close() // before the fan-out, which ps[0] and ps[1] are also in
	if !fanoutOnly {
		op50, op99 := percentiles(ours)
		hp50, hp99 := percentiles(overHTTP)
		sp50, sp99 := percentiles(spinning)
		bp50, bp99 := percentiles(base)
		fmt.Printf("(a) Lobby message latency, send to the other player's client, one at a time, the %s in turns (%d messages each after %d uncounted, %d-byte payloads)\n",
			map[int]string{4: "four", 5: "five"}[len(turns)], rounds, latencyWarmup, size)
		fmt.Printf("  anchor: Redis PUBLISH to a SUBSCRIBEd connection                         p50 %8s  p99 %8s\n", bp50, bp99)
		fmt.Printf("  sdkpp: SDK SendLobbyMessage (gateway) -> SDK MessageCreated callback     p50 %8s  p99 %8s  ratio p50 %.2fx  p99 %.2fx (target <= 1.5x)\n",
			op50, op99, ratio(op50, bp50), ratio(op99, bp99))
		fmt.Printf("    (the receiving thread waits in WaitCallbacks between RunCallbacks)\n")
		fmt.Printf("  sdkpp: the same, to a game loop polling RunCallbacks with 1 us sleeps     p50 %8s  p99 %8s  ratio p50 %.2fx  p99 %.2fx\n",
			sp50, sp99, ratio(sp50, bp50), ratio(sp99, bp99))
		fmt.Printf("  sdkpp: HTTP POST message -> SDK MessageCreated callback (backends)       p50 %8s  p99 %8s  ratio p50 %.2fx  p99 %.2fx\n",
			hp50, hp99, ratio(hp50, bp50), ratio(hp99, bp99))
		if floorLat != nil {
			fp50, fp99 := percentiles(floorLat)
			fmt.Printf("  floor: the required parts alone (a bare WebSocket send; its dispatch written to a bare receiver, the CPU yielded to it, then one row committed to %s, then the answer)\n",
				map[bool]string{false: "SQLite as the service's", true: "a database of its own on the same PostgreSQL"}[latFloorDSN != ""])
			fmt.Printf("                                                                            p50 %8s  p99 %8s  ratio p50 %.2fx  p99 %.2fx; sdkpp/floor p50 %.2f  p99 %.2f\n",
				fp50, fp99, ratio(fp50, bp50), ratio(fp99, bp99), ratio(op50, fp50), ratio(op99, fp99))
		}
		fmt.Printf("  (the machine's load, 1-minute average, on %d processors: %s before, %s after; the clients' process ran %d GC cycles in the %d rounds)\n",
			runtime.NumCPU(), loadBefore, loadAverage(), gcCycles()-gcBefore, len(turns)*(rounds+latencyWarmup))
	}
	if latencyOnly {
		return nil
	}

	all, err := a.lobby("fanout", ps)
	if err != nil {
		return err
	}
	// The two take turns too, a fifth of the messages each time.
	ourFan, err := newSdkppFanout(a, svc.Addr, all, ps)
	if err != nil {
		return err
	}
	ourFan.gatewayStats = svc.gateway
	defer ourFan.Close()
	baseFan, err := newRedisFanout(rd, members, size)
	if err != nil {
		return err
	}
	defer baseFan.Close()
	// The floor (-floor): what the required parts alone cost, in its own child process.
	var floorFan *floorFanout
	var floorTime time.Duration
	var floorCPU *cpuMeter
	if floorSide {
		fl, err := startNode("floor", 0, nodeConfig{Store: floorDSN})
		if err != nil {
			return err
		}
		defer fl.Close()
		if floorFan, err = newFloorFanout(fl.Addr, members, size); err != nil {
			return err
		}
		defer floorFan.Close()
		floorCPU = &cpuMeter{server: fl.cmd.Process.Pid}
	}
	per := max(messages/fanTurns, 1)
	var ourTime, httpTime, baseTime time.Duration
	// The CPU each side's server and this program's clients use, per message: on a shared machine
	// the figure is bounded by it, and it shows which side of the loopback spends it.
	ourCPU, httpCPU := &cpuMeter{server: svc.cmd.Process.Pid}, &cpuMeter{server: svc.cmd.Process.Pid}
	baseCPU := &cpuMeter{server: rd.cmd.Process.Pid}
	type side struct {
		f     fanout
		total *time.Duration
		cpu   *cpuMeter
	}
	sides := []side{{ourFan, &ourTime, ourCPU}}
	if !fanoutOnly {
		sides = append(sides, side{httpSender{ourFan}, &httpTime, httpCPU})
	}
	sides = append(sides, side{baseFan, &baseTime, baseCPU})
	if floorFan != nil {
		sides = append(sides, side{floorFan, &floorTime, floorCPU})
	}
	// The sides share this process, and so its heap: without a collection between turns, a side
	// pays in its turn for the garbage the side before left (the Redis side's clients allocate
	// several times what sdkpp's do per message), in the GC cycles and sweeping its allocations
	// then trigger. Each turn therefore starts from a collected heap (untimed, outside the CPU
	// meters, the same for every side), and each side's collections and allocations are counted
	// in its own turns (gcTurns).
	gcs := make([]gcTurns, len(sides))
	for t := 0; t < fanTurns; t++ {
		for k, side := range sides {
			if turnGC {
				runtime.GC()
			}
			gcs[k].start()
			if err := side.cpu.start(); err != nil {
				return err
			}
			d, err := side.f.turn(per, window)
			if err != nil {
				return err
			}
			if err := side.cpu.stop(); err != nil {
				return err
			}
			gcs[k].stop()
			*side.total += d
		}
	}
	messages = per * fanTurns
	ourRate := float64(messages*members) / ourTime.Seconds()
	baseRate := float64(messages*members) / baseTime.Seconds()
	httpRate := float64(messages*members) / httpTime.Seconds()
	ourServer, ourClients := ourCPU.perMessage(messages)
	httpServer, httpClients := httpCPU.perMessage(messages)
	baseServer, baseClients := baseCPU.perMessage(messages)
	fmt.Printf("(b) Fan-out: one sender, %d-member lobby, %d messages, %d sends in flight, the %d sides in %d turns\n", members, messages, window, len(sides), fanTurns)
	fmt.Printf("  anchor: Redis pub/sub, %d subscribers, pipelined PUBLISH                  %10.0f deliveries/s\n", members, baseRate)
	fmt.Printf("  sdkpp: SendLobbyMessage over the sender's gateway (op 100) -> %d gateway sessions -> SDK gateway clients  %10.0f deliveries/s  ratio %.2fx (target >= 0.5x)\n",
		members, ourRate, ourRate/baseRate)
	if !fanoutOnly {
		fmt.Printf("  sdkpp: HTTP POST message (a backend; one connection per send in flight) -> the same sessions  %10.0f deliveries/s  ratio %.2fx\n",
			httpRate, httpRate/baseRate)
	}
	r := func(d time.Duration) time.Duration { return d.Round(100 * time.Nanosecond) }
	fmt.Printf("  CPU per message: redis-server %s, its clients %s; sdkpp service %s, its clients %s (the sender and the %d receivers, in this process); over HTTP: service %s, clients %s\n",
		r(baseServer), r(baseClients), r(ourServer), r(ourClients), members, r(httpServer), r(httpClients))
	br, bw := baseCPU.syscallsPerMessage(messages)
	or, ow := ourCPU.syscallsPerMessage(messages)
	fmt.Printf("  the server's system calls per message, reads / writes: redis-server %.1f / %.1f; sdkpp service %.1f / %.1f (SQLite's included)\n", br, bw, or, ow)
	bcr, bcw := baseCPU.selfSyscallsPerMessage(messages)
	ocr, ocw := ourCPU.selfSyscallsPerMessage(messages)
	fmt.Printf("  the clients' system calls per message, reads / writes: Redis's %.1f / %.1f; sdkpp's %.1f / %.1f\n", bcr, bcw, ocr, ocw)
	names := []string{"sdkpp's"}
	if !fanoutOnly {
		names = append(names, "over HTTP")
	}
	names = append(names, "Redis's")
	if floorFan != nil {
		names = append(names, "the floor's")
	}
	gcWhen := "each side's turn starts from a collected heap (runtime.GC() before it, untimed, the same for every side)"
	if !turnGC {
		gcWhen = "no collection between turns (-turn-gc=false): a side's turn pays for garbage the one before left"
	}
	fmt.Printf("  the clients' process (one heap for every side; %s), in each side's turns, per message: ", gcWhen)
	for k, g := range gcs {
		if k > 0 {
			fmt.Print("; ")
		}
		fmt.Print(names[k] + " " + g.perMessage(messages))
	}
	fmt.Println()
	if floorFan != nil {
		floorRate := float64(messages*members) / floorTime.Seconds()
		fs, fc := floorCPU.perMessage(messages)
		fr, fw := floorCPU.syscallsPerMessage(messages)
		fmt.Printf("  floor: the required parts alone (one %s commit per batch in flight, one write per member per batch; bare clients; %d-byte data): %10.0f deliveries/s  ratio %.2fx of Redis, sdkpp/floor %.2fx\n",
			map[bool]string{false: "SQLite", true: "PostgreSQL"}[floorDSN != ""], size, floorRate, floorRate/baseRate, ourRate/floorRate)
		fcr, fcw := floorCPU.selfSyscallsPerMessage(messages)
		fmt.Printf("    CPU per message: floor service %s, its clients %s; system calls per message, reads / writes: %.1f / %.1f (a lower bound on sdkpp's); its clients' %.1f / %.1f\n",
			r(fs), r(fc), fr, fw, fcr, fcw)
	}
	return nil
}

// fanTurns is how many turns the fan-out's sides take, each with a fifth of the messages.
const fanTurns = 5

// idleConnections measures (c).
func idleConnections(n int) error {
	// A long heartbeat interval, so that the idle connections need no traffic while they are
	// opened and measured; it changes no per-connection state.
	svc, err := startChild("sdkpp", 10*time.Minute)
	if err != nil {
		return err
	}
	a := newAPI(svc.Addr, 8)
	ps, err := a.players(svc.BotToken, "idle-", 100)
	if err != nil {
		svc.Close()
		return err
	}
	tokens := make([]string, len(ps))
	for i, p := range ps {
		tokens[i] = p.token
	}
	ours, err := holdIdle(svc, server.GatewayPath, tokens, n, 32)
	svc.Close()
	if err != nil {
		return fmt.Errorf("sdkpp idle connections: %w", err)
	}
	base, err := bareIdle(n)
	if err != nil {
		return err
	}
	fmt.Printf("(c) %d idle WebSocket connections held by one process (memory after a forced GC, per connection)\n", n)
	fmt.Printf("  anchor: bare coder/websocket server, Hello sent, one reader each   RSS %7.1f KiB  Go heap+stacks %7.1f KiB  (opened in %s)\n",
		base.perConnRSS()/1024, base.perConnGo()/1024, base.took.Round(time.Millisecond))
	fmt.Printf("  sdkpp gateway: identified sessions (READY, replay buffer, timers)  RSS %7.1f KiB  Go heap+stacks %7.1f KiB  (opened in %s)  ratio RSS %.2fx  Go %.2fx\n",
		ours.perConnRSS()/1024, ours.perConnGo()/1024, ours.took.Round(time.Millisecond),
		ours.perConnRSS()/base.perConnRSS(), ours.perConnGo()/base.perConnGo())
	return nil
}

// bareIdle measures the anchor of (c) and (e): a bare WebSocket server holding n connections.
func bareIdle(n int) (idleResult, error) {
	bare, err := startChild("bare", 0)
	if err != nil {
		return idleResult{}, err
	}
	base, err := holdIdle(bare, server.GatewayPath, nil, n, 32)
	bare.Close()
	if err != nil {
		return base, fmt.Errorf("bare idle connections: %w", err)
	}
	return base, nil
}

func ratio(a, b time.Duration) float64 { return float64(a) / float64(b) }

// loadAverage returns the machine's 1-minute load average as the system gives it, or "unknown":
// the figures of a shared machine are read beside it.
func loadAverage() string {
	b, err := os.ReadFile("/proc/loadavg")
	if f := strings.Fields(string(b)); err == nil && len(f) > 0 {
		return f[0]
	}
	return "unknown"
}

// turnGC: (b) collects this process's heap before each side's turn (-turn-gc).
var turnGC = true

// gcTurns sums what this process's heap went through during one side's turns: the bytes
// allocated, the GC cycles completed and the CPU the runtime estimates its GC spent (assists,
// background and idle workers, pauses).
type gcTurns struct {
	allocs, cycles uint64
	cpu            float64 // seconds
	s0             [3]metrics.Sample
}

var gcMetrics = [3]string{"/gc/heap/allocs:bytes", "/gc/cycles/total:gc-cycles", "/cpu/classes/gc/total:cpu-seconds"}

func (g *gcTurns) read(s *[3]metrics.Sample) {
	for i := range s {
		s[i].Name = gcMetrics[i]
	}
	metrics.Read(s[:])
}

// start begins a turn.
func (g *gcTurns) start() { g.read(&g.s0) }

// stop ends the turn start began and adds what it saw.
func (g *gcTurns) stop() {
	var s [3]metrics.Sample
	g.read(&s)
	g.allocs += s[0].Value.Uint64() - g.s0[0].Value.Uint64()
	g.cycles += s[1].Value.Uint64() - g.s0[1].Value.Uint64()
	g.cpu += s[2].Value.Float64() - g.s0[2].Value.Float64()
}

// perMessage is what g saw per message of messages, as text.
func (g *gcTurns) perMessage(messages int) string {
	n := float64(max(messages, 1))
	return fmt.Sprintf("%.0f B allocated, %.2f GC cycles per 1000, GC CPU %s",
		float64(g.allocs)/n, 1000*float64(g.cycles)/n, time.Duration(g.cpu/n*1e9).Round(100*time.Nanosecond))
}

// gcCycles returns how many GC cycles this process has completed.
func gcCycles() uint64 {
	s := []metrics.Sample{{Name: "/gc/cycles/total:gc-cycles"}}
	metrics.Read(s)
	return s[0].Value.Uint64()
}

func percentiles(ds []time.Duration) (p50, p99 time.Duration) {
	sort.Slice(ds, func(i, j int) bool { return ds[i] < ds[j] })
	return ds[len(ds)/2].Round(time.Microsecond), ds[(len(ds)*99)/100].Round(time.Microsecond)
}

// profileSelf writes a CPU profile of this process to path until the returned stop is called,
// which also writes the allocations made meanwhile to path+".allocs" (go tool pprof
// -sample_index=alloc_space).
func profileSelf(path string) (stop func(), err error) {
	f, err := os.Create(path)
	if err != nil {
		return nil, err
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		f.Close()
		return nil, err
	}
	return func() {
		pprof.StopCPUProfile()
		f.Close()
		if a, err := os.Create(path + ".allocs"); err == nil {
			pprof.Lookup("allocs").WriteTo(a, 0)
			a.Close()
		}
	}, nil
}
