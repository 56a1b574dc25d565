// Package httpx has the HTTP plumbing every handler of the service shares: JSON and error
// responses in the platform's shapes, strict body decoding that turns bad input into 4xx (never
// 5xx), credentials from the Authorization header, and the request-logging middleware, which logs
// method, path and status only: never a query string, header or body, so no token, code or secret
// reaches a log.
package httpx

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"mime"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"sync"
	"time"

	"sdkpp/internal/jsonscan"
	"sdkpp/wire"
)

// MaxBody is the largest request body read.
const MaxBody = 1 << 20

// appendBuffers are the buffers JSON encodes an Appender into: a page of 100 guild messages is
// about 200 kB, which allocated (and cleared) for every request was much of the garbage the
// page left. The writer copies what it is given before Write returns, so a buffer goes back to
// the pool at once; one grown past maxAppendBuffer is left to the collector.
var appendBuffers = sync.Pool{New: func() any { return new([]byte) }}

// maxAppendBuffer is the largest buffer kept in appendBuffers.
const maxAppendBuffer = 1 << 20

// newline ends a JSON answer, as json.Encoder ends it.
var newline = []byte{'\n'}

// JSON writes v with status.
func JSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	if e, ok := v.(wire.Encoded); ok { // shared with others (a lobby message's members): not copied
		_, _ = w.Write(e)
		_, _ = w.Write(newline)
		return
	}
	if a, ok := v.(wire.Appender); ok { // encoding/json would check its exact encoding again
		buf := appendBuffers.Get().(*[]byte)
		body := append(a.AppendJSON((*buf)[:0]), '\n')
		_, _ = w.Write(body)
		if cap(body) <= maxAppendBuffer {
			*buf = body
			appendBuffers.Put(buf)
		}
		return
	}
	_ = json.NewEncoder(w).Encode(v)
}

// Error writes an error: *wire.APIError and *wire.OAuthError in their shapes, anything else as a
// 500 whose details go to the log only.
func Error(w http.ResponseWriter, r *http.Request, log *slog.Logger, err error) {
	var api *wire.APIError
	var oauth *wire.OAuthError
	switch {
	case errors.As(err, &api):
		JSON(w, api.Status, api)
	case errors.As(err, &oauth):
		if oauth.Status == http.StatusUnauthorized {
			w.Header().Set("WWW-Authenticate", `Basic realm="sdkpp"`)
		}
		JSON(w, oauth.Status, oauth)
	default:
		log.ErrorContext(r.Context(), "request failed", "method", r.Method, "path", r.URL.Path, "err", err)
		JSON(w, http.StatusInternalServerError, &wire.APIError{Code: wire.CodeGeneral, Message: "500: Internal Server Error"})
	}
}

// Reply is a handler result answered with a status other than 200: Body as JSON with Status.
type Reply struct {
	Status int
	Body   any
	// Header holds headers to send with it (Retry-After beside a 429's retry_after, say).
	Header http.Header
}

// Answer writes a handler's result: err as Error does, a nil out as 204 No Content, a Reply with
// its status, anything else as JSON with 200.
func Answer(w http.ResponseWriter, r *http.Request, log *slog.Logger, out any, err error) {
	reply, isReply := out.(Reply)
	switch {
	case err != nil:
		Error(w, r, log, err)
	case out == nil:
		w.WriteHeader(http.StatusNoContent)
	case isReply:
		for k, v := range reply.Header {
			w.Header()[k] = v
		}
		JSON(w, reply.Status, reply.Body)
	default:
		JSON(w, http.StatusOK, out)
	}
}

// AnswerOf returns the status and body Answer writes for a request of method and path that
// another carrier than net/http brought (a gateway session's), logging as Answer logs.
func AnswerOf(ctx context.Context, method, path string, log *slog.Logger, out any, err error) (int, []byte) {
	r := (&http.Request{Method: method, URL: &url.URL{Path: path}}).WithContext(ctx)
	w := NewRecorder()
	Answer(w, r, log, out, err)
	return w.Status, w.Body.Bytes()
}

// PathID reads the snowflake path value name; a malformed one is a 400 50035 naming it.
func PathID(r *http.Request, name string) (uint64, error) { return ParseID(name, r.PathValue(name)) }

// ParseID reads value, the snowflake path value name, as PathID does.
func ParseID(name, value string) (uint64, error) {
	id, ok := wire.ParseSnowflake(value)
	if !ok {
		return 0, wire.Invalid(name, "NUMBER_TYPE_COERCE", "The value is not snowflake.")
	}
	return uint64(id), nil
}

