#!/usr/bin/env bash
# Builds the C libraries that audio/ links statically into the SDK (libopus for audio/codec,
# libspeexdsp for audio/apm) from Debian's source packages, as static position-independent archives:
#
#   build/clibs/TARGET/include   headers
#   build/clibs/TARGET/lib       libopus.a, libspeexdsp.a (no shared objects)
#   build/clibs/TARGET/lib/pkgconfig   opus.pc, speexdsp.pc (relocatable: prefix=${pcfiledir}/../..)
#
# Usage: build/scripts/clibs.sh linux-amd64|windows-amd64
#        build/scripts/clibs.sh --env TARGET   builds if needed, then prints the environment
#                                             (KEY=VALUE lines) that makes cgo use these archives
#
# A stamp file (build/clibs/TARGET/stamp) records a key made of this script and the source
# versions; when it matches, a rerun does nothing. The sources are fetched once into
# build/clibs/src. Missing build tools are installed with apt-get, as deps.sh does.
set -euo pipefail

print_env=0
if [ "${1:-}" = --env ]; then print_env=1; shift; fi
target=${1:?usage: clibs.sh [--env] linux-amd64|windows-amd64}
root=$(cd "$(dirname "$0")/../.." && pwd)
base=$root/build/clibs
out=$base/$target
src=$base/src
stamp=$out/stamp

case $target in
  linux-amd64)
    host_args=()
    cc=gcc
    cflags="-O2 -fPIC"
    ;;
  windows-amd64)
    # Without these mingw builds reference __memcpy_chk and friends, which msvcrt lacks.
    host_args=(--host=x86_64-w64-mingw32 --disable-stack-protector)
    cc=x86_64-w64-mingw32-gcc-posix
    cflags="-O2 -U_FORTIFY_SOURCE -D_FORTIFY_SOURCE=0"
    ;;
  *) echo "clibs: unknown target $target (linux-amd64 or windows-amd64)" >&2; exit 2 ;;
esac

# The key changes when this script (flags, versions) changes. The Makefile computes the same key
# and puts it into CGO_CFLAGS, which Go's build cache tracks.
key="$(sha256sum "$0" | cut -c1-16)"

emit_env() {
  # PKG_CONFIG_LIBDIR replaces pkg-config's default search path, so no system opus.pc or
  # speexdsp.pc can be found. Go's build cache does not track the pkg-config environment but
  # does track CGO_LDFLAGS and CGO_CFLAGS; naming the archives (and the stamp key) there gives
  # every build linked against them a cache key of its own.
  echo "PKG_CONFIG_LIBDIR=$out/lib/pkgconfig"
  echo "PKG_CONFIG_PATH="
  echo "CGO_CFLAGS=-O2 -g -I$out/include -DSDKPP_CLIBS=$(cat "$stamp")"
  echo "CGO_LDFLAGS=$out/lib/libopus.a $out/lib/libspeexdsp.a -lm"
}

