package server

import (
	"context"
	"log/slog"
	"net/http"
	"time"

	"sdkpp/server/httpx"
)

// lobbyMessageRoute is the API route of a lobby message, the request gateway sessions send most.
const lobbyMessageRoute = "POST /lobbies/{lobby_id}/messages"

// lobbyMessageMetric is lobbyMessageRoute as the metrics name it (apiRoute).
var lobbyMessageMetric = apiRoute(lobbyMessageRoute)

// gatewayAccept is the gateway's Accept (gateway.Config): nil when requests over the gateway are
// off.
func (s *Server) gatewayAccept() func(ctx context.Context, remote, auth, method, path string, body []byte) (func() (int, []byte), bool) {
	if s.cfg.NoGatewayRequests {
		return nil
	}
	return s.gatewaySend
}

// gatewaySend takes a lobby message sent over a gateway session (lobbies.Service.SendOverGateway)
// without net/http, with what the API's handler adds to it: the rate limits, the metrics and the
// request log line. Every other request is left to the API's handler.
func (s *Server) gatewaySend(ctx context.Context, remote, auth, method, path string, body []byte) (func() (int, []byte), bool) {
	id, ok := lobbyMessagePath(method, path)
	if !ok {
		return nil, false
	}
	start := time.Now()
	var answer func() (int, []byte)
	var header http.Header // the rate limits' headers, for the metrics
	if s.limiter != nil {
		w := httpx.NewRecorder()
		if !s.limiter.AdmitOf(ctx, w, remote, auth, path, lobbyMessageRoute) {
			answer = func() (int, []byte) { return w.Status, w.Body.Bytes() }
		}
		header = w.Header()
	}
	if answer == nil {
		answer = s.lobbies.SendOverGateway(ctx, auth, id, body)
	}
	return func() (int, []byte) {
		status, b := answer()
		s.metrics.Served(lobbyMessageMetric, "gateway", status, time.Since(start), header)
		level := slog.LevelDebug
		if status >= 500 {
			level = slog.LevelError
		}
		if s.gatewayLog.Enabled(ctx, level) { // as httpx.Logging writes it
			s.gatewayLog.Log(ctx, level, "http request", "method", method, "path", path, "status", status, "duration", time.Since(start))
		}
		return status, b
	}, true
}

// lobbyMessagePath returns the lobby id of a request of lobbyMessageRoute in its plainest form,
// /lobbies/<digits>/messages; false for any other request, which the API's mux routes.
func lobbyMessagePath(method, path string) (id string, ok bool) {
	const prefix, suffix = "/lobbies/", "/messages"
	if method != http.MethodPost || len(path) <= len(prefix)+len(suffix) || path[:len(prefix)] != prefix ||
		path[len(path)-len(suffix):] != suffix {
		return "", false
	}
	id = path[len(prefix) : len(path)-len(suffix)]
	if len(id) > 20 {
		return "", false
	}
	for i := 0; i < len(id); i++ {
		if id[i] < '0' || id[i] > '9' {
			return "", false
		}
	}
	return id, true
}
