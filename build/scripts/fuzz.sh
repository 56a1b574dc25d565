#!/usr/bin/env bash
# Runs every Go fuzz target of the module (each func FuzzXxx in a _test.go file) for a while:
# go test fuzzes one target per run. A failure leaves its input in the package's
# testdata/fuzz/FuzzXxx/, where go test then runs it as a plain test; commit it with the fix.
#
# Usage: build/scripts/fuzz.sh [-keep N] [FUZZTIME] [TARGET-REGEXP]
#   FUZZTIME   how long each target runs: a duration (10s, 3m) or a count of inputs (5000x); default 3m
#   TARGET     only targets whose name matches (e.g. 'FuzzAPI|FuzzGateway')
#   -keep N    afterwards copy up to N of the smallest new inputs each target found into its
#              testdata/fuzz/FuzzXxx/ (the committed corpus), to grow the corpus on purpose
# FUZZMINIMIZETIME (default 2s) bounds the minimizing of each new input, which go test otherwise
# lets take a minute, during which the run finds nothing.
set -uo pipefail
keep=0
if [ "${1:-}" = -keep ]; then keep=$2; shift 2; fi
fuzztime=${1:-3m}
only=${2:-.}
GO=${GO:-go}
cache=$($GO env GOCACHE)/fuzz
module=$($GO list -m)

failed=()
while IFS= read -r file; do
  dir=$(dirname "$file")
  for target in $(sed -n 's/^func \(Fuzz[A-Za-z0-9_]*\)(f \*testing\.F).*/\1/p' "$file"); do
    [[ $target =~ $only ]] || continue
    echo "== $dir $target ($fuzztime)"
    # go test's fuzzing coordinator (before Go 1.27, go.dev/issue/75804) can end a time-bounded
    # run with "context deadline exceeded": at the deadline it may read the parent context's
    # error before its child's is set, and takes the normal end for a failure. That is the tool's
    # failure, not the target's (no failing input is written). On two busy cores it hit one of
    # the ~32 targets in most runs and, once, the same target twice in a row, so such a run is
    # repeated up to 4 times; any other failure counts at once.
    tries=5
    for attempt in $(seq 1 $tries); do
      log=$($GO test "./$dir" -run '^$' -fuzz "^$target\$" -fuzztime "$fuzztime" -fuzzminimizetime "${FUZZMINIMIZETIME:-2s}" 2>&1)
      status=$?
      printf '%s\n' "$log" | tail -n 25
      if [ $status -eq 0 ]; then break; fi
      if [ $attempt -lt $tries ] && grep -q 'context deadline exceeded' <<<"$log" && ! grep -q 'Failing input written' <<<"$log"; then
        echo "fuzz: $target: the fuzzing coordinator timed out without a failing input; running it again"
        continue
      fi
      failed+=("$dir $target")
      break
    done
    if [ "$keep" -gt 0 ]; then
      src=$cache/$module/${dir#./}/$target
      dst=$dir/testdata/fuzz/$target
      if [ -d "$src" ]; then
        mkdir -p "$dst"
        ls -S -r "$src" | head -n "$keep" | while read -r f; do cp -n "$src/$f" "$dst/$f"; done
      fi
    fi
  done
done < <(grep -rl --include='*_test.go' '^func Fuzz' . | sort)

if [ ${#failed[@]} -gt 0 ]; then
  printf 'fuzz: failed: %s\n' "${failed[@]}"
  exit 1
fi
echo "fuzz: every target passed"
