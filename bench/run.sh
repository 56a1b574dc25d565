#!/usr/bin/env bash
# make bench: every figure is printed beside an anchor measured in the same run.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
out=$root/build/bench
mkdir -p "$out"
cd "$root"

echo "== building the benchmark variant of the library (adds the bare no-op anchor) =="
# -tags replaces the Makefile's GOFLAGS tags: repeat nolibopusfile (see the Makefile).
CGO_ENABLED=1 go build -tags sdkppbench,nolibopusfile -buildmode=c-shared -o "$out/libsdkpp.so" ./capi
cc -std=c11 -D_POSIX_C_SOURCE=200809L -O2 -Iinclude bench/cabi_bench.c -o "$out/cabi_bench" -L"$out" -lsdkpp -Wl,-rpath,"$out"
"$out/cabi_bench"

echo
echo "== Go micro-benchmarks of the pieces behind each call =="
go test -run '^$' -bench . -benchtime 200000x ./capi/internal/handle ./core/callbacks | grep -E '^Benchmark'

echo
echo "== audio: Opus (audio/codec) and speexdsp (audio/apm) per frame, against a 20 ms frame's real time =="
go test -run '^$' -bench . -benchtime 500x ./audio/codec ./audio/apm | grep -E '^Benchmark'

echo
echo "== audio/engine: one 8-party processing step against bare libopus (1 encode, 7 decodes); target <= 1.5x =="
echo "(the step as issue 13 bounds it: encode, jitter buffers, decodes, mixer; then the same with echo"
echo " cancellation, noise suppression and gain control on, as the engine starts. They take turns with"
echo " the anchor, three times; each ratio is of the fastest turns, as the machine is shared)"
go test -c -o "$out/engine.test" ./audio/engine
for turn in 1 2 3; do
	"$out/engine.test" -test.run '^$' -test.bench 'EightParty' -test.benchtime 1000x | grep -E '^Benchmark'
done | awk '{print}
	$1 ~ /^BenchmarkEightPartyMix-/ && (!m || $3 < m) {m=$3}
	$1 ~ /^BenchmarkEightPartyMixProcessed-/ && (!p || $3 < p) {p=$3}
	$1 ~ /^BenchmarkBareOpusEightParty-/ && (!o || $3 < o) {o=$3}
	END {
		if (m && o) printf "ratio engine/bare-opus: %.2fx (fastest turns: %d ns against %d ns)\n", m/o, m, o
		if (p && o) printf "with the input processing on: %.2fx (%d ns; speexdsp adds %d ns per frame)\n", p/o, p, p-m
	}'

echo "== account linking on loopback, on SQLite (a data directory) and on PostgreSQL (a private server) =="
echo "(the token endpoint beside the bare anchor and beside its floor: a bare handler that only commits each"
echo " token's row before answering, on the same store, per request or by group commit, the faster as the floor)"
go build -o "$out/auth" ./bench/auth
"$out/auth"
build/scripts/pg.sh run "$out/pg" bash -c '"$0" -store "$SDKPP_TEST_POSTGRES"' "$out/auth"

echo
echo "== guild messages: a page of 100 against a page of 1, in turns, medians (target <= 3x) =="
go test -c -o "$out/messages.test" ./server/messages
echo "SQLite (a data directory):"
"$out/messages.test" -test.run '^$' -test.bench MessagePage -test.benchtime 300x | grep -E '^Benchmark'
echo "PostgreSQL:"
SDKPP_TEST_STORE=postgres build/scripts/pg.sh run "$out/pg" "$out/messages.test" -test.run '^$' -test.bench MessagePage -test.benchtime 300x | grep -E '^Benchmark'

echo
echo "== realtime: lobby messages and idle gateway connections, against Redis and a bare WebSocket server =="
echo "(beyond one machine, (d), the latencies are printed beside their floors: the required parts alone, one node's"
echo " on SQLite and three nodes' on PostgreSQL + NATS, in turns with sdkpp's rounds, and the cost of one hop between"
echo " processes that wait, for the arithmetic of issue 23's 2x bound)"
go build -o "$out/realtime" ./bench/realtime
"$out/realtime" -store sqlite
echo "-- a 10-member lobby (the size of most game lobbies), SQLite, with the floor (what the required parts alone cost):"
"$out/realtime" -store sqlite -members 10 -idle 0 -floor
echo "-- PostgreSQL (the idle connections do not depend on the store); its 10-member lobby with the floor on"
echo "   the same server (one commit per batch in flight, in a database of its own). The service and the"
echo "   floor reach the server, on the same machine, over its Unix socket, as a local server is reached:"
build/scripts/pg.sh run "$out/pg" bash -c '"$0" -store "$SDKPP_TEST_POSTGRES_SOCKET" -idle 0 && "$0" -store "$SDKPP_TEST_POSTGRES_SOCKET" -members 10 -idle 0 -floor' "$out/realtime"
echo "-- idle gateway connections across three nodes on PostgreSQL + NATS, 15,000 identified sessions each"
echo "   (a process may hold only so many files: the limit is raised to its hard limit, and three"
echo "   client processes hold the connections, one per node):"
(ulimit -n "$(ulimit -Hn)" && "$out/realtime" -cluster-idle 15000)

echo
echo "== voice relay: forwarding against a minimal C forwarder (recvmmsg/sendmmsg) =="
cc -std=c11 -O2 bench/relay_fwd.c -o "$out/relay_fwd"
go build -o "$out/relay" ./bench/relay
"$out/relay" -fwd "$out/relay_fwd"

echo
echo "== voice: mouth-to-ear through the relay on loopback, against the engine's own floor (in-process) =="
go build -o "$out/voice" ./bench/voice
"$out/voice"

echo
echo "== voice: a quiet call's CPU in a 60 fps game loop, against the bare loop (PulseAudio null sink) =="
echo "(the game is native: a C loop linking the library above; the bare loop is the same C loop built without it)"
cc -std=c11 -D_POSIX_C_SOURCE=200809L -O2 -Iinclude bench/quiet_game.c -o "$out/quiet_game" -L"$out" -lsdkpp -Wl,-rpath,"$out"
cc -std=c11 -D_POSIX_C_SOURCE=200809L -O2 -DQUIET_BARE bench/quiet_game.c -o "$out/quiet_bare"
go build -o "$out/quiet" ./bench/quiet
"$out/quiet" -game "$out/quiet_game" -bare "$out/quiet_bare"
