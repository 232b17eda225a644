#!/usr/bin/env bash
# Every unit and fuzz test under ASan/UBSan. The test command (ci/test.sh)
# leaves 2 562 of them out of its ASan stage to fit CI's 90 minutes: the
# CLI's flag-by-fixture report comparisons (Recorded/ReportFlags.*, 2 202
# starts of the sanitized CLI, over 40 minutes of two cores) and two
# fixture cases whose sanitized variants it keeps
# (ReportGolden.MatchesTraceCmdReport beside ...WithAWriterThread,
# MergedStreamMatchesRawReport beside its Decompressing/Reading variants).
# All of them run unsanitized in the default stage. Run this before
# changing the report command's printing or the merge.
#   ci/asan-full.sh
set -euo pipefail
cd "$(dirname "$0")/.."
ci/install-deps.sh
cmake --preset asan >/dev/null
cmake --build --preset asan -j"$(nproc)"
ctest --preset asan -j"$(nproc)" -L 'unit|fuzz' --timeout 1200
