#!/usr/bin/env bash
# Remakes the speech fixtures in testdata/ (run by `go generate ./audio/internal/speech`).
# espeak-ng speaks each sentence at its native 22.05 kHz; sox converts it to the engine's format,
# 48 kHz mono signed 16-bit, 3 dB below full scale, without dither so that the output is
# reproducible. Needs Debian packages espeak-ng and sox.
set -euo pipefail
cd "$(dirname "$0")"
for tool in espeak-ng sox; do
  command -v "$tool" >/dev/null || { echo "gen.sh: $tool not found (build/scripts/deps.sh test installs it)" >&2; exit 1; }
done
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# name|voice|sentence: Harvard sentences, three different voices for multi-party tests.
while IFS='|' read -r name voice text; do
  espeak-ng -v "$voice" -s 160 -w "$tmp/$name.wav" "$text"
  sox -D "$tmp/$name.wav" -r 48000 -c 1 -b 16 -e signed-integer "testdata/$name.wav" gain -3
done <<'LIST'
alice|en-us+f3|The birch canoe slid on the smooth planks. Glue the sheet to the dark blue background.
bob|en-gb|It's easy to tell the depth of a well. These days a chicken leg is a rare dish.
carol|en-us+m4|Rice is often served in round bowls. The juice of lemons makes fine punch.
LIST
