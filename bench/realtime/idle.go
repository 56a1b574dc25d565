package main

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	"github.com/coder/websocket"
)

// idleResult is a service's memory before and after it holds n idle connections.
type idleResult struct {
	n             int
	before, after memReport
	took          time.Duration
}

func (r idleResult) perConnRSS() float64 { return float64(r.after.RSS-r.before.RSS) / float64(r.n) }
func (r idleResult) perConnGo() float64 {
	return float64(r.after.GoMem-r.before.GoMem) / float64(r.n)
}

// holdIdle opens n WebSocket connections to the child's gateway, identified (sdkpp: Hello, then
// Identify with one of the tokens, then READY) or just greeted (bare: Hello), measures the child's
// memory before and after, and closes them.
func holdIdle(c *child, path string, tokens []string, n, dialers int) (idleResult, error) {
	res := idleResult{n: n}
	var err error
	if res.before, err = c.memory(); err != nil {
		return res, err
	}
	start := time.Now()
	conns, err := openAll("ws://"+c.Addr+path, tokens, n, dialers)
	defer closeAll(conns)
	res.took = time.Since(start)
	if err != nil {
		return res, err
	}
	res.after, err = c.memory()
	return res, err
}

// openAll opens n idle connections to url (openIdle) with dialers at a time; on an error it
// returns it with the connections opened so far, which the caller closes (closeAll).
func openAll(url string, tokens []string, n, dialers int) ([]*websocket.Conn, error) {
	// Every connection has its own TCP connection: the handshake's HTTP client keeps none idle.
	hc := &http.Client{Transport: &http.Transport{DisableKeepAlives: true,
		DialContext: (&net.Dialer{Timeout: 10 * time.Second}).DialContext}}
	conns := make([]*websocket.Conn, n)
	var next atomic.Int64
	errs := make(chan error, dialers)
	var wg sync.WaitGroup
	for range dialers {
		wg.Go(func() {
			for i := int(next.Add(1)) - 1; i < n; i = int(next.Add(1)) - 1 {
				ws, err := openIdle(hc, url, tokens, i)
				if err != nil {
					errs <- fmt.Errorf("connection %d: %w", i, err)
					return
				}
				conns[i] = ws
			}
		})
	}
	wg.Wait()
	close(errs)
	return conns, <-errs
}

// closeAll closes the connections openAll opened.
func closeAll(conns []*websocket.Conn) {
	for _, ws := range conns {
		if ws != nil {
			ws.CloseNow()
		}
	}
}

// openIdle dials one connection and takes it to its idle state.
func openIdle(hc *http.Client, url string, tokens []string, i int) (*websocket.Conn, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	ws, _, err := websocket.Dial(ctx, url, &websocket.DialOptions{HTTPClient: hc})
	if err != nil {
		return nil, err
	}
	if _, _, err := ws.Read(ctx); err != nil { // Hello
		ws.CloseNow()
		return nil, err
	}
	if len(tokens) == 0 {
		return ws, nil
	}
	identify, _ := json.Marshal(map[string]any{"op": 2, "d": map[string]any{"token": tokens[i%len(tokens)], "intents": 0,
		"properties": map[string]string{"os": "linux", "browser": "bench", "device": "bench"}}})
	if err := ws.Write(ctx, websocket.MessageText, identify); err != nil {
		ws.CloseNow()
		return nil, err
	}
	for {
		_, raw, err := ws.Read(ctx)
		if err != nil {
			ws.CloseNow()
			return nil, err
		}
		var p struct {
			Op int    `json:"op"`
			T  string `json:"t"`
		}
		if json.Unmarshal(raw, &p) == nil && p.Op == 0 && p.T == "READY" {
			return ws, nil
		}
	}
}
