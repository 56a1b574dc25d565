#!/usr/bin/env bash
# Checks shared libraries built from sdkpp: each may need at run time only the C runtime (libc,
# libm, libpthread, libdl, the dynamic loader), so no libopus or libspeexdsp, and its dynamic
# symbol table may hold no ma_ (miniaudio), opus_ or speex_ names, defined or undefined.
# Usage: build/scripts/check-linkage.sh LIB.so...
set -euo pipefail
allowed='^(linux-vdso\.so\.1|libc\.so\.6|libm\.so\.6|libpthread\.so\.0|libdl\.so\.2|/lib64/ld-linux-x86-64\.so\.2)$'
status=0
for lib in "$@"; do
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
