#!/usr/bin/env bash
# The README's main-job command: installs what is missing, builds what the
# job runs (the CLI, the guest programs and the suite binaries: target
# tracebed-main-job), fetches the default kernel while that builds, runs
# every guest suite on it and prints a summary; the full table is written
# beside the JUnit XML. What the set-up steps print goes to logs in build/,
# shown only when a step fails.
#   ci/main.sh [KERNEL]    (default debian-6.12; build/tracebed-main.xml and .md)
set -euo pipefail
cd "$(dirname "$0")/.."
kernel="${1:-debian-6.12}"
mkdir -p build

# step NAME LOG COMMAND...: runs the command with its output in LOG.
step() {
  local name=$1 log=$2
  shift 2
  local t0=$SECONDS
  if ! "$@" >"$log" 2>&1; then
    tail -n 40 "$log" >&2
    echo "ci/main: $name failed (whole log: $log)" >&2
    return 1
  fi
  echo "ci/main: $name done in $((SECONDS - t0)) s"
}

step "installing packages" build/main-install.log ci/install-deps.sh
jobs=$(nproc)
step "configuring" build/main-configure.log cmake --preset default
step "building tracebed" build/main-build.log cmake --build --preset default -j"$jobs" --target tracebed
# The kernel comes from Debian's archive while the compiler has the CPUs.
step "fetching $kernel" build/main-fetch.log build/tracebed kernels fetch "$kernel" &
fetch=$!
step "building the suites" build/main-build-suites.log cmake --build --preset default -j"$jobs" --target tracebed-main-job
wait "$fetch" || exit 125
build/tracebed test --kernel "$kernel" --junit build/tracebed-main.xml
