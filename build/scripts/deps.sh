#!/usr/bin/env bash
# Installs the system packages the build and tests need, when they are missing.
# Usage: build/scripts/deps.sh [test|bench|demo|mono|windows|wine|dist|browser|node|postgres|cluster|all]
# bench is test plus redis-server, the anchor of the realtime benchmarks, and GStreamer, the
# voice benchmark's peer pipeline (pulsesrc/pulsesink, webrtcdsp, opus, rtp, udp). windows is the mingw
# cross-compilers; wine adds Debian's Wine to run what they build (test includes wine). node is
# Node.js and npm, which tests/bots's discord.js bot runs on (test includes node). windows also
# brings llvm (llvm-dlltool writes the MSVC import library); dist is windows plus zip and unzip
# (make dist's archives) and cmake (tests/dist builds a CMake project against them; test
# includes dist). cluster is what make cluster runs: PostgreSQL, NATS, HAProxy and curl.
set -euo pipefail
want=${1:-test}

need=()
have() { command -v "$1" >/dev/null 2>&1; }
installed() { dpkg -s "$1" >/dev/null 2>&1; }
have gcc || need+=(gcc)
have g++ || need+=(g++)
have pkg-config || need+=(pkg-config)
have make || need+=(make)
# clibs.sh fetches Debian's opus and speexdsp source packages with apt-get source (dpkg-dev).
have dpkg-source || need+=(dpkg-dev)
if [ "$want" = bench ]; then
  want=test
  have redis-server || need+=(redis-server)
  have gst-launch-1.0 || need+=(gstreamer1.0-tools)
  installed gstreamer1.0-plugins-base || need+=(gstreamer1.0-plugins-base)
  installed gstreamer1.0-plugins-good || need+=(gstreamer1.0-plugins-good)
  installed gstreamer1.0-plugins-bad || need+=(gstreamer1.0-plugins-bad)
  installed gstreamer1.0-pulseaudio || need+=(gstreamer1.0-pulseaudio)
fi
[ "$want" = all ] && { have redis-server || need+=(redis-server); }
# The demo's voice call: a private sound server, and paplay to speak into each player's microphone.
if [ "$want" = demo ]; then
  have pulseaudio || need+=(pulseaudio)
  have paplay || need+=(pulseaudio-utils)
fi
# mono: Mono's compiler and runtime, for the C# binding and its sample (test includes mono).
if [ "$want" = mono ] || [ "$want" = test ] || [ "$want" = all ]; then
  have mcs || need+=(mono-mcs)
  have mono || need+=(mono-runtime)
fi
if [ "$want" = test ] || [ "$want" = all ]; then
  # The audio tests' private sound server (pulseaudio brings pactl), and the speech fixtures'
  # generator (go generate ./audio/internal/speech).
  have pulseaudio || need+=(pulseaudio)
  have pactl || need+=(pulseaudio-utils)
  have espeak-ng || need+=(espeak-ng)
  have sox || need+=(sox)
  # tests/bots runs a bot written with discord.py under Debian's own Python.
  installed python3-discord || need+=(python3-discord)
fi
if [ "$want" = postgres ] || [ "$want" = test ] || [ "$want" = all ]; then
  # The store's conformance suite and the service's PostgreSQL tests start a private server
  # (build/scripts/pg.sh) from Debian's package.
  ls /usr/lib/postgresql/*/bin/pg_ctl >/dev/null 2>&1 || need+=(postgresql)
fi
if [ "$want" = cluster ] || [ "$want" = all ]; then
  ls /usr/lib/postgresql/*/bin/pg_ctl >/dev/null 2>&1 || need+=(postgresql)
  have nats-server || need+=(nats-server)
  have haproxy || need+=(haproxy)
  have curl || need+=(curl)
fi
if [ "$want" = node ] || [ "$want" = test ] || [ "$want" = all ]; then
  have node || need+=(nodejs)
  have npm || need+=(npm)
fi
if [ "$want" = browser ] || [ "$want" = test ] || [ "$want" = all ]; then
  have chromium || need+=(chromium)
fi
if [ "$want" = windows ] || [ "$want" = wine ] || [ "$want" = dist ] || [ "$want" = test ] || [ "$want" = all ]; then
  have x86_64-w64-mingw32-gcc-posix || need+=(gcc-mingw-w64-x86-64-posix)
  have x86_64-w64-mingw32-g++-posix || need+=(g++-mingw-w64-x86-64-posix)
  have llvm-dlltool || need+=(llvm)
fi
if [ "$want" = dist ] || [ "$want" = test ] || [ "$want" = all ]; then
  have zip || need+=(zip)
  have unzip || need+=(unzip)
  have cmake || need+=(cmake)
fi
if [ "$want" = wine ] || [ "$want" = test ] || [ "$want" = all ]; then
  # Its loader is not on the PATH (build/scripts/wine.sh finds it).
  installed wine64 || need+=(wine64)
fi
[ ${#need[@]} -eq 0 ] && exit 0

echo "deps: installing ${need[*]}"
sudo=""
if [ "$(id -u)" != 0 ]; then
  have sudo || { echo "deps: need root or sudo to install: ${need[*]}" >&2; exit 1; }
  sudo=sudo
fi
export DEBIAN_FRONTEND=noninteractive
$sudo apt-get update -qq
$sudo apt-get install -y -qq --no-install-recommends "${need[@]}" >/dev/null
