#!/usr/bin/env bash
# The README's main-job command: installs what is missing, builds, fetches the
# default kernel and runs every guest suite on it, printing the results table.
#   ci/main.sh [KERNEL]    (default debian-6.12; JUnit XML in build/tracebed-main.xml)
set -euo pipefail
cd "$(dirname "$0")/.."
kernel="${1:-debian-6.12}"

ci/install-deps.sh
jobs=$(nproc)
cmake --preset default >/dev/null
cmake --build --preset default -j"$jobs"

build/tracebed kernels fetch "$kernel"
build/tracebed kernels info "$kernel" | sed -n 1,3p
build/tracebed test --kernel "$kernel" --junit build/tracebed-main.xml
