package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strconv"

	"sdkpp/wire"
)

// poster sends lobby messages over one HTTP/1.1 connection of its own, one request at a time,
// on the caller's goroutine: the fan-out's sender. net/http's client hands every request to two
// goroutines of its connection (a writer and a reader), whose wake-ups cost the sender more CPU
// than the request itself; on a shared machine that CPU is taken from the service measured,
// where Redis's publisher (redisConn) runs on its caller's goroutine. The requests are the same
// as api.send's, header for header.
type poster struct {
	c    net.Conn
	r    *bufio.Reader
	w    *bufio.Writer
	host string
	path string // /api/v10/lobbies/{id}/messages
	auth string
}

// newPoster connects to a's service to send as p in the lobby.
func (a *api) newPoster(p player, lobbyID string) (*poster, error) {
	u, err := url.Parse(a.base)
	if err != nil {
		return nil, err
	}
	c, err := net.Dial("tcp", u.Host)
	if err != nil {
		return nil, err
	}
	return &poster{c: c, r: bufio.NewReader(c), w: bufio.NewWriter(c), host: u.Host,
		path: u.Path + "/lobbies/" + lobbyID + "/messages", auth: "Bearer " + p.token}, nil
}

func (p *poster) Close() error { return p.c.Close() }

// send posts one message and reads the answer, which must be a 2xx.
func (p *poster) send(content string) error {
	body, err := json.Marshal(wire.LobbyMessageRequest{Content: content})
	if err != nil {
		return err
	}
	p.w.WriteString("POST " + p.path + " HTTP/1.1\r\nHost: " + p.host + "\r\nUser-Agent: Go-http-client/1.1\r\n" +
		"Content-Length: " + strconv.Itoa(len(body)) + "\r\nAuthorization: " + p.auth +
		"\r\nContent-Type: application/json\r\nAccept-Encoding: gzip\r\n\r\n")
	p.w.Write(body)
	if err := p.w.Flush(); err != nil {
		return err
	}
	resp, err := http.ReadResponse(p.r, nil)
	if err != nil {
		return err
	}
	raw, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if err != nil {
		return err
	}
	if resp.StatusCode/100 != 2 {
		return fmt.Errorf("POST %s: HTTP %d: %s", p.path, resp.StatusCode, raw)
	}
	if resp.Close {
		return fmt.Errorf("POST %s: the service closed the connection", p.path)
	}
	return nil
}
