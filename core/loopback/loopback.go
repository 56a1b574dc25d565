// Package loopback receives the OAuth2 authorization redirect on a listener bound to 127.0.0.1
// (RFC 8252, section 7.3): the consent page redirects the browser to
// http://127.0.0.1:PORT/authorize/callback?code=...&state=..., and Wait returns the code.
package loopback

import (
	"context"
	"crypto/subtle"
	"errors"
	"fmt"
	"net"
	"net/http"
	"sync"
	"time"
)

// CallbackPath is the path of the redirect.
const CallbackPath = "/authorize/callback"

// Errors of Wait.
var (
	ErrStateMismatch = errors.New("the redirect's state does not match the request's (rejected)")
	ErrNoCode        = errors.New("the redirect carries no code")
)

// DeniedError is an error the service returned through the redirect (error=access_denied, ...).
type DeniedError struct{ Code, Description string }

func (e *DeniedError) Error() string {
	if e.Description != "" {
		return fmt.Sprintf("authorization failed: %s: %s", e.Code, e.Description)
	}
	return "authorization failed: " + e.Code
}

type result struct {
	code string
	err  error
}

// Receiver is a one-shot listener for the redirect. Close releases it; a redirect arriving
// after Close finds nothing listening.
type Receiver struct {
	ln    net.Listener
	srv   *http.Server
	state string
	once  sync.Once
	done  chan result
	serve chan struct{} // closed when the serving goroutine has returned
}

// Listen binds 127.0.0.1 on an ephemeral port and waits for a redirect carrying state.
func Listen(state string) (*Receiver, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("listen for the authorization redirect: %w", err)
	}
	r := &Receiver{ln: ln, state: state, done: make(chan result, 1), serve: make(chan struct{})}
	mux := http.NewServeMux()
	mux.HandleFunc(CallbackPath, r.handle)
	r.srv = &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	go func() {
		defer close(r.serve)
		r.srv.Serve(ln)
	}()
	return r, nil
}

// Addr is the listener's host:port, for the redirect URI.
func (r *Receiver) Addr() string { return r.ln.Addr().String() }

// RedirectURI is the full redirect URI to register in the authorize request.
func (r *Receiver) RedirectURI() string { return "http://" + r.Addr() + CallbackPath }

func (r *Receiver) handle(w http.ResponseWriter, req *http.Request) {
	q := req.URL.Query()
	var res result
	switch {
	case subtle.ConstantTimeCompare([]byte(q.Get("state")), []byte(r.state)) != 1:
		res.err = ErrStateMismatch // rule AA-3
	case q.Get("error") != "":
		res.err = &DeniedError{Code: q.Get("error"), Description: q.Get("error_description")}
	case q.Get("code") == "":
		res.err = ErrNoCode
	default:
		res.code = q.Get("code")
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	if res.err != nil {
		w.WriteHeader(http.StatusBadRequest)
		fmt.Fprint(w, page("Sign-in did not complete", "You can close this window and try again from the game."))
	} else {
		fmt.Fprint(w, page("Signed in", "You can close this window and return to the game."))
	}
	r.once.Do(func() { r.done <- res })
}

func page(title, text string) string {
	return "<!doctype html><html><head><meta charset=\"utf-8\"><title>" + title + "</title></head><body><h1>" +
		title + "</h1><p>" + text + "</p></body></html>"
}

// Wait returns the code of the first redirect, or why it failed, or ctx's error.
func (r *Receiver) Wait(ctx context.Context) (string, error) {
	select {
	case res := <-r.done:
		return res.code, res.err
	case <-ctx.Done():
		return "", ctx.Err()
	}
}

// Close stops listening and waits for the serving goroutine to end.
func (r *Receiver) Close() {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	if r.srv.Shutdown(ctx) != nil {
		r.srv.Close()
	}
	<-r.serve
}
