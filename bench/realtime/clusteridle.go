package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"syscall"
	"time"

	"sdkpp/server"
)

// clusterIdle measures (e): idle gateway connections across three nodes on PostgreSQL and NATS,
// perNode identified sessions on each, against the bare WebSocket server of (c) holding perNode
// connections. A process may hold only so many files (ulimit -n), so the clients are three
// holder processes of this program (-hold), one per node, and the anchor is measured with
// perNode connections, the same count per server process.
func clusterIdle(perNode int) error {
	raiseFileLimit()
	pg, err := startPostgres()
	if err != nil {
		return err
	}
	defer pg.stop()
	db, err := pg.database()
	if err != nil {
		return err
	}
	ns, err := startNATS()
	if err != nil {
		return err
	}
	defer ns.stop()
	var nodes []*child
	defer func() {
		for _, c := range nodes {
			c.Close()
		}
	}()
	for i := range 3 { // one after the other: the first seeds the dev data
		// A long heartbeat interval, as in (c): the idle connections need no traffic.
		c, err := startNode("sdkpp", 10*time.Minute, nodeConfig{Store: db, Bus: ns.url, ID: i + 1})
		if err != nil {
			return err
		}
		nodes = append(nodes, c)
	}
	a := newAPI(nodes[0].Addr, 8)
	ps, err := a.players(nodes[0].BotToken, "idle-", 300)
	if err != nil {
		return err
	}
	tokens := make([]string, len(ps))
	for i, p := range ps {
		tokens[i] = p.token
	}
	before := make([]memReport, len(nodes))
	for i, c := range nodes {
		if before[i], err = c.memory(); err != nil {
			return err
		}
	}
	// The holders open their connections one node after the other, so that the three nodes'
	// identifies (which each node also hears of through the bus) do not all compete at once.
	start := time.Now()
	var holders []*holder
	defer func() {
		for _, h := range holders {
			h.Close()
		}
	}()
	for i, c := range nodes {
		h, err := startHolder(c.Addr, tokens[i*100:(i+1)*100], perNode)
		if err != nil {
			return fmt.Errorf("node %d: %w", i+1, err)
		}
		holders = append(holders, h)
	}
	took := time.Since(start)
	// Every node has heard of every other node's sessions once its bus is read up to here.
	time.Sleep(2 * time.Second)
	var rssDelta, goDelta int64
	per := make([]string, len(nodes))
	for i, c := range nodes {
		after, err := c.memory()
		if err != nil {
			return err
		}
		rssDelta += after.RSS - before[i].RSS
		goDelta += after.GoMem - before[i].GoMem
		per[i] = fmt.Sprintf("%.1f", float64(after.RSS-before[i].RSS)/float64(perNode)/1024)
		if profileDir != "" {
			if err := c.heap(filepath.Join(profileDir, "node"+strconv.Itoa(i+1)+".heap")); err != nil {
				return err
			}
			if _, err := c.memory(); err != nil { // answered once the profile is written
				return err
			}
		}
	}
	for _, h := range holders {
		h.Close()
	}
	holders = nil
	for _, c := range nodes {
		c.Close()
	}
	nodes = nil
	base, err := bareIdle(perNode)
	if err != nil {
		return err
	}
	total := 3 * perNode
	rss, gomem := float64(rssDelta)/float64(total), float64(goDelta)/float64(total)
	fmt.Printf("(e) %d identified sessions held idle across three nodes on PostgreSQL + NATS, %d per node (memory after a forced GC, per connection)\n",
		total, perNode)
	fmt.Printf("  anchor: bare coder/websocket server holding %d connections            RSS %7.1f KiB  Go heap+stacks %7.1f KiB\n",
		perNode, base.perConnRSS()/1024, base.perConnGo()/1024)
	fmt.Printf("  sdkpp, three nodes (each also keeps the others' session notes)   RSS %7.1f KiB  Go heap+stacks %7.1f KiB  (per node RSS %s KiB; opened in %s)  ratio RSS %.2fx  Go %.2fx (bound 1.5x)\n",
		rss/1024, gomem/1024, per[0]+"/"+per[1]+"/"+per[2], took.Round(time.Second),
		rss/base.perConnRSS(), gomem/base.perConnGo())
	return nil
}

// raiseFileLimit raises this process's open-file limit to its hard limit (which its children
// inherit): the services and holders each keep a descriptor per connection.
func raiseFileLimit() {
	var l syscall.Rlimit
	if syscall.Getrlimit(syscall.RLIMIT_NOFILE, &l) == nil && l.Cur < l.Max {
		l.Cur = l.Max
		_ = syscall.Setrlimit(syscall.RLIMIT_NOFILE, &l)
	}
}

// holder is a child process of this program (-hold) that keeps identified connections to one
// node open until its standard input closes.
type holder struct {
	cmd *exec.Cmd
	in  interface{ Close() error }
}

// holdRequest is what a holder reads on its standard input: where to connect, how many times,
// and the tokens to identify with (round robin).
type holdRequest struct {
	URL    string   `json:"url"`
	N      int      `json:"n"`
	Tokens []string `json:"tokens"`
}

// startHolder starts a holder of n connections to the node at addr and waits until they are all
// identified.
func startHolder(addr string, tokens []string, n int) (*holder, error) {
	self, err := os.Executable()
	if err != nil {
		return nil, err
	}
	cmd := exec.Command(self, "-hold")
	cmd.Stderr = os.Stderr
	in, err := cmd.StdinPipe()
	if err != nil {
		return nil, err
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	h := &holder{cmd: cmd, in: in}
	if err := json.NewEncoder(in).Encode(holdRequest{URL: "ws://" + addr + server.GatewayPath, N: n, Tokens: tokens}); err != nil {
		h.Close()
		return nil, err
	}
	line, err := bufio.NewReader(out).ReadString('\n')
	if err != nil {
		h.Close()
		return nil, fmt.Errorf("holder: %w", err)
	}
	if line != "ok\n" {
		h.Close()
		return nil, fmt.Errorf("holder: %s", line)
	}
	return h, nil
}

// Close ends the holder, which closes its connections.
func (h *holder) Close() {
	h.in.Close()
	h.cmd.Wait()
}

// serveHold is the holder's side (-hold): it reads a holdRequest, opens and identifies the
// connections, prints "ok" (or the error) and keeps them until its standard input closes.
func serveHold() error {
	raiseFileLimit()
	in := bufio.NewReader(os.Stdin)
	var req holdRequest
	if err := json.NewDecoder(in).Decode(&req); err != nil {
		return err
	}
	conns, err := openAll(req.URL, req.Tokens, req.N, 16)
	defer closeAll(conns)
	if err != nil {
		fmt.Println(err)
		return nil
	}
	fmt.Println("ok")
	// Each connection's reader answers nothing: the heartbeat interval is long. Wait for the end.
	for {
		if _, err := in.ReadByte(); err != nil {
			return nil
		}
	}
}