// DecodeJSON reads a JSON body into v. A non-JSON content type, a body over MaxBody or invalid
// JSON is a 400 (50109), unknown fields are ignored as the platform does.
func DecodeJSON(r *http.Request, v any) error {
	if err := jsonType(r.Header.Get("Content-Type")); err != nil {
		return err
	}
	body, err := readBody(r)
	if err != nil {
		return wire.InvalidJSON()
	}
	return decodeJSON(body, v)
}

// RawJSONBytes is DecodeJSON into a json.RawMessage for a request that another carrier than
// net/http brought (a gateway session's), its content type and body read already: the same
// rules, the same errors. The message is returned, a sub-slice of body when it is valid JSON,
// rather than stored through an interface, which would cost it an allocation.
func RawJSONBytes(contentType string, body []byte) (json.RawMessage, error) {
	if err := jsonType(contentType); err != nil {
		return nil, err
	}
	if len(body) <= MaxBody && jsonscan.Valid(body) {
		return bytes.TrimSpace(body), nil
	}
	var raw json.RawMessage
	return raw, decodeJSON(body, &raw) // its errors, or encoding/json's reading
}

// jsonType checks a request body's content type: a 415 unless JSON.
func jsonType(ct string) error {
	if ct != "application/json" { // the usual one needs no parse
		if mt, _, err := mime.ParseMediaType(ct); err != nil || mt != "application/json" {
			return &wire.APIError{Status: http.StatusUnsupportedMediaType, Code: wire.CodeInvalidJSON,
				Message: "The request body must be application/json."}
		}
	}
	return nil
}

// decodeJSON decodes a request's body into v.
func decodeJSON(body []byte, v any) error {
	if len(body) > MaxBody {
		return &wire.APIError{Status: http.StatusRequestEntityTooLarge, Code: wire.CodeGeneral, Message: "Request entity too large"}
	}
	if raw, ok := v.(*json.RawMessage); ok && jsonscan.Valid(body) { // one pass, no copy
		*raw = bytes.TrimSpace(body)
		return nil
	}
	if err := json.Unmarshal(body, v); err != nil {
		return wire.InvalidJSON()
	}
	return nil
}

// readBody reads the body, at most MaxBody+1 bytes: at once into a buffer of its length when
// the request declares one within MaxBody, which spares io.ReadAll's growing copies.
func readBody(r *http.Request) ([]byte, error) {
	if n := r.ContentLength; n >= 0 && n <= MaxBody {
		body := make([]byte, n)
		if _, err := io.ReadFull(r.Body, body); err != nil {
			return nil, err
		}
		return body, nil
	}
	return io.ReadAll(io.LimitReader(r.Body, MaxBody+1))
}

// formType is the content type of a form-encoded body as clients send it.
const formType = "application/x-www-form-urlencoded"

// IsForm tells whether the request body is application/x-www-form-urlencoded.
func IsForm(r *http.Request) bool {
	ct := r.Header.Get("Content-Type")
	if ct == formType { // the usual one needs no parse
		return true
	}
	mt, _, err := mime.ParseMediaType(ct)
	return err == nil && mt == formType
}

// Form parses a form-encoded body (only the body, never the query string). ok is false when the
// content type is not form-encoded or the body is malformed.
func Form(r *http.Request) (url.Values, bool) {
	if !IsForm(r) {
		return nil, false
	}
	body, err := readBody(r)
	if err != nil || len(body) > MaxBody {
		return nil, false
	}
	return parseForm(body)
}

// maxFormFields bounds how many fields parseForm takes, as url.ParseQuery bounds them.
const maxFormFields = 10000

// parseForm parses a form-encoded body as url.ParseQuery does (any error it would return makes
// ok false), in fewer allocations: the values' strings are cut from one copy of the body, and
// the fields' slices share one array. On the token endpoint, whose request is a form of four
// fields, ParseQuery's map growth and its slice per field were most of what the form allocated.
func parseForm(body []byte) (url.Values, bool) {
	if len(body) == 0 {
		return url.Values{}, true
	}
	q := string(body)
	fields := strings.Count(q, "&") + 1
	if fields > maxFormFields {
		return nil, false
	}
	m := make(url.Values, fields)
	vals := make([]string, fields)
	for q != "" {
		var field string
		field, q, _ = strings.Cut(q, "&")
		if strings.Contains(field, ";") {
			return nil, false // url.ParseQuery: "invalid semicolon separator in query"
		}
		if field == "" {
			continue
		}
		key, value, _ := strings.Cut(field, "=")
		key, err := url.QueryUnescape(key)
		if err != nil {
			return nil, false
		}
		if value, err = url.QueryUnescape(value); err != nil {
			return nil, false
		}
		if old, ok := m[key]; ok {
			m[key] = append(old, value) // a field given again (rare): a slice of its own
			continue
		}
		vals[0] = value
		m[key], vals = vals[:1:1], vals[1:]
	}
	return m, true
}

