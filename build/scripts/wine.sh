#!/usr/bin/env bash
# Runs a Windows program under Wine, headless, in the project's own Wine prefix.
# Usage: build/scripts/wine.sh PROGRAM.exe [ARGS...]
#        build/scripts/wine.sh wineserver [ARGS...]   (the prefix's wineserver, e.g. -w or -k)
# The prefix is build/wine/prefix (SDKPP_WINEPREFIX overrides it), never the user's ~/.wine.
# Debian 12's wine64 package puts no wine command on the PATH: its loader is found with dpkg.
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
export WINEPREFIX=${SDKPP_WINEPREFIX:-$root/build/wine/prefix}
# Quiet, but for a program or library that cannot be loaded: a phase that exits at once with no
# output of its own then says why on stderr (the e2e harness prints a failed program's stderr).
export WINEDEBUG=-all,err+module
# No Mono or Gecko: nothing here needs them, and wineboot would offer to download them.
export WINEDLLOVERRIDES="mscoree,mshtml="
wine=$(command -v wine64 || dpkg -L wine64 2>/dev/null | grep '/wine64$' | head -n1 || true)
[ -x "$wine" ] || { echo "wine.sh: no wine64 loader (build/scripts/deps.sh wine installs it)" >&2; exit 1; }
if [ "${1:-}" = wineserver ]; then
  shift
  exec "$(dirname "$wine")/wineserver" "$@"
fi
exec "$wine" "$@"
