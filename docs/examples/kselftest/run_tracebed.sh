#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# kselftest-style wrapper: runs the static tracebed suites on this machine's
# kernel and prints KTAP on stdout. Exit status as kselftest's runner reads
# it: 0 passed, 4 (KSFT_SKIP) nothing ran but skips, 1 a failure or no report.
#   run_tracebed.sh [gtest filter]    (TRACEBED_SUITES: path of the binary)
ksft_skip=4
bin=${TRACEBED_SUITES:-$(dirname "$0")/tracebed-suites-static}
filter=${1:-*}

if [ ! -x "$bin" ]; then
	echo "TAP version 13"
	echo "1..0 # SKIP $bin not found"
	exit $ksft_skip
fi
ktap=$(mktemp) || exit 1
trap 'rm -f "$ktap"' EXIT
"$bin" --tracebed_local --tracebed_ktap --gtest_filter="$filter" >"$ktap" 2>/dev/null
status=$?
cat "$ktap"
# The top-level lines are one per gtest suite (framework/matrix's KTAP).
[ $status -eq 0 ] || exit 1
grep -q '^ok ' "$ktap" || exit 1
grep '^ok ' "$ktap" | grep -qv '# SKIP' || exit $ksft_skip
exit 0
