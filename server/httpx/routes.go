package httpx

import (
	"log/slog"
	"net/http"
	"net/url"
	"strings"

	"sdkpp/wire"
)

// Admitted serves mux's routes: a request that no route matches gets the platform's JSON 404 or
// 405 (as JSONErrors), one that a route matches is served if admit (a rate limiter, given the
// route's pattern) lets it through; admit answers the request it refuses. matched, when not nil,
// is told the pattern of each request a route matches, before admit (the metrics' route label).
// The route is found once, and once more only for a pattern with wildcards, whose values
// ServeMux.ServeHTTP sets (a request goes through two muxes, the root's and the API's, and
// finding a route is a good part of what a small request costs).
func Admitted(mux *http.ServeMux, matched func(r *http.Request, pattern string),
	admit func(w http.ResponseWriter, r *http.Request, pattern string) bool, log *slog.Logger) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h, pattern := mux.Handler(r)
		if pattern == "" {
			notMatched(w, r, mux, h, log)
			return
		}
		if matched != nil {
			matched(r, pattern)
		}
		if !admit(w, r, pattern) {
			return
		}
		if strings.Contains(pattern, "{") {
			mux.ServeHTTP(w, r) // (ServeHTTP, not h: it sets the path values)
			return
		}
		r.Pattern = pattern // as ServeHTTP sets it; a pattern without wildcards has no values
		h.ServeHTTP(w, r)
	})
}

// JSONErrors serves mux's routes, and answers requests no route matches with the platform's JSON
// 404 or 405 instead of ServeMux's plain text. matched, when not nil, is told the pattern of each
// request a route matches.
func JSONErrors(mux *http.ServeMux, matched func(r *http.Request, pattern string), log *slog.Logger) http.Handler {
	return Admitted(mux, matched, func(http.ResponseWriter, *http.Request, string) bool { return true }, log)
}

// notMatched answers a request no route of mux matches, h being the handler mux.Handler gave for
// it: the redirect ServeMux makes to clean a path, or the platform's JSON 405 (with the methods
// of the routes of that path in Allow, as ServeMux gives them) or 404. The routes of other
// methods are found by asking mux.Handler, so the answer comes from the mux's documented
// matching, not from running its error handlers.
func notMatched(w http.ResponseWriter, r *http.Request, mux *http.ServeMux, h http.Handler, log *slog.Logger) {
	if r.Method != http.MethodConnect && !canonicalPath(r.URL.EscapedPath()) {
		h.ServeHTTP(w, r) // ServeMux redirects to the cleaned path (its documented Handler)
		return
	}
	if allow := allowedMethods(mux, r); len(allow) > 0 {
		w.Header().Set("Allow", strings.Join(allow, ", "))
		Error(w, r, log, wire.MethodNotAllowed())
		return
	}
	Error(w, r, log, wire.NotFound())
}

// routeMethods are the methods a route may be registered for.
var routeMethods = []string{http.MethodConnect, http.MethodDelete, http.MethodGet, http.MethodHead,
	http.MethodOptions, http.MethodPatch, http.MethodPost, http.MethodPut, http.MethodTrace}

// allowedMethods lists, sorted, the methods for which mux has a route of r's path.
func allowedMethods(mux *http.ServeMux, r *http.Request) []string {
	var allow []string
	for _, m := range routeMethods { // sorted
		if m == r.Method {
			continue
		}
		probe := r.WithContext(r.Context()) // a shallow copy
		probe.Method = m
		if _, pattern := mux.Handler(probe); pattern != "" {
			allow = append(allow, m)
		}
	}
	return allow
}

// canonicalPath tells whether ServeMux takes the escaped path p as it is: it redirects a path
// with a "." or ".." segment or a repeated slash to a cleaner one.
func canonicalPath(p string) bool {
	if !strings.HasPrefix(p, "/") || strings.Contains(p, "//") {
		return false
	}
	for seg := range strings.SplitSeq(p[1:], "/") {
		if seg == "." || seg == ".." {
			return false
		}
	}
	return true
}

// OptionalPrefix serves a request whose path starts with prefix and a slash as the path without
// the prefix, and any other request as it is.
func OptionalPrefix(prefix string, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		rest, ok := strings.CutPrefix(r.URL.Path, prefix)
		if !ok || !strings.HasPrefix(rest, "/") {
			next.ServeHTTP(w, r)
			return
		}
		next.ServeHTTP(w, WithPath(r, rest))
	})
}

// WithPath returns a copy of r whose URL's path is path (with no RawPath), as http.StripPrefix
// makes it: a shallow copy, sharing r's header and body, as Request.Clone's copy of the header
// costs an allocation per header on every request.
func WithPath(r *http.Request, path string) *http.Request {
	r2 := new(http.Request)
	*r2 = *r
	r2.URL = new(url.URL)
	*r2.URL = *r.URL
	r2.URL.Path, r2.URL.RawPath = path, ""
	return r2
}
