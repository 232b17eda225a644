#!/usr/bin/env bash
# Soak (not in the default CI): the whole suite set N times on each kernel,
# then every test that failed at least once, with its failure count and its
# distinct failure messages (docs/reliability.md keeps the log).
#   ci/soak.sh [-n RUNS] [-o DIR] [-b BUILD_DIR] [-l] KERNEL...
#   ci/soak.sh -n 5 debian-6.12 && ci/soak.sh -n 3 tracebed-7.2
# Each run's JUnit is DIR/<kernel>/<i>.xml, its status and time a line of
# DIR/runs.log; the summary is DIR/summary.md.
# -l: a loaded host, as CI's is: a kernel build keeps every CPU busy beside
# the runs (Debian's linux-source-7.2, tinyconfig, `make clean` and again,
# until the last run ends; DIR/load.log says how many builds it made).
set -euo pipefail
src=$(cd "$(dirname "$0")/.." && pwd)
runs=5
out=soak
build=$src/build
load=0
usage="usage: ci/soak.sh [-n RUNS] [-o DIR] [-b BUILD_DIR] [-l] KERNEL..."
# --load is -l spelled out.
args=()
for a in "$@"; do [[ $a == --load ]] && args+=(-l) || args+=("$a"); done
set -- "${args[@]}"
while getopts "n:o:b:l" opt; do
  case $opt in
    n) runs=$OPTARG ;;
    o) out=$OPTARG ;;
    b) build=$OPTARG ;;
    l) load=1 ;;
    *) echo "$usage" >&2; exit 2 ;;
  esac
done
shift $((OPTIND - 1))
(($# > 0)) || { echo "$usage" >&2; exit 2; }
[[ $runs =~ ^[1-9][0-9]*$ ]] || { echo "ci/soak.sh: -n wants a positive count, not '$runs'" >&2; exit 2; }
mkdir -p "$out"
out=$(realpath "$out")

# The load: tinyconfig builds of linux-source-7.2 one after another, as
# many jobs as CPUs, in a process group of their own that ends with us.
if ((load)); then
  tree=$("$src/ci/linux-source-tree.sh" "$out/load" "$build")
  # setsid: a process group of its own, so that the whole build ends with us.
  setsid bash -c '
    cd "$1" && mkdir -p "$2" && make -s O="$2" tinyconfig >/dev/null || exit 1
    n=0
    echo "load: a first kernel build under way" >"$3"
    while :; do
      make -s O="$2" -j"$(nproc)" vmlinux >/dev/null 2>&1 || true
      make -s O="$2" clean >/dev/null 2>&1 || true
      n=$((n + 1))
      echo "load: $n kernel builds" >"$3"
    done' load "$tree" "$out/load/obj" "$out/load.log" &
  loader=$!
  # Keep our own exit status: the killed build's 143 is not the soak's.
  trap 'rc=$?; kill -- -"$loader" 2>/dev/null; wait "$loader" 2>/dev/null || true; exit $rc' EXIT
  echo "soak: a kernel build beside the runs (pid $loader, $out/load.log)" >&2
fi

# A kernel given as a directory (a tree's build) is filed under its last
# two path components: ".../linux-46a329d2e211/kernel" -> linux-46a329d2e211-kernel.
label_of() {
  if [[ $1 == */* ]]; then
    local dir=${1%/}
    echo "$(basename "$(dirname "$dir")")-$(basename "$dir")"
  else
    echo "$1"
  fi
}

labels=()
for kernel in "$@"; do
  label=$(label_of "$kernel")
  labels+=("$label")
  mkdir -p "$out/$label"
  for ((i = 1; i <= runs; i++)); do
    start=$(date +%s)
    # A failing run is what a soak looks for: keep going.
    status=0
    "$build/tracebed" test --kernel "$kernel" --junit "$out/$label/$i.xml" >"$out/$label/$i.log" 2>&1 || status=$?
    echo "soak: $label run $i/$runs: status $status in $(($(date +%s) - start)) s" | tee -a "$out/runs.log" >&2
  done
done

python3 "$src/ci/soak_summary.py" "$out" "${labels[@]}" | tee "$out/summary.md"
