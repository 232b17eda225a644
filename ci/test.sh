#!/usr/bin/env bash
# The README's test command: installs what is missing, builds, runs CTest.
#   ci/test.sh            default build (unit, vm, bench smoke), the .deb installed and run,
#                         ASan/UBSan build (unit, fuzz; ci/asan-full.sh adds the CLI's
#                         2 202 report-flag runs)
#   ci/test.sh --quick    default build only
set -euo pipefail
cd "$(dirname "$0")/.."
quick=0
[[ "${1:-}" == "--quick" ]] && quick=1

# The free space the run starts with, for reading a failure that ran out of it.
df -h . /tmp "${TMPDIR:-/tmp}" 2>/dev/null | sort -u || true
# stage NAME COMMAND...: runs it and says how long it took, so a slow CI
# run shows where its time went (docs/performance.md "CI's time").
stage() {
  local name=$1 t0=$SECONDS
  shift
  "$@"
  echo "ci/test: $name took $((SECONDS - t0)) s"
}

stage "installing packages" ci/install-deps.sh
jobs=$(nproc)

cmake --preset default >/dev/null
stage "the default build" cmake --build --preset default -j"$jobs"
stage "the default tests" ctest --preset default -j"$jobs" --timeout 1200
# The .deb installs and its tracebed runs a guest suite from /usr.
stage "the package test" ci/package-test.sh build

if ((quick == 0)); then
  cmake --preset asan >/dev/null
  stage "the ASan build" cmake --build --preset asan -j"$jobs"
  # Without the 2 202 flag-by-fixture runs of the sanitized CLI, and two
  # fixture cases whose variants stay (the report with a writer thread;
  # the merge decompressing here, ahead and reading): all run unsanitized
  # above, and in full under ASan in ci/asan-full.sh.
  stage "the ASan tests" ctest --preset asan -j"$jobs" -L 'unit|fuzz' --timeout 1200 \
    -E '^(Recorded/ReportFlags[.]|Fixtures/ReportGolden[.]MatchesTraceCmdReport/|Fixtures/RecordedFixture[.]MergedStreamMatchesRawReport/)'
fi
echo "ci/test: all stages took $SECONDS s"
