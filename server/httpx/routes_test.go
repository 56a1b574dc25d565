package httpx

import (
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/stretchr/testify/assert"
)

// A request no route matches gets the platform's JSON 404, or 405 with Allow listing the methods
// of the routes of its path; an unclean path is redirected as ServeMux does; a matched route is
// served once admit lets it through, and not otherwise.
func TestAdmittedAndJSONErrors(t *testing.T) {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /things/{id}", func(w http.ResponseWriter, r *http.Request) { _, _ = io.WriteString(w, r.PathValue("id")) })
	mux.HandleFunc("DELETE /things/{id}", func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(http.StatusNoContent) })
	// A route without wildcards is served by its handler at once, the request's Pattern set as
	// ServeMux sets it.
	mux.HandleFunc("GET /plain", func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.WriteString(w, r.Pattern+" "+r.PathValue("id"))
	})
	log := slog.New(slog.DiscardHandler)
	refuse := map[string]bool{}
	admit := func(w http.ResponseWriter, r *http.Request, pattern string) bool {
		if refuse[pattern] {
			w.WriteHeader(http.StatusTooManyRequests)
			return false
		}
		return true
	}
	var matched []string
	onMatch := func(r *http.Request, pattern string) { matched = append(matched, pattern) }
	for name, h := range map[string]http.Handler{"Admitted": Admitted(mux, onMatch, admit, log), "JSONErrors": JSONErrors(mux, onMatch, log)} {
		matched = nil
		t.Run(name, func(t *testing.T) {
			for _, tc := range []struct {
				method, path string
				status       int
				body, allow  string
			}{
				{http.MethodGet, "/things/7", http.StatusOK, "7", ""},
				{http.MethodGet, "/plain", http.StatusOK, "GET /plain ", ""},
				{http.MethodHead, "/plain", http.StatusOK, "", ""},
				{http.MethodGet, "/nothing", http.StatusNotFound, `{"code":0,"message":"404: Not Found"}` + "\n", ""},
				{http.MethodPost, "/things/7", http.StatusMethodNotAllowed, `{"code":0,"message":"405: Method Not Allowed"}` + "\n", "DELETE, GET, HEAD"},
				{http.MethodGet, "/things//7", http.StatusTemporaryRedirect, "", ""},
			} {
				rec := httptest.NewRecorder()
				h.ServeHTTP(rec, httptest.NewRequest(tc.method, tc.path, nil))
				assert.Equal(t, tc.status, rec.Code, "%s %s: %s", tc.method, tc.path, rec.Body)
				if tc.body != "" {
					assert.Equal(t, tc.body, rec.Body.String(), "%s %s", tc.method, tc.path)
				}
				assert.Equal(t, tc.allow, rec.Header().Get("Allow"), "%s %s", tc.method, tc.path)
			}
			assert.Equal(t, []string{"GET /things/{id}", "GET /plain", "GET /plain", "GET /things/{id}"}, matched,
				"matched is told the pattern of a matched request and of the route a redirect leads to, of no other")
		})
	}
	refuse["GET /things/{id}"] = true
	rec := httptest.NewRecorder()
	Admitted(mux, nil, admit, log).ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/things/7", nil))
	assert.Equal(t, http.StatusTooManyRequests, rec.Code, "a refused request is not served")
	assert.Empty(t, rec.Body.String())
}

// OptionalPrefix: /.proxy/<path> is served as /<path>; other paths, and the prefix alone or
// followed by more than a slash, as they are.
func TestOptionalPrefix(t *testing.T) {
	h := OptionalPrefix("/.proxy", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { _, _ = io.WriteString(w, r.URL.Path) }))
	for in, want := range map[string]string{"/.proxy/api/x": "/api/x", "/api/x": "/api/x", "/.proxy": "/.proxy", "/.proxyx/y": "/.proxyx/y"} {
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, in, nil))
		assert.Equal(t, want, rec.Body.String(), in)
	}
}
