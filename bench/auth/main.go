// Command auth measures account linking on loopback, each figure beside an anchor measured in the
// same run:
//
//   - Authorize to token: the SDK's whole flow (consent page, approve, loopback redirect, PKCE
//     token exchange, callbacks through RunCallbacks), beside the same four HTTP round trips to a
//     bare net/http server that does no work.
//   - The token endpoint's requests per second (client_credentials grant: the client's lookup
//     and the token's signature; a client_credentials token is signed and writes no row, see
//     server/token), beside a bare net/http handler that parses the same form and answers a
//     token-sized body, and beside the floor (floor.go), now a reference: the floor of the design
//     that wrote a row per token, a bare handler that does only what that design's guarantee
//     required, a commit of its row before the answer, on the same store, in two ways (a commit
//     per request, a group commit), the faster printed as the floor.
//
// Both run on the store -store names: SQLite in a fresh data directory (the default), or
// PostgreSQL, in a fresh database of the server whose admin URL is given (postgres://...).
// Beside the rates, the CPU per request (this process's, and a PostgreSQL server's when it runs
// on this machine, read from /proc) gives a ratio that depends less on what else the machine runs.
//
// Run by bench/run.sh (make bench), once per store.
package main

import (
	"bytes"
	"context"
	"database/sql"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"os"
	"runtime"
	"runtime/pprof"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"sdkpp/bench/internal/benchdb"
	"sdkpp/core"
	"sdkpp/server"
	"sdkpp/server/browser"
	"sdkpp/server/ratelimit"

	_ "github.com/jackc/pgx/v5/stdlib" // the "pgx" database/sql driver, to find the server's processes
)

func main() {
	rounds := flag.Int("rounds", 40, "Authorize-to-token rounds")
	workers := flag.Int("workers", 8, "concurrent token requests")
	dur := flag.Duration("duration", 10*time.Second, "how long to load each endpoint, in turns")
	turns := flag.Int("turns", 20, "how many turns the token endpoint and its anchor take")
	storeFlag := flag.String("store", "sqlite", "the store: sqlite (a fresh data directory) or a PostgreSQL admin URL (a fresh database on it)")
	profile := flag.String("cpuprofile", "", "write CPU profiles of the token endpoint's turns of load to this path with .0, .1, ... appended, of the anchor's turns with .anchor.0, .anchor.1, ..., and of the floor's with .floor-a.2, .floor-b.0, ... (its way's letter)")
	memProfile := flag.String("memprofile", "", "write a profile of the allocations (of the whole run, the anchor's too) to this path")
	flag.Parse()
	if *memProfile != "" {
		defer writeAllocs(*memProfile)
	}
	if err := run(*rounds, *workers, *turns, *dur, *storeFlag, *profile); err != nil {
		fmt.Fprintln(os.Stderr, "bench:", err)
		os.Exit(1)
	}
}

