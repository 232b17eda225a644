#!/usr/bin/env bash
# Every unit and fuzz test under ASan/UBSan, the CLI's flag-by-fixture
# report comparisons too. The test command (ci/test.sh) leaves those 2 202
# cases (Recorded/ReportFlags.*) out of its ASan stage: each starts the
# sanitized CLI once, about 15 minutes of CI's two cores, and the code they
# run is the decoder the ASan stage's decode tests and fuzzers already
# cover; they still run unsanitized in the default stage. Run this before
# changing the report command's printing.
#   ci/asan-full.sh
set -euo pipefail
cd "$(dirname "$0")/.."
ci/install-deps.sh
cmake --preset asan >/dev/null
cmake --build --preset asan -j"$(nproc)"
ctest --preset asan -j"$(nproc)" -L 'unit|fuzz' --timeout 1200
