#!/usr/bin/env bash
# The README's test command: installs what is missing, builds, runs CTest.
#   ci/test.sh            default build (unit, vm, bench smoke), the .deb installed and run,
#                         ASan/UBSan build (unit, fuzz)
#   ci/test.sh --quick    default build only
set -euo pipefail
cd "$(dirname "$0")/.."
quick=0
[[ "${1:-}" == "--quick" ]] && quick=1

# The free space the run starts with, for reading a failure that ran out of it.
df -h . /tmp "${TMPDIR:-/tmp}" 2>/dev/null | sort -u || true
ci/install-deps.sh
jobs=$(nproc)

cmake --preset default >/dev/null
cmake --build --preset default -j"$jobs"
ctest --preset default -j"$jobs" --timeout 1200
# The .deb installs and its tracebed runs a guest suite from /usr.
ci/package-test.sh build

if ((quick == 0)); then
  cmake --preset asan >/dev/null
  cmake --build --preset asan -j"$jobs"
  ctest --preset asan -j"$jobs" -L 'unit|fuzz' --timeout 1200
fi
