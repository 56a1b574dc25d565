#!/usr/bin/env bash
# vtest.sh LOG COMMAND...: runs a verbose test command with its output shown and kept in LOG;
# when it fails, it prints the failures again at the end, where a log's tail (as CI shows it) will
# have them: testify's messages, the sample programs' FAIL lines and the failing tests' names.
set -uo pipefail
log=$1
shift
mkdir -p "$(dirname "$log")"
"$@" 2>&1 | tee "$log"
rc=${PIPESTATUS[0]}
if [ "$rc" -ne 0 ]; then
	echo "== the failures of the run above (whole output in $log) =="
	grep -n -E -A12 '^\s+Error Trace:' "$log" | grep -v -E '^[0-9]+-\s+Test:' | head -120
	grep -n -E '^\s+(FAIL |[0-9]+ passed, [1-9][0-9]* failed)|^\s*--- FAIL|^panic:|timed out' "$log" | head -60
fi
exit "$rc"
