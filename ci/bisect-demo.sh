#!/usr/bin/env bash
# The bisect demo (docs/bisect.md), outside default CI: an hour or more on
# two cores. Makes a git tree from Debian's linux-source-7.2 with 17 commits
# on top, one of which (the 11th) makes trace_marker drop the last byte of a
# write without a newline, then lets `tracebed bisect` find that commit with
# the marker suite's Marker.TextComesBackExactlyAsPrint.
#   ci/bisect-demo.sh DIR [BUILD_DIR]   (DIR: a new scratch directory; BUILD_DIR: build)
#   ci/bisect-demo.sh --repo-only DIR   only make the tree
set -euo pipefail
src=$(cd "$(dirname "$0")/.." && pwd)
repo_only=0
if [[ "${1:-}" == "--repo-only" ]]; then
  repo_only=1
  shift
fi
dir=${1:?usage: ci/bisect-demo.sh [--repo-only] DIR [BUILD_DIR]}
build=${2:-build}
tree=$dir/linux

# One small commit: append LINE to FILE.
note() {
  local file=$1 line=$2 subject=$3
  printf '%s\n' "$line" >>"$tree/$file"
  git -C "$tree" commit -q -am "$subject"
}

make_repo() {
  [[ -e $tree ]] && { echo "bisect-demo: $tree exists; give a new DIR" >&2; exit 2; }
  "$src/ci/linux-source-tree.sh" "$dir" "$build" >/dev/null
}

add_commits() {
  note Documentation/trace/ftrace.rst ".. Note: the trace_marker section above applies to instances too." \
    "docs: ftrace: trace_marker in instances"
  note kernel/trace/trace_output.c "/* trace_output.c: the print helpers above are shared with the event formats. */" \
    "tracing: note who shares the print helpers"
  note Documentation/trace/histogram.rst ".. Note: Hits counts every event that reached the trigger." \
    "docs: histogram: what Hits counts"
  note kernel/trace/trace_events.c "/* The event files above are created per instance. */" \
    "tracing: events: a note on instances"
  note README "See Documentation/trace/ for the tracing documentation." "README: point at the tracing docs"
  note kernel/trace/trace_seq.c "/* trace_seq users must check trace_seq_has_overflowed(). */" \
    "tracing: seq: remind users of the overflow check"
  note Documentation/trace/events.rst ".. Note: event filters apply per instance." "docs: events: filters per instance"
  note kernel/trace/trace_stat.c "/* The stat files are read under stat_mutex. */" "tracing: stat: document the lock"
  note Documentation/trace/kprobes.rst ".. Note: see also kprobetrace.rst." "docs: kprobes: cross reference"
  note kernel/trace/trace.c "/* trace.c: the core of the tracing infrastructure. */" "tracing: a closing comment"
  # The planted bug: the newline replaces the last byte instead of following it.
  perl -0pi -e 's/(if \(entry->buf\[cnt - 1\] != .\\n.\) \{\n\t\tentry->buf\[)cnt(\] = .\\n.;\n\t\tentry->buf\[)cnt \+ 1(\])/${1}cnt - 1${2}cnt${3}/' \
    "$tree/kernel/trace/trace.c"
  git -C "$tree" diff --quiet && { echo "bisect-demo: the planted change did not apply" >&2; exit 1; }
  git -C "$tree" commit -q -am "tracing: end a marker without a newline in place" \
    -m "Write the newline over the terminating byte rather than after it."
  note Documentation/trace/index.rst ".. Note: the tracing documentation index." "docs: trace index note"
  note kernel/trace/trace_printk.c "/* trace_printk formats are kept for the life of the kernel. */" \
    "tracing: printk: format lifetime"
  note Documentation/trace/uprobetracer.rst ".. Note: uprobes need the binary's offsets." "docs: uprobes: offsets"
  note kernel/trace/trace_events_hist.c "/* Histograms are updated under the event's lock. */" \
    "tracing: hist: a note on locking"
  note Documentation/trace/boottime-trace.rst ".. Note: boot-time tracing needs BOOT_CONFIG." \
    "docs: boot-time tracing needs BOOT_CONFIG"
  note kernel/trace/trace_functions.c "/* Function tracing options are per instance. */" \
    "tracing: functions: options per instance"
  echo "bisect-demo: $tree: $(git -C "$tree" rev-list --count HEAD) commits" >&2
}

make_repo
add_commits
((repo_only)) && exit 0

frag=$src/vmimages/kernels/quick.config
start=$(date +%s)
# The first bad commit, its message at it and its parent; the log is kept.
"$build/tracebed" bisect --tree "$tree" --good HEAD~17 --bad HEAD --kernel-fragment "$frag" \
  --suites marker -- 'Marker.TextComesBackExactlyAsPrint'
echo "bisect-demo: $(( $(date +%s) - start )) s in all" >&2