func run(rounds, workers, turns int, dur time.Duration, storeName, profile string) error {
	cfg := server.Config{Addr: "127.0.0.1:0", Dev: true,
		// The token endpoint's own throughput is measured, as the bare handler's is: no rate limits.
		RateLimits: ratelimit.Config{Disabled: true},
		Logger:     slog.New(slog.NewTextHandler(io.Discard, nil))}
	label := "SQLite"
	var pg *postgresCPU // the PostgreSQL server's processes, when they are on this machine
	if storeName == "sqlite" {
		dir, err := os.MkdirTemp("", "sdkpp-bench-auth-")
		if err != nil {
			return err
		}
		defer os.RemoveAll(dir)
		cfg.DataDir = dir
	} else {
		u, drop, err := benchdb.Postgres(storeName, "bench_auth")
		if err != nil {
			return err
		}
		defer drop()
		cfg.Store, label = u, "PostgreSQL"
		if pg, err = findPostgres(u); err != nil {
			fmt.Fprintln(os.Stderr, "bench: the PostgreSQL server's CPU is not measured:", err)
		}
	}
	srv, err := server.New(cfg)
	if err != nil {
		return err
	}
	if err := srv.Start(); err != nil {
		return err
	}
	defer srv.Close()
	creds := srv.DevCredentials()
	app := creds.Applications[0]
	user := creds.Users[0]

	bare := bareServer()
	defer bare.Close()

	// Authorize to token.
	flow := make([]time.Duration, 0, rounds)
	for i := 0; i < rounds+3; i++ {
		d, err := authorizeToToken(srv.APIURL(), srv.URL(), uint64(app.ID), user.Username, user.Password)
		if err != nil {
			return err
		}
		if i >= 3 { // warm-up rounds are not counted
			flow = append(flow, d)
		}
	}
	anchor := make([]time.Duration, 0, rounds)
	for i := 0; i < rounds+3; i++ {
		d, err := bareRoundTrips(bare.URL)
		if err != nil {
			return err
		}
		if i >= 3 {
			anchor = append(anchor, d)
		}
	}
	fp50, fp99 := percentiles(flow)
	ap50, ap99 := percentiles(anchor)
	fmt.Printf("Authorize to token on loopback, %s (%d rounds)\n", label, rounds)
	fmt.Printf("  anchor: the same 4 HTTP round trips to a bare net/http server   p50 %8s  p99 %8s\n", ap50, ap99)
	fmt.Printf("  sdkpp: consent, approve, loopback redirect, PKCE exchange        p50 %8s  p99 %8s  ratio p50 %.1fx\n",
		fp50, fp99, float64(fp50)/float64(ap50))

	// Token endpoint throughput.
	form := url.Values{"grant_type": {"client_credentials"}, "client_id": {app.ID.String()},
		"client_secret": {app.ClientSecret}, "scope": {"identify"}}.Encode()
	// The floor: what the token's guarantee alone costs, on the same store (a database of its own).
	floor, err := startFloor(storeName, int64(app.ID), app.ClientSecret, workers)
	if err != nil {
		return err
	}
	defer floor.Close()
	// They take turns, so that all meet the same moments of a shared machine: sdkpp, the anchor
	// and one of the floor's ways, in the order ABC then CBA, so that none is always the one that
	// follows another; the floor's ways take two turns each in their turn (ABC CBA), so that the
	// run grows by one endpoint's load. Each figure is the median of the turns' ratios.
	var ratios, ourRates, baseRates []float64
	var ourCPU, baseCPU cpuMeter
	var pgTime time.Duration // the PostgreSQL server's CPU over the token endpoint's turns
	each := dur / time.Duration(turns)
	// measure loads target for one turn, with its CPU on m (and the PostgreSQL server's on
	// server when it is not nil), profiled to the file prof when it is not empty.
	measure := func(target, prof string, m *cpuMeter, server *time.Duration) (float64, error) {
		// Each turn starts from a collected heap, so that neither pays for the other's garbage
		// (the anchor, which allocates little, would otherwise finish the cycles ours began).
		runtime.GC()
		stop, err := startProfile(prof, len(ratios))
		if err != nil {
			return 0, err
		}
		defer stop()
		m.start()
		pg0 := pg.used()
		rate, err := load(target, form, workers, each)
		m.stop(rate * each.Seconds())
		if server != nil {
			*server += pg.used() - pg0
		}
		return rate, err
	}
	for turn := range turns {
		way := floor.ways[(turn/2)%len(floor.ways)]
		var ours, base, low float64
		steps := []func() error{
			func() (err error) {
				ours, err = measure(srv.APIURL()+"/oauth2/token", profile, &ourCPU, &pgTime)
				return err
			},
			func() (err error) {
				base, err = measure(bare.URL+"/token", anchorProfile(profile), &baseCPU, nil)
				return err
			},
			func() (err error) {
				low, err = measure(way.srv.URL+"/token", floorProfile(profile, turn, len(floor.ways)), &way.cpu, &way.pgTime)
				way.turns += each
				return err
			},
		}
		if turn%2 == 1 {
			slices.Reverse(steps)
		}
		for _, step := range steps {
			if err := step(); err != nil {
				return err
			}
		}
		ourRates, baseRates, ratios = append(ourRates, ours), append(baseRates, base), append(ratios, ours/base)
		way.rates, way.ratios, way.ours = append(way.rates, low), append(way.ratios, low/base), append(way.ours, ours/low)
	}
	fmt.Printf("Token endpoint, client_credentials, %s, %d workers, %d turns each of %s, in the order ABC CBA (medians)\n", label, workers, turns, each)
	fmt.Printf("  anchor: bare net/http handler (parse form, answer a token body)  %8.0f req/s  CPU %5.1f us/req  allocs %3.0f/req\n",
		median(baseRates), baseCPU.perRequest(), baseCPU.allocsPerRequest())
	fmt.Printf("  sdkpp /oauth2/token (authenticate, sign the token; no row)       %8.0f req/s  CPU %5.1f us/req  allocs %3.0f/req  ratio %.2fx (target >= 0.5x; turns %.2fx to %.2fx, middle half %.2fx to %.2fx)\n",
		median(ourRates), ourCPU.perRequest(), ourCPU.allocsPerRequest(), median(ratios), slices.Min(ratios), slices.Max(ratios),
		quantile(ratios, 0.25), quantile(ratios, 0.75))
	// The CPU ratio depends much less than the rates on what else the machine runs.
	if pg != nil && ourCPU.requests > 0 {
		pgPer := float64(pgTime.Microseconds()) / ourCPU.requests
		fmt.Printf("  the PostgreSQL server's own CPU over sdkpp's turns                                 %5.1f us/req  CPU ratio with it %.2fx\n",
			pgPer, baseCPU.perRequest()/(ourCPU.perRequest()+pgPer))
	} else if ourCPU.requests > 0 {
		fmt.Printf("  CPU ratio (the anchor's CPU per request over sdkpp's)                                             %.2fx\n",
			baseCPU.perRequest()/ourCPU.perRequest())
	}
	floor.report(pg != nil, ourCPU, pgTime)
	fmt.Println("  (CPU: this process's, clients and server together, over all turns; a PostgreSQL server's")
	fmt.Println("   on its own line: on a shared machine the rates depend on the cores left, CPU much less)")
	return nil
}

