#!/usr/bin/env bash
# make cluster: a three-node sdkpp cluster on this machine, as a studio runs one on several:
# PostgreSQL (Debian's postgresql, build/scripts/pg.sh, data under build/cluster/pg), a NATS
# server with JetStream (Debian's nats-server, data under build/cluster/nats), three
# sdkpp-server nodes sharing both, and HAProxy (Debian's) in front of them for HTTP and the
# gateway, sending players only to nodes whose /readyz answers 200. Everything listens on
# 127.0.0.1; it prints the URLs and stops everything on Ctrl-C.
# Usage: build/scripts/cluster.sh BIN_DIR [PORT]   (PORT: the balancer's, default 7710; the
#        nodes take PORT+1..PORT+3, their Prometheus metrics PORT+11..PORT+13, NATS 4222,
#        PostgreSQL 5433)
# With SDKPP_CLUSTER_NODE_URLS=1 each node names itself, not the balancer, in the URLs it gives
# (its gateway, its consent pages): a client that starts on a node stays there (make demo
# CLUSTER=1 puts each player on a different node that way).
set -euo pipefail
bin=$1
port=${2:-7710}
root=build/cluster
mkdir -p "$root"
root=$(cd "$root" && pwd)
pgport=${SDKPP_CLUSTER_PG_PORT:-5433}
natsport=${SDKPP_CLUSTER_NATS_PORT:-4222}
pids=()

stop() {
  trap - INT TERM EXIT
  echo "cluster: stopping"
  for p in "${pids[@]}"; do kill -TERM "$p" 2>/dev/null || true; done
  for p in "${pids[@]}"; do wait "$p" 2>/dev/null || true; done
  build/scripts/pg.sh stop "$root/pg" || true
  echo "cluster: stopped"
}
trap stop INT TERM EXIT

wait_ready() { # URL WHAT
  for _ in $(seq 1 300); do
    curl -fsS -o /dev/null "$1" 2>/dev/null && return 0
    sleep 0.1
  done
  echo "cluster: $2 did not become ready ($1)" >&2
  exit 1
}

build/scripts/pg.sh start "$root/pg" "$pgport"
store="postgres://postgres@127.0.0.1:$pgport/postgres?sslmode=disable"
echo "cluster: PostgreSQL on 127.0.0.1:$pgport"

mkdir -p "$root/nats"
nats-server -a 127.0.0.1 -p "$natsport" -js -sd "$root/nats" >"$root/nats.log" 2>&1 &
pids+=($!)
for _ in $(seq 1 100); do (echo >"/dev/tcp/127.0.0.1/$natsport") 2>/dev/null && break; sleep 0.1; done
echo "cluster: NATS (JetStream) on 127.0.0.1:$natsport"

servers=""
for n in 1 2 3; do
  p=$((port + n))
  public="http://127.0.0.1:$port"
  [ "${SDKPP_CLUSTER_NODE_URLS:-}" = 1 ] && public="http://127.0.0.1:$p"
  "$bin/sdkpp-server" -dev -addr "127.0.0.1:$p" -public-url "$public" -store "$store" \
    -bus "nats://127.0.0.1:$natsport" -node-id "$n" -dev-credentials "$root/credentials.json" \
    -metrics-addr "127.0.0.1:$((port + 10 + n))" \
    >"$root/node$n.log" 2>&1 &
  pids+=($!)
  # One after the other: the first seeds the dev data the others find.
  wait_ready "http://127.0.0.1:$p/readyz" "node $n"
  echo "cluster: node $n on 127.0.0.1:$p (log $root/node$n.log)"
  servers+="    server node$n 127.0.0.1:$p check"$'\n'
done

cat >"$root/haproxy.cfg" <<CFG
global
    # A process may hold at most 20,000 files here; each proxied connection takes two.
    maxconn 9000
defaults
    mode http
    timeout connect 5s
    timeout client 60s
    timeout server 60s
    # A gateway connection is a WebSocket: once upgraded it lives as long as the player plays.
    timeout tunnel 1h
frontend sdkpp
    bind 127.0.0.1:$port
    default_backend nodes
backend nodes
    balance roundrobin
    option httpchk GET /readyz
    http-check expect status 200
    default-server inter 1s fall 2 rise 1
$servers
CFG
haproxy -f "$root/haproxy.cfg" -db >"$root/haproxy.log" 2>&1 &
pids+=($!)
wait_ready "http://127.0.0.1:$port/readyz" "HAProxy"

cat <<MSG

cluster ready:
  service (through HAProxy)  http://127.0.0.1:$port       API http://127.0.0.1:$port/api/v10
  gateway                    ws://127.0.0.1:$port/gateway
  nodes                      http://127.0.0.1:$((port + 1)) .. $((port + 3))  (/readyz on each)
  metrics (Prometheus)       http://127.0.0.1:$((port + 11))/metrics .. http://127.0.0.1:$((port + 13))/metrics
  operator console           http://127.0.0.1:$port/console  (its Cluster page lists the three nodes;
                             add an operator: $bin/sdkpp-server operator add -store '$store' -username NAME -role admin,
                             the password on standard input)
  dev credentials            $root/credentials.json
Ctrl-C stops everything.
MSG
wait "${pids[@]}"