if [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$key" ] \
  && [ -f "$out/lib/libopus.a" ] && [ -f "$out/lib/libspeexdsp.a" ]; then
  [ $print_env = 1 ] && emit_env
  exit 0
fi
exec 3>&1
[ $print_env = 1 ] && exec 1>&2  # progress to stderr; stdout carries only the environment

start=$(date +%s)
have() { command -v "$1" >/dev/null 2>&1; }
need=()
have dpkg-source || need+=(dpkg-dev)
have make || need+=(make)
have gcc || need+=(gcc)
have pkg-config || need+=(pkg-config)
[ "$target" = windows-amd64 ] && { have "$cc" || need+=(gcc-mingw-w64-x86-64-posix); }
sudo=""
if [ "$(id -u)" != 0 ]; then sudo=sudo; fi
apt_get() { $sudo env DEBIAN_FRONTEND=noninteractive apt-get -o DPkg::Lock::Timeout=600 "$@"; }
if [ ${#need[@]} -gt 0 ]; then
  echo "clibs: installing ${need[*]}"
  apt_get update -qq
  apt_get install -y -qq --no-install-recommends "${need[@]}" >/dev/null
fi

# Debian's source packages. apt-get source needs deb-src entries: derive them from the machine's
# deb822 sources for the Debian archive (same URIs, suites, components and keys).
fetch_sources() {
  mkdir -p "$src"
  if [ -d "$src/opus" ] && [ -d "$src/speexdsp" ]; then return; fi
  if ! apt-get source --print-uris opus >/dev/null 2>&1; then
    local list=/etc/apt/sources.list.d/sdkpp-deb-src.sources
    echo "clibs: adding deb-src entries to $list"
    local tmp
    tmp=$(mktemp)
    for f in /etc/apt/sources.list.d/*.sources; do
      [ -f "$f" ] || continue
      # One paragraph per stanza; keep those of the Debian archive that are binary-only.
      awk -v RS= -v ORS='\n\n' '/(^|\n)Types:[^\n]*deb/ && !/deb-src/ && /(debian-archive-keyring|\/debian(-security)?\/?(\n|$))/' "$f" \
        | sed -e 's/^Types:.*/Types: deb-src/' >>"$tmp"
    done
    [ -s "$tmp" ] || { echo "clibs: no Debian deb822 sources to derive deb-src entries from" >&2; exit 1; }
    $sudo install -m 644 "$tmp" "$list"
    rm -f "$tmp"
    apt_get update -qq
  fi
  (
    cd "$src"
    rm -rf opus speexdsp opus-* speexdsp-* ./*.dsc ./*.tar.* ./*.diff.gz
    apt-get source -qq opus speexdsp 2>&1 | grep -v -e 'unsandboxed' -e '^dpkg-source: info' || true
    mv "$(find . -maxdepth 1 -type d -name 'opus-*' | head -1)" opus
    mv "$(find . -maxdepth 1 -type d -name 'speexdsp-*' | head -1)" speexdsp
  )
}
fetch_sources

# Build each library out of tree, in a directory per target, and install into $out.
rm -rf "$out"
mkdir -p "$out"
build_one() {
  local name=$1; shift
  local dir=$base/obj/$target/$name
  rm -rf "$dir"
  mkdir -p "$dir"
  (
    cd "$dir"
    if [ ! -x "$src/$name/configure" ]; then
      echo "clibs: $name has no configure script in its source package" >&2; exit 1
    fi
    CC=$cc CFLAGS="$cflags" "$src/$name/configure" --prefix="$out" --enable-static --disable-shared \
      --with-pic "${host_args[@]}" "$@" >configure.log 2>&1 \
      || { tail -30 configure.log >&2; exit 1; }
    make -j"$(nproc)" >make.log 2>&1 || { tail -30 make.log >&2; exit 1; }
    make install >install.log 2>&1 || { tail -30 install.log >&2; exit 1; }
  )
}
build_one opus --disable-doc --disable-extra-programs
# DISABLE_WARNINGS: speexdsp would otherwise print to stderr from inside the audio path.
cflags="$cflags -DDISABLE_WARNINGS" build_one speexdsp --disable-examples

# Only the static archives stay: nothing can link a shared copy by accident.
rm -f "$out"/lib/*.so* "$out"/lib/*.la "$out"/lib/*.dll* "$out"/bin/*.dll 2>/dev/null || true
rm -rf "$out/share" "$out/bin"
# Relocatable pkg-config files.
sed -i -e 's|^prefix=.*|prefix=${pcfiledir}/../..|' "$out"/lib/pkgconfig/*.pc
echo "$key" >"$stamp"
echo "clibs: built $target in $(( $(date +%s) - start )) s: $(cd "$out" && ls lib/*.a | tr '\n' ' ')"
if [ $print_env = 1 ]; then exec 1>&3; emit_env; fi
