#!/usr/bin/env bash
# Fails if a build log holds a compiler warning in drift's own sources (engine/, actors/,
# messages/, tools/, tests/); warnings inside third-party headers are not ours to fix.
# .ci/run feeds it the output of the fresh clone's `make test`, where every file compiles.
#   tools/check-warnings.sh LOG [ROOT]   ROOT: where the compiler saw the sources (a chroot's /src)
set -euo pipefail
log="$1"
root="${2:-$(cd "$(dirname "$0")/.." && pwd)}"
if grep -E "^(${root}/)?(engine|actors|messages|tools|tests)/[^:]*:[0-9]+:[0-9]+: warning:" "$log" | sort -u; then
  echo "check-warnings: the warnings above are in drift's own code; fix them (CI allows none)"
  exit 1
fi
echo "check-warnings: no warning in drift's own code"