// Credential returns the value of "Authorization: <scheme> <value>" for the given scheme
// (case-insensitive), or "".
func Credential(r *http.Request, scheme string) string {
	return CredentialOf(r.Header.Get("Authorization"), scheme)
}

// CredentialOf is Credential of an Authorization header's value h.
func CredentialOf(h, scheme string) string {
	if len(h) > len(scheme)+1 && strings.EqualFold(h[:len(scheme)], scheme) && h[len(scheme)] == ' ' {
		return strings.TrimSpace(h[len(scheme)+1:])
	}
	return ""
}

// StatusWriter remembers the status a handler wrote. It gives http.ResponseController the writer
// beneath (Unwrap), so that the gateway can still take the connection over for WebSocket.
type StatusWriter struct {
	http.ResponseWriter
	status int
}

// Status is the status code written so far; 0 before any.
func (s *StatusWriter) Status() int { return s.status }

func (s *StatusWriter) WriteHeader(code int) {
	if s.status == 0 {
		s.status = code
	}
	s.ResponseWriter.WriteHeader(code)
}

// Unwrap gives http.ResponseController the underlying writer, so that the gateway can take the
// connection over for WebSocket (Hijack).
func (s *StatusWriter) Unwrap() http.ResponseWriter { return s.ResponseWriter }

func (s *StatusWriter) Write(b []byte) (int, error) {
	if s.status == 0 {
		s.status = http.StatusOK
	}
	return s.ResponseWriter.Write(b)
}

// Logging logs one line per request at Debug (Info for 5xx is Error) with method, path, status
// and duration, and turns a handler panic into a logged 500.
func Logging(log *slog.Logger, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		start := time.Now()
		sw := &StatusWriter{ResponseWriter: w}
		defer func() {
			if p := recover(); p != nil {
				if p == http.ErrAbortHandler {
					panic(p)
				}
				log.ErrorContext(r.Context(), "handler panic", "method", r.Method, "path", r.URL.Path, "panic", p)
				if sw.status == 0 {
					JSON(sw, http.StatusInternalServerError, &wire.APIError{Code: wire.CodeGeneral, Message: "500: Internal Server Error"})
				}
			}
			level := slog.LevelDebug
			if sw.status >= 500 {
				level = slog.LevelError
			}
			// Asked first: the line's attributes cost allocations on every request, even when
			// the level is off (the usual case for the debug line).
			if log.Enabled(r.Context(), level) {
				log.Log(r.Context(), level, "http request", "method", r.Method, "path", r.URL.Path,
					"status", sw.status, "duration", time.Since(start))
			}
		}()
		next.ServeHTTP(sw, r)
	})
}

// Router is what a package registers its routes on: an http.ServeMux, or a Mux that also lists
// them.
type Router interface {
	Handle(pattern string, handler http.Handler)
	HandleFunc(pattern string, handler func(http.ResponseWriter, *http.Request))
}

// Mux is an http.ServeMux that remembers the patterns registered on it, so that tests can reach
// every route.
type Mux struct {
	*http.ServeMux
	patterns []string
}

// NewMux returns an empty Mux.
func NewMux() *Mux { return &Mux{ServeMux: http.NewServeMux()} }

// Handle registers handler for pattern.
func (m *Mux) Handle(pattern string, handler http.Handler) {
	m.patterns = append(m.patterns, pattern)
	m.ServeMux.Handle(pattern, handler)
}

// HandleFunc registers handler for pattern.
func (m *Mux) HandleFunc(pattern string, handler func(http.ResponseWriter, *http.Request)) {
	m.patterns = append(m.patterns, pattern)
	m.ServeMux.HandleFunc(pattern, handler)
}

// Patterns returns the registered patterns in registration order.
func (m *Mux) Patterns() []string { return slices.Clone(m.patterns) }

// Recorder is an http.ResponseWriter that keeps the status and the body a handler writes, for a
// request served other than over HTTP (an API request over the gateway).
type Recorder struct {
	Status int // 200 unless the handler wrote another first
	Body   bytes.Buffer

	header      http.Header
	wroteHeader bool
}

// NewRecorder returns an empty Recorder.
func NewRecorder() *Recorder { return &Recorder{Status: http.StatusOK, header: make(http.Header)} }

// Header returns the response's header, which the Recorder does not keep beyond the handler.
func (w *Recorder) Header() http.Header { return w.header }

// WriteHeader records the first status written.
func (w *Recorder) WriteHeader(status int) {
	if !w.wroteHeader {
		w.Status, w.wroteHeader = status, true
	}
}

// Write appends to the body.
func (w *Recorder) Write(b []byte) (int, error) {
	w.WriteHeader(http.StatusOK)
	return w.Body.Write(b)
}
