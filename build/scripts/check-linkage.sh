#!/usr/bin/env bash
# Checks shared libraries built from sdkpp: each may need at run time only the C runtime (libc,
# libm, libpthread, libdl, the dynamic loader; KERNEL32 and msvcrt for a DLL), so no libopus or
# libspeexdsp, and its dynamic symbol table (a DLL's export table) may hold no ma_ (miniaudio),
# opus_ or speex_ names.
# Usage: build/scripts/check-linkage.sh LIB.so|LIB.dll...
set -euo pipefail
allowed='^(linux-vdso\.so\.1|libc\.so\.6|libm\.so\.6|libpthread\.so\.0|libdl\.so\.2|/lib64/ld-linux-x86-64\.so\.2)$'
status=0
check_dll() {
  local lib=$1 dump imports extra leaked
  dump=$(x86_64-w64-mingw32-objdump -p "$lib")
  imports=$(awk '/DLL Name:/ {print $3}' <<<"$dump")
  extra=$(grep -Eiv '^(KERNEL32|msvcrt)\.dll$' <<<"$imports" || true)
  if [ -n "$extra" ]; then
    echo "check-linkage: $lib imports more than the C runtime: $(echo $extra)" >&2
    status=1
  fi
  leaked=$(sed -n '/\[Ordinal\/Name Pointer\] Table/,/^$/p' <<<"$dump" | awk '{print $NF}' \
    | grep -E '^(ma_|opus_|speex_)' || true)
  if [ -n "$leaked" ]; then
    echo "check-linkage: $lib exports ma_/opus_/speex_ names, e.g. $(head -3 <<<"$leaked" | tr '\n' ' ')" >&2
    status=1
  fi
  echo "check-linkage: $lib: imports $(echo $imports | tr ' ' ',')"
}

for lib in "$@"; do
  case $lib in *.dll) check_dll "$lib"; continue ;; esac
  needed=$(ldd "$lib" | awk '{print $1}')
  extra=$(grep -Ev "$allowed" <<<"$needed" || true)
  if [ -n "$extra" ]; then
    echo "check-linkage: $lib needs more than the C runtime: $(echo $extra)" >&2
    status=1
  fi
  leaked=$(nm -D "$lib" | awk '{print $NF}' | grep -E '^(ma_|opus_|speex_)' || true)
  if [ -n "$leaked" ]; then
    echo "check-linkage: $lib has $(wc -l <<<"$leaked") ma_/opus_/speex_ dynamic symbols, e.g. $(head -3 <<<"$leaked" | tr '\n' ' ')" >&2
    status=1
  fi
  exported=$(nm -D --defined-only "$lib" | awk '$2 ~ /^[A-Z]$/ {print $3}' | grep -cv '^Sdkpp_\|^SDKPP_' || true)
  echo "check-linkage: $lib: needs $(echo $needed | tr ' ' ','); exports $(nm -D --defined-only "$lib" | grep -c ' Sdkpp_') Sdkpp_ functions and $exported other symbols"
done
exit $status
