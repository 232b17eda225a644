#!/usr/bin/env bash
# Soak (not in the default CI): the whole suite set N times on each kernel,
# then every test that failed at least once, with its failure count and its
# distinct failure messages (docs/reliability.md keeps the log).
#   ci/soak.sh [-n RUNS] [-o DIR] [-b BUILD_DIR] KERNEL...
#   ci/soak.sh -n 5 debian-6.12 && ci/soak.sh -n 3 tracebed-7.2
# Each run's JUnit is DIR/<kernel>/<i>.xml; the summary is DIR/summary.md.
set -euo pipefail
src=$(cd "$(dirname "$0")/.." && pwd)
runs=5
out=soak
build=$src/build
while getopts "n:o:b:" opt; do
  case $opt in
    n) runs=$OPTARG ;;
    o) out=$OPTARG ;;
    b) build=$OPTARG ;;
    *) echo "usage: ci/soak.sh [-n RUNS] [-o DIR] [-b BUILD_DIR] KERNEL..." >&2; exit 2 ;;
  esac
done
shift $((OPTIND - 1))
(($# > 0)) || { echo "usage: ci/soak.sh [-n RUNS] [-o DIR] [-b BUILD_DIR] KERNEL..." >&2; exit 2; }
[[ $runs =~ ^[1-9][0-9]*$ ]] || { echo "ci/soak.sh: -n wants a positive count, not '$runs'" >&2; exit 2; }
mkdir -p "$out"

for kernel in "$@"; do
  mkdir -p "$out/$kernel"
  for ((i = 1; i <= runs; i++)); do
    start=$(date +%s)
    # A failing run is what a soak looks for: keep going.
    status=0
    "$build/tracebed" test --kernel "$kernel" --junit "$out/$kernel/$i.xml" >"$out/$kernel/$i.log" 2>&1 || status=$?
    echo "soak: $kernel run $i/$runs: status $status in $(($(date +%s) - start)) s" >&2
  done
done

python3 "$src/ci/soak_summary.py" "$out" "$@" | tee "$out/summary.md"
