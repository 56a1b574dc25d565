#!/usr/bin/env bash
# Builds the C# account-linking program of the end-to-end test (tests/e2e) with Mono:
#
#   bash tests/csharp/e2e/build.sh
#
# into build/test/e2e/:
#   Sdkpp.dll      the binding (bindings/csharp/*.cs)
#   AuthE2E.exe    tests/csharp/e2e/AuthE2E.cs, against Sdkpp.dll like a game would use it
# Run it with `mono AuthE2E.exe PHASE` and libsdkpp on LD_LIBRARY_PATH; tests/e2e does, given
# SDKPP_E2E_CSHARP=<that AuthE2E.exe>. The exit status is non-zero if anything fails to compile.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(cd "$here/../../.." && pwd)"
out="$root/build/test/e2e"

command -v mcs >/dev/null || { echo "build.sh: mcs is not installed (apt-get install mono-mcs)" >&2; exit 2; }

mkdir -p "$out"
rm -f "$out/Sdkpp.dll" "$out/Sdkpp.dll.mdb" "$out/AuthE2E.exe" "$out/AuthE2E.exe.mdb"

mcsflags=(-langversion:7 -debug -nologo -warn:4 -warnaserror+)

mcs "${mcsflags[@]}" -target:library -out:"$out/Sdkpp.dll" "$root"/bindings/csharp/*.cs
mcs "${mcsflags[@]}" -target:exe -r:"$out/Sdkpp.dll" -out:"$out/AuthE2E.exe" "$here/AuthE2E.cs"
