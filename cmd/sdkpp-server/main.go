// Command sdkpp-server runs the sdkpp platform service.
//
// Flags (each defaults to the environment variable named beside it):
//
//	-addr             SDKPP_ADDR             listen address (default 127.0.0.1:7710)
//	-public-url       SDKPP_PUBLIC_URL       base URL clients use (default http://<addr>)
//	-data-dir         SDKPP_DATA_DIR         SQLite data directory ("" = in memory)
//	-store            SDKPP_STORE            store URL: sqlite:[DIR] (default) or postgres://user:password@host/db
//	-node-id          SDKPP_NODE_ID          this node's id, 0-1023, in every id it makes (unique per cluster)
//	-bus              SDKPP_BUS              NATS URL connecting the nodes of a cluster (nats://host:4222; needs -store postgres://...)
//	-node-heartbeat   SDKPP_NODE_HEARTBEAT   how often the node writes its row of the node registry (default 10s)
//	-dev              SDKPP_DEV              dev mode: seed apps and users, /dev endpoints
//	-dev-credentials  SDKPP_DEV_CREDENTIALS  file receiving the dev credentials JSON
//	-webhook-url      SDKPP_WEBHOOK_URL      dev mode: the main app's webhook URL
//	-clock            SDKPP_CLOCK            real | offset:<duration> | start:<RFC 3339> | fixed:<RFC 3339>
//	-log-level        SDKPP_LOG_LEVEL        debug | info | warn | error (default info)
//	-log-format       SDKPP_LOG_FORMAT       text | json (default text)
//	-webhook-retry    SDKPP_WEBHOOK_RETRY    first webhook retry delay (default 2s)
//	-oidc-allow-loopback  SDKPP_OIDC_ALLOW_LOOPBACK_FOR_TESTS  tests only: loopback OIDC issuers
//	-oidc-ca-file     SDKPP_OIDC_CA_FILE     tests only: extra CA (PEM) trusted for OIDC issuers
//
// It stops gracefully on SIGINT or SIGTERM.
//
// "sdkpp-server operator add -username NAME -role viewer|moderator|admin [-data-dir DIR | -store URL]"
// creates an account of the operator console (/console), reading its password from stdin;
// "operator list" lists the accounts, "operator role -username NAME -role ROLE" changes one's
// role and "operator remove -username NAME" deletes one and signs it out. Each change is
// written to the console's audit log.
package main

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"os"
	"os/signal"
	"strconv"
	"strings"
	"syscall"
	"time"

	"sdkpp/internal/clock"
	"sdkpp/server"
	"sdkpp/server/webhook"
)

func env(name, def string) string {
	if v, ok := os.LookupEnv(name); ok {
		return v
	}
	return def
}

func envBool(name string) bool {
	b, _ := strconv.ParseBool(os.Getenv(name))
	return b
}

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
	defer stop()
	var err error
	if len(os.Args) > 1 && os.Args[1] == "operator" {
		err = operatorCommand(ctx, os.Args[2:], os.Stdin, os.Stdout)
	} else {
		err = run(ctx, os.Args[1:], os.Stderr)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "sdkpp-server:", err)
		os.Exit(1)
	}
}

