#!/usr/bin/env bash
# A private PostgreSQL for tests and local runs: Debian's postgresql package, its data in DIR,
# listening on 127.0.0.1:PORT and on a socket in DIR, trust authentication (loopback only).
# PostgreSQL refuses to run as root: as root it runs as the postgres user the package creates.
# When that user cannot reach DIR (a checkout under a private home), the cluster lives in a
# private directory under /tmp instead, which DIR/location names, and stop removes.
# Usage: build/scripts/pg.sh start DIR PORT   (creates the cluster when DIR has none)
#        build/scripts/pg.sh stop DIR
#        build/scripts/pg.sh bindir             (prints where Debian's server binaries are)
#        build/scripts/pg.sh run DIR CMD...     (starts one on a free port, runs CMD with
#                                                SDKPP_TEST_POSTGRES set to its admin URL over TCP and
#                                                SDKPP_TEST_POSTGRES_SOCKET to the same over its Unix
#                                                socket, stops it)
set -euo pipefail

bindir() {
  local d
  d=$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -n 1)
  [ -n "$d" ] && [ -x "$d/pg_ctl" ] || { echo "pg.sh: PostgreSQL server binaries not found (apt-get install postgresql)" >&2; exit 1; }
  echo "$d"
}

as_owner() {
  if [ "$(id -u)" = 0 ]; then
    runuser -u postgres -- "$@"
  else
    "$@"
  fi
}

cmd=${1:-}
case "$cmd" in
  bindir) bindir ;;
  start)
    dir=$2 port=$3
    bin=$(bindir)
    mkdir -p "$dir"
    dir=$(cd "$dir" && pwd)
    if [ -f "$dir/location" ]; then
      dir=$(cat "$dir/location")
    elif [ "$(id -u)" = 0 ]; then
      chown postgres: "$dir" && chmod 700 "$dir"
      if ! runuser -u postgres -- test -w "$dir"; then
        real=$(mktemp -d /tmp/sdkpp-pg.XXXXXX)
        chown postgres: "$real"
        echo "$real" >"$dir/location"
        dir=$real
      fi
    fi
    if [ ! -f "$dir/data/PG_VERSION" ]; then
      as_owner "$bin/initdb" -D "$dir/data" -U postgres --auth=trust -E UTF8 --locale=C.UTF-8 >"$dir/initdb.log" 2>&1 ||
        { cat "$dir/initdb.log" >&2; exit 1; }
    fi
    # fsync off: test data need not survive a power loss, and it spares the shared disk.
    as_owner "$bin/pg_ctl" -D "$dir/data" -l "$dir/server.log" -w -t 60 start \
      -o "-c listen_addresses=127.0.0.1 -p $port -k $dir -c fsync=off -c synchronous_commit=off -c full_page_writes=off -c max_connections=200" >/dev/null ||
      { cat "$dir/server.log" >&2; exit 1; }
    ;;
  stop)
    dir=$2
    bin=$(bindir)
    real=$dir
    [ -f "$dir/location" ] && real=$(cat "$dir/location")
    if [ -f "$real/data/postmaster.pid" ]; then
      as_owner "$bin/pg_ctl" -D "$real/data" -m fast -w stop >/dev/null
    fi
    [ "$real" != "$dir" ] && rm -rf "$real"
    exit 0
    ;;
  run)
    dir=$2
    shift 2
    mkdir -p "$dir"
    # A port below Linux's ephemeral range (32768 and up), which no outgoing connection takes
    # as its own end: a port nothing listens on may still be one (bind then fails), so a start
    # that fails is tried again on another port.
    port=
    for try in $(seq 1 20); do
      p=$((20000 + RANDOM % 12000))
      (echo >"/dev/tcp/127.0.0.1/$p") 2>/dev/null && continue
      if "$0" start "$dir" "$p" 2>"$dir/start.err"; then
        port=$p
        break
      fi
    done
    [ -n "$port" ] || { cat "$dir/start.err" >&2; echo "pg.sh: no free port" >&2; exit 1; }
    trap '"$0" stop "$dir"' EXIT
    sock=$(cd "$dir" && pwd)
    [ -f "$sock/location" ] && sock=$(cat "$sock/location")
    SDKPP_TEST_POSTGRES="postgres://postgres@127.0.0.1:$port/postgres?sslmode=disable" \
      SDKPP_TEST_POSTGRES_SOCKET="postgres://postgres@/postgres?host=$sock&port=$port&sslmode=disable" "$@"
    ;;
  *) echo "usage: $0 start DIR PORT | stop DIR | run DIR CMD... | bindir" >&2; exit 2 ;;
esac