// postgresCPU measures the CPU time of a PostgreSQL server on this machine: its postmaster's
// children that run (the sessions, the background processes) and those that ended (which the
// postmaster has reaped).
type postgresCPU struct{ postmaster int }

// findPostgres finds the server of dsn through the process of a session of its own: its parent
// is the postmaster.
func findPostgres(dsn string) (*postgresCPU, error) {
	db, err := sql.Open("pgx", dsn)
	if err != nil {
		return nil, err
	}
	defer db.Close()
	var backend int
	if err := db.QueryRow(`SELECT pg_backend_pid()`).Scan(&backend); err != nil {
		return nil, err
	}
	f, err := procStat(backend)
	if err != nil {
		return nil, fmt.Errorf("the server is not on this machine: %w", err)
	}
	ppid, err := strconv.Atoi(f[1])
	if err != nil {
		return nil, err
	}
	return &postgresCPU{postmaster: ppid}, nil
}

// procStat returns the fields of /proc/pid/stat after the command's name (state first).
func procStat(pid int) ([]string, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return nil, err
	}
	i := bytes.LastIndexByte(b, ')')
	if i < 0 {
		return nil, fmt.Errorf("/proc/%d/stat: no command name", pid)
	}
	f := strings.Fields(string(b[i+1:]))
	if len(f) < 15 {
		return nil, fmt.Errorf("/proc/%d/stat: %d fields", pid, len(f))
	}
	return f, nil
}

// used returns the server's CPU time so far; zero on a nil postgresCPU.
func (p *postgresCPU) used() time.Duration {
	if p == nil {
		return 0
	}
	const tick = 10 * time.Millisecond // /proc counts in USER_HZ, 100 on Linux
	ticks := func(fs ...string) (n int64) {
		for _, f := range fs {
			v, _ := strconv.ParseInt(f, 10, 64)
			n += v
		}
		return n
	}
	var total int64
	if f, err := procStat(p.postmaster); err == nil {
		total += ticks(f[11], f[12], f[13], f[14]) // its own, and its ended children's
	}
	entries, _ := os.ReadDir("/proc")
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		if f, err := procStat(pid); err == nil && f[1] == strconv.Itoa(p.postmaster) {
			total += ticks(f[11], f[12])
		}
	}
	return time.Duration(total) * tick
}