// run serves until ctx ends (SIGINT or SIGTERM in main), then shuts down gracefully.
func run(ctx context.Context, args []string, logOut io.Writer) error {
	fs := flag.NewFlagSet("sdkpp-server", flag.ContinueOnError)
	fs.SetOutput(logOut)
	addr := fs.String("addr", env("SDKPP_ADDR", server.DefaultAddr), "listen address")
	publicURL := fs.String("public-url", env("SDKPP_PUBLIC_URL", ""), "public base URL (default http://<addr>)")
	dataDir := fs.String("data-dir", env("SDKPP_DATA_DIR", ""), "data directory (empty: in memory)")
	storeURL := fs.String("store", env("SDKPP_STORE", ""), "store URL: sqlite:[DIR] (default: SQLite in -data-dir) or postgres://...")
	nodeID := fs.Int("node-id", envInt("SDKPP_NODE_ID", 0), "node id (0-1023), unique among the nodes sharing a store")
	busURL := fs.String("bus", env("SDKPP_BUS", ""), "NATS URL of the cluster's bus, nats://host:4222 (needs a postgres:// -store; empty: a node alone)")
	dev := fs.Bool("dev", envBool("SDKPP_DEV"), "dev mode: seed applications and users")
	creds := fs.String("dev-credentials", env("SDKPP_DEV_CREDENTIALS", ""), "dev mode: write the credentials JSON here")
	webhookURL := fs.String("webhook-url", env("SDKPP_WEBHOOK_URL", ""), "dev mode: the main application's webhook URL")
	clockSpec := fs.String("clock", env("SDKPP_CLOCK", ""), "clock: real, offset:<duration>, start:<RFC 3339> or fixed:<RFC 3339>")
	logLevel := fs.String("log-level", env("SDKPP_LOG_LEVEL", "info"), "log level: debug, info, warn, error")
	logFormat := fs.String("log-format", env("SDKPP_LOG_FORMAT", "text"), "log format: text or json")
	retry := fs.Duration("webhook-retry", envDuration("SDKPP_WEBHOOK_RETRY", 2*time.Second), "first webhook retry delay")
	loopback := fs.Bool("oidc-allow-loopback", envBool("SDKPP_OIDC_ALLOW_LOOPBACK_FOR_TESTS"), "tests only: accept OIDC issuers on loopback")
	caFile := fs.String("oidc-ca-file", env("SDKPP_OIDC_CA_FILE", ""), "tests only: PEM CA trusted for OIDC issuers")
	voiceAddr := fs.String("voice-addr", env("SDKPP_VOICE_ADDR", ""), "UDP address of the voice relay (default: the host of -addr, a free port)")
	voiceEndpoint := fs.String("voice-endpoint", env("SDKPP_VOICE_ENDPOINT", ""),
		"host:port clients send voice to, when it differs from -voice-addr (behind NAT or a load balancer)")
	metricsAddr := fs.String("metrics-addr", env("SDKPP_METRICS_ADDR", ""),
		"listen address of the Prometheus metrics, served at /metrics (empty: no metrics)")
	heartbeat := fs.Duration("node-heartbeat", envDuration("SDKPP_NODE_HEARTBEAT", server.DefaultNodeHeartbeat),
		"how often the node writes its row of the node registry (the console's cluster page)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("unexpected arguments %q", fs.Args())
	}

	var level slog.Level
	if err := level.UnmarshalText([]byte(*logLevel)); err != nil {
		return fmt.Errorf("-log-level: %v", err)
	}
	hopts := &slog.HandlerOptions{Level: level}
	var logger *slog.Logger
	switch *logFormat {
	case "text":
		logger = slog.New(slog.NewTextHandler(logOut, hopts))
	case "json":
		logger = slog.New(slog.NewJSONHandler(logOut, hopts))
	default:
		return fmt.Errorf("-log-format %q: want text or json", *logFormat)
	}

	clk, stopClock, err := clock.Parse(*clockSpec)
	if err != nil {
		return err
	}
	defer stopClock()

	cfg := server.Config{Addr: *addr, PublicURL: *publicURL, DataDir: *dataDir, Store: *storeURL, NodeID: *nodeID,
		Bus: *busURL, Dev: *dev, DevCredentialsFile: *creds,
		Clock: clk, Logger: logger, WebhookURL: *webhookURL, WebhookBackoff: webhook.Backoff{Base: *retry},
		OIDCAllowLoopbackForTests: *loopback, VoiceAddr: *voiceAddr, VoiceEndpoint: *voiceEndpoint,
		MetricsAddr: *metricsAddr, NodeHeartbeat: *heartbeat}
	if *caFile != "" {
		client, err := clientTrusting(*caFile)
		if err != nil {
			return err
		}
		cfg.OIDCHTTPClient = client
	}
	if *loopback {
		logger.Warn("OIDC issuers on loopback are accepted: a test setting, never for production")
	}

	srv, err := server.New(cfg)
	if err != nil {
		return err
	}
	if err := srv.Start(); err != nil {
		srv.Close()
		return err
	}
	if u := srv.MetricsURL(); u != "" {
		logger.Info("metrics served", "url", u)
	}
	select {
	case <-ctx.Done():
		logger.Info("shutting down")
	case err := <-srv.Failed():
		// The server logged why (its node id is another node's now).
		srv.Close()
		return err
	}
	return srv.Close()
}

func envInt(name string, def int) int {
	if n, err := strconv.Atoi(os.Getenv(name)); err == nil {
		return n
	}
	return def
}

func envDuration(name string, def time.Duration) time.Duration {
	if d, err := time.ParseDuration(os.Getenv(name)); err == nil {
		return d
	}
	return def
}

// clientTrusting returns an HTTP client trusting the system roots plus the CA in file.
func clientTrusting(file string) (*http.Client, error) {
	pem, err := os.ReadFile(file)
	if err != nil {
		return nil, fmt.Errorf("-oidc-ca-file: %w", err)
	}
	pool, err := x509.SystemCertPool()
	if err != nil || pool == nil {
		pool = x509.NewCertPool()
	}
	if !pool.AppendCertsFromPEM(pem) {
		return nil, errors.New("-oidc-ca-file: no PEM certificate in " + strings.TrimSpace(file))
	}
	tr := http.DefaultTransport.(*http.Transport).Clone()
	tr.TLSClientConfig = &tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS12}
	return &http.Client{Transport: tr, Timeout: 10 * time.Second}, nil
}
