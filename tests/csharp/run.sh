#!/usr/bin/env bash
# Builds and runs the C# binding tests with Mono against build/libsdkpp.so.
#
#   go run ./build/gen && go build -buildmode=c-shared -o build/libsdkpp.so ./capi
#   go build -o build/sdkpp-desktop ./cmd/sdkpp-desktop
#   bash tests/csharp/run.sh
#
# It compiles, into build/test/csharp/:
#   Sdkpp.dll                  the binding (bindings/csharp/*.cs), XML docs on, warnings are errors
#   SdkppTests.exe             tests/csharp/*.cs, against Sdkpp.dll like a game would use it
#   abi-mismatch/Sdkpp.dll     the binding with a wrong SDKPP_ABI_VERSION, next to a copy of the tests
# and runs four processes (a failed ABI check poisons the library for the rest of its process):
#   SdkppTests.exe                          the main tests
#   SdkppTests.exe stress                   threads, callbacks, GCs and finalizers at once, GOGC=5
#   SdkppTests.exe play-mode                Sdk.Shutdown between two rounds, as across a domain reload
#   SdkppTests.exe abi-refuse               Sdkpp_CheckAbi refuses a wrong Sdkpp_AbiInfo
#   abi-mismatch/SdkppTests.exe abi-binding-mismatch
#                                           the binding throws SdkppAbiException
# The last line is "N passed, M failed" over all three; the exit status is non-zero on any failure.
# Library messages (stderr) go to build/test/csharp/*.stderr and are printed when a run fails.
# SDKPP_TEST_FILTER=a|b runs only the main tests whose names contain a or b.
# SDKPP_CSHARP_PACKAGE=DIR runs them against an unpacked NuGet package instead (make test-csharp
# does, with build/dist's): its lib/netstandard2.0/Sdkpp.dll is the binding and its
# runtimes/linux-x64/native/libsdkpp.so the library.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(cd "$here/../.." && pwd)"
out="$root/build/test/csharp"
lib="$root/build/libsdkpp.so"
package="${SDKPP_CSHARP_PACKAGE:-}"
if [ -n "$package" ]; then
    lib="$package/runtimes/linux-x64/native/libsdkpp.so"
fi

if [ ! -f "$lib" ]; then
    echo "run.sh: $lib is missing; build it first: go build -buildmode=c-shared -o build/libsdkpp.so ./capi" >&2
    exit 2
fi
for tool in mcs mono; do
    command -v "$tool" >/dev/null || { echo "run.sh: $tool is not installed (apt-get install mono-mcs mono-runtime)" >&2; exit 2; }
done

rm -rf "$out"
mkdir -p "$out/abi-mismatch"

mcsflags=(-langversion:7 -debug -nologo -warn:4)

# The binding as its own assembly: it must compile standalone, with a doc comment on every public
# member (CS1591 is an error here). The package's was compiled so by make dist.
if [ -n "$package" ]; then
    cp "$package/lib/netstandard2.0/Sdkpp.dll" "$package/lib/netstandard2.0/Sdkpp.xml" "$out/"
    echo "run.sh: the binding and the library of the package in $package"
else
    mcs "${mcsflags[@]}" -target:library -warnaserror+ -doc:"$out/Sdkpp.xml" \
        -out:"$out/Sdkpp.dll" "$root"/bindings/csharp/*.cs
fi

mcs "${mcsflags[@]}" -target:exe -r:"$out/Sdkpp.dll" -out:"$out/SdkppTests.exe" "$here"/*.cs

# The same binding with a wrong ABI fingerprint.
sed -E 's/(internal const uint AbiVersion = )[0-9]+u;/\11u;/' "$root/bindings/csharp/Sdkpp.g.cs" \
    >"$out/abi-mismatch/Sdkpp.g.cs"
if ! grep -q 'internal const uint AbiVersion = 1u;' "$out/abi-mismatch/Sdkpp.g.cs"; then
    echo "run.sh: could not find the AbiVersion constant in bindings/csharp/Sdkpp.g.cs" >&2
    exit 2
fi
others=()
for f in "$root"/bindings/csharp/*.cs; do
    [ "$(basename "$f")" = Sdkpp.g.cs ] || others+=("$f")
done
mcs "${mcsflags[@]}" -target:library -out:"$out/abi-mismatch/Sdkpp.dll" \
    "$out/abi-mismatch/Sdkpp.g.cs" "${others[@]}"
cp "$out/SdkppTests.exe" "$out/abi-mismatch/"

export LD_LIBRARY_PATH="$(dirname "$lib")${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
# The voice settings test starts the stand-in desktop client; the tests look for desktop clients in
# a socket directory of their own, where no other program's is found.
export SDKPP_DESKTOP="$root/build/sdkpp-desktop"
if [ ! -x "$SDKPP_DESKTOP" ]; then
    echo "run.sh: $SDKPP_DESKTOP is missing; build it first: make build/sdkpp-desktop" >&2
    exit 2
fi
mkdir -p "$out/ipc"
export XDG_RUNTIME_DIR="$out/ipc"

total_passed=0
total_failed=0
status=0
run() { # name exe [mode]
    local name="$1" exe="$2"
    shift 2
    echo "== $name"
    local rc=0
    (cd "$(dirname "$exe")" && timeout 300 mono --debug "$(basename "$exe")" "$@") \
        2>"$out/$name.stderr" | tee "$out/$name.stdout" || rc=$?
    local last
    last="$(tail -n 1 "$out/$name.stdout")"
    if [[ "$last" =~ ^([0-9]+)\ passed,\ ([0-9]+)\ failed$ ]]; then
        total_passed=$((total_passed + BASH_REMATCH[1]))
        total_failed=$((total_failed + BASH_REMATCH[2]))
    else
        echo "run.sh: $name did not finish (exit status $rc)"
        total_failed=$((total_failed + 1))
    fi
    if [ "$rc" -ne 0 ]; then
        status=1
        echo "-- $name stderr:"
        tail -n 60 "$out/$name.stderr"
    fi
}

run main "$out/SdkppTests.exe"
GOGC=5 run stress "$out/SdkppTests.exe" stress
run play-mode "$out/SdkppTests.exe" play-mode
run abi-refuse "$out/SdkppTests.exe" abi-refuse
run abi-binding-mismatch "$out/abi-mismatch/SdkppTests.exe" abi-binding-mismatch

echo "$total_passed passed, $total_failed failed"
if [ "$status" -ne 0 ] || [ "$total_failed" -ne 0 ]; then
    exit 1
fi