// anchorProfile is where the anchor's turns are profiled when the token endpoint's are in
// profile: beside them, with .anchor before the turn's number.
func anchorProfile(profile string) string {
	if profile == "" {
		return ""
	}
	return profile + ".anchor"
}

// floorProfile is where the floor's turn of turn (of ways ways, taking turns by pairs) is
// profiled when the token endpoint's are in profile: beside them, with .floor and the way's
// letter before the turn's number.
func floorProfile(profile string, turn, ways int) string {
	if profile == "" {
		return ""
	}
	return fmt.Sprintf("%s.floor-%c", profile, 'a'+(turn/2)%ways)
}

// startProfile starts a CPU profile of a turn's load, in the file profile.turn
// (go tool pprof merges the turns' files), and returns what stops it. An empty profile profiles
// nothing.
func startProfile(profile string, turn int) (stop func(), err error) {
	if profile == "" {
		return func() {}, nil
	}
	f, err := os.Create(fmt.Sprintf("%s.%d", profile, turn))
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
	}, nil
}

// writeAllocs writes the profile of the allocations so far to path.
func writeAllocs(path string) {
	f, err := os.Create(path)
	if err == nil {
		err = pprof.Lookup("allocs").WriteTo(f, 0)
		if cerr := f.Close(); err == nil {
			err = cerr
		}
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "bench: the allocations' profile:", err)
	}
}

// cpuMeter sums this process's CPU time (user and system) and the requests served over the
// spans it measures.
type cpuMeter struct {
	t0, total        time.Duration
	mallocs0, allocs uint64 // the process's heap allocations, at start and over the spans
	requests         float64
}

// processCPU returns the CPU time this process has used so far.
func processCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// mallocs returns how many heap objects this process has allocated so far.
func mallocs() uint64 {
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return ms.Mallocs
}

func (m *cpuMeter) start() { m.t0, m.mallocs0 = processCPU(), mallocs() }

// stop ends the span begun by start, in which n requests succeeded.
func (m *cpuMeter) stop(n float64) {
	m.total += processCPU() - m.t0
	m.allocs += mallocs() - m.mallocs0
	m.requests += n
}

// perRequest is the CPU time per request in microseconds.
func (m *cpuMeter) perRequest() float64 {
	if m.requests == 0 {
		return 0
	}
	return float64(m.total.Microseconds()) / m.requests
}

// allocsPerRequest is how many heap objects were allocated per request.
func (m *cpuMeter) allocsPerRequest() float64 {
	if m.requests == 0 {
		return 0
	}
	return float64(m.allocs) / m.requests
}

// quantile returns the q-quantile of xs (which it sorts), the nearest rank's.
func quantile(xs []float64, q float64) float64 {
	slices.Sort(xs)
	return xs[min(len(xs)-1, int(q*float64(len(xs))))]
}

// median returns the median of xs (which it sorts).
func median(xs []float64) float64 {
	slices.Sort(xs)
	if n := len(xs); n%2 == 0 {
		return (xs[n/2-1] + xs[n/2]) / 2
	}
	return xs[len(xs)/2]
}

