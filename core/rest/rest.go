// Package rest is the SDK's HTTP client for the service's API: it sends form or JSON requests
// with a token, applies the Client's timeout, and turns the platform's error bodies (JSON API
// errors, OAuth errors, rate limits) into an *Error.
package rest

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"
)

// maxBody bounds a response body the SDK reads.
const maxBody = 8 << 20

// Client sends requests to one API base URL. Its methods are safe for concurrent use.
type Client struct {
	Base    string               // API base URL, e.g. http://127.0.0.1:7710/api/v10
	HTTP    *http.Client         // nil means a client of its own
	Timeout func() time.Duration // per-request timeout, read at each request
}

// Request is one API call.
type Request struct {
	Method string
	Path   string     // below Base, starting with "/"
	Form   url.Values // sent as application/x-www-form-urlencoded when non-nil
	JSON   any        // sent as application/json when non-nil
	Auth   string     // Authorization header value ("Bearer ...", "Bot ..."), or ""
}

// Error is a failed request: a network failure, or an HTTP status of 400 or more.
type Error struct {
	Status           int     // HTTP status; 0 for a network failure
	Code             int     // the platform's JSON error code, e.g. 50035
	Message          string  // the platform's message or the network error
	OAuthError       string  // "invalid_grant" and friends, from OAuth endpoints
	OAuthDescription string  // error_description
	Body             string  // the raw response body
	RetryAfter       float64 // seconds, from a 429 body or the Retry-After header
	Network          bool    // no HTTP response was received
	Timeout          bool    // the request timed out
	// Unsent is set when the request provably never reached the service: it could not be
	// built, or no connection could be made.
	Unsent bool
	Err    error // the underlying error of a network failure
}

func (e *Error) Error() string {
	switch {
	case e.Network:
		return "network error: " + e.Message
	case e.OAuthError != "":
		if e.OAuthDescription != "" {
			return fmt.Sprintf("HTTP %d: %s: %s", e.Status, e.OAuthError, e.OAuthDescription)
		}
		return fmt.Sprintf("HTTP %d: %s", e.Status, e.OAuthError)
	case e.Code != 0:
		return fmt.Sprintf("HTTP %d: %s (code %d)", e.Status, e.Message, e.Code)
	case e.Message != "":
		return fmt.Sprintf("HTTP %d: %s", e.Status, e.Message)
	}
	return fmt.Sprintf("HTTP %d", e.Status)
}

func (e *Error) Unwrap() error { return e.Err }

// Unprocessed reports whether the service provably did not act on the request: it was never
// sent, or it was refused before being handled (429 Too Many Requests, 503 Service
// Unavailable). Such a request may be sent again even when it must not run twice, as a refresh
// token grant must not (a refresh token is used once).
func (e *Error) Unprocessed() bool {
	return e.Unsent || e.Status == http.StatusTooManyRequests || e.Status == http.StatusServiceUnavailable
}

// Retryable reports whether the same request may succeed later: rate limits, gateway errors
// and transient network failures.
func (e *Error) Retryable() bool {
	switch e.Status {
	case http.StatusTooManyRequests, http.StatusBadGateway, http.StatusServiceUnavailable, http.StatusGatewayTimeout:
		return true
	}
	return e.Network
}

// Do sends req and decodes a successful JSON response into out (which may be nil). Any failure
// is an *Error.
func (c *Client) Do(ctx context.Context, req Request, out any) error {
	var body io.Reader
	contentType := ""
	switch {
	case req.Form != nil:
		body = strings.NewReader(req.Form.Encode())
		contentType = "application/x-www-form-urlencoded"
	case req.JSON != nil:
		b, err := json.Marshal(req.JSON)
		if err != nil {
			return &Error{Network: true, Unsent: true, Message: "encode request: " + err.Error(), Err: err}
		}
		body = bytes.NewReader(b)
		contentType = "application/json"
	}
	if c.Timeout != nil {
		if d := c.Timeout(); d > 0 {
			var cancel context.CancelFunc
			ctx, cancel = context.WithTimeout(ctx, d)
			defer cancel()
		}
	}
	method := req.Method
	if method == "" {
		method = http.MethodGet
	}
	hr, err := http.NewRequestWithContext(ctx, method, strings.TrimRight(c.Base, "/")+req.Path, body)
	if err != nil {
		return &Error{Network: true, Unsent: true, Message: "build request: " + err.Error(), Err: err}
	}
	if contentType != "" {
		hr.Header.Set("Content-Type", contentType)
	}
	hr.Header.Set("Accept", "application/json")
	hr.Header.Set("User-Agent", "sdkpp")
	if req.Auth != "" {
		hr.Header.Set("Authorization", req.Auth)
	}
	hc := c.HTTP
	if hc == nil {
		hc = http.DefaultClient
	}
	resp, err := hc.Do(hr)
	if err != nil {
		return networkError(ctx, err)
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(io.LimitReader(resp.Body, maxBody))
	if err != nil {
		return networkError(ctx, err)
	}
	if resp.StatusCode >= 400 {
		return decodeError(resp, raw)
	}
	if out == nil || len(bytes.TrimSpace(raw)) == 0 {
		return nil
	}
	if err := json.Unmarshal(raw, out); err != nil {
		return &Error{Status: resp.StatusCode, Message: "malformed response: " + err.Error(), Body: string(raw), Err: err}
	}
	return nil
}

func networkError(ctx context.Context, err error) *Error {
	e := &Error{Network: true, Message: err.Error(), Err: err}
	var op *net.OpError
	e.Unsent = errors.As(err, &op) && op.Op == "dial" // no connection: nothing was sent
	var ne net.Error
	if errors.Is(err, context.DeadlineExceeded) || errors.Is(ctx.Err(), context.DeadlineExceeded) || (errors.As(err, &ne) && ne.Timeout()) {
		e.Timeout = true
		e.Message = "request timed out"
	}
	return e
}

// decodeError reads the platform's error bodies: {"code","message","errors"},
// {"error","error_description"} and the rate-limit body {"message","retry_after","global"}.
func decodeError(resp *http.Response, raw []byte) *Error {
	e := ErrorOf(resp.StatusCode, raw)
	if e.RetryAfter == 0 {
		if s, err := strconv.ParseFloat(resp.Header.Get("Retry-After"), 64); err == nil {
			e.RetryAfter = s
		}
	}
	return e
}

// ErrorOf is the Error of an answer with status (400 or more) and body, got over HTTP or another
// transport (the gateway's API requests).
func ErrorOf(status int, raw []byte) *Error {
	e := &Error{Status: status, Body: string(raw)}
	var body struct {
		Code             int     `json:"code"`
		Message          string  `json:"message"`
		Error            string  `json:"error"`
		ErrorDescription string  `json:"error_description"`
		RetryAfter       float64 `json:"retry_after"`
	}
	if json.Unmarshal(raw, &body) == nil {
		e.Code, e.Message, e.RetryAfter = body.Code, body.Message, body.RetryAfter
		e.OAuthError, e.OAuthDescription = body.Error, body.ErrorDescription
	} else {
		e.Message = http.StatusText(status)
	}
	return e
}