// authorizeToToken runs the SDK's whole flow once and returns its duration.
func authorizeToToken(apiBase, webBase string, appID uint64, username, password string) (time.Duration, error) {
	c := core.NewClientWithBases(apiBase, webBase)
	defer c.Close()
	c.SetApplicationId(appID)
	var browseErr error
	c.SetOpenUrlCallback(core.Func(func(u string) {
		b := browser.New()
		loc, err := b.Authorize(context.Background(), u, browser.Choice{Username: username, Password: password})
		if err != nil {
			browseErr = err
			return
		}
		resp, err := http.Get(loc)
		if err != nil {
			browseErr = err
			return
		}
		resp.Body.Close()
	}))
	start := time.Now()
	v := c.CreateAuthorizationCodeVerifier()
	args := core.NewAuthorizationArgs()
	args.SetScopes(core.CommunicationScopes)
	args.SetCodeChallenge(v.Challenge())
	var failure error
	done := false
	c.Authorize(args, core.Func(func(r *core.ClientResult, code, redirect string) {
		if !r.Successful() {
			failure, done = fmt.Errorf("Authorize: %s", r.ToString()), true
			return
		}
		c.GetToken(appID, code, v.Verifier(), redirect, core.Func(func(r *core.ClientResult, access, _ string, _ core.AuthorizationTokenType, _ int32, _ string) {
			if !r.Successful() || access == "" {
				failure = fmt.Errorf("GetToken: %s", r.ToString())
			}
			done = true
		}))
	}))
	for deadline := time.Now().Add(30 * time.Second); !done; {
		if time.Now().After(deadline) {
			return 0, fmt.Errorf("Authorize to token timed out")
		}
		core.RunCallbacks()
		time.Sleep(100 * time.Microsecond)
	}
	if browseErr != nil {
		return 0, browseErr
	}
	return time.Since(start), failure
}

// bareServer answers every request at once: the transport cost with no work behind it.
func bareServer() *httpServer {
	body := `{"access_token":"` + strings.Repeat("a", 40) + `","token_type":"Bearer","expires_in":604800,"scope":"identify"}`
	return newHTTPServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		r.ParseForm()
		if r.URL.Path == "/redirect" {
			http.Redirect(w, r, "/callback", http.StatusFound)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, body)
	}))
}

// bareRoundTrips makes the flow's four round trips (page, approve, callback, token) to the bare
// server.
func bareRoundTrips(base string) (time.Duration, error) {
	c := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	start := time.Now()
	for _, step := range []struct{ method, path string }{{"GET", "/page"}, {"POST", "/redirect"}, {"GET", "/callback"}, {"POST", "/token"}} {
		req, _ := http.NewRequest(step.method, base+step.path, strings.NewReader("a=b"))
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		resp, err := c.Do(req)
		if err != nil {
			return 0, err
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
	}
	return time.Since(start), nil
}

// load posts form to target from workers goroutines for d and returns successful requests per
// second.
func load(target, form string, workers int, d time.Duration) (float64, error) {
	tr := &http.Transport{MaxIdleConnsPerHost: workers}
	defer tr.CloseIdleConnections()
	c := &http.Client{Transport: tr}
	var ok, bad atomic.Int64
	var wg sync.WaitGroup
	deadline := time.Now().Add(d)
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for time.Now().Before(deadline) {
				resp, err := c.Post(target, "application/x-www-form-urlencoded", strings.NewReader(form))
				if err != nil {
					bad.Add(1)
					continue
				}
				io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
				if resp.StatusCode == http.StatusOK {
					ok.Add(1)
				} else {
					bad.Add(1)
				}
			}
		}()
	}
	wg.Wait()
	if bad.Load() > 0 {
		return 0, fmt.Errorf("%s: %d failed requests", target, bad.Load())
	}
	return float64(ok.Load()) / d.Seconds(), nil
}

func percentiles(ds []time.Duration) (p50, p99 time.Duration) {
	sort.Slice(ds, func(i, j int) bool { return ds[i] < ds[j] })
	return ds[len(ds)/2].Round(10 * time.Microsecond), ds[(len(ds)*99)/100].Round(10 * time.Microsecond)
}

// httpServer is a net/http server on a loopback port.
type httpServer struct {
	URL string
	srv *http.Server
}

func newHTTPServer(h http.Handler) *httpServer {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		panic(err)
	}
	s := &httpServer{URL: "http://" + ln.Addr().String(), srv: &http.Server{Handler: h}}
	go s.srv.Serve(ln)
	return s
}

func (s *httpServer) Close() { s.srv.Close() }
