#!/usr/bin/env bash
# The mutation sample of docs/mutation.md, outside default CI (hours on two
# cores): SAMPLE seeded mutants over the 21 files of kernel/trace the
# suites own, in Debian's linux-source-7.2 with tracebed-7.2's fragment,
# each tested with its file's suites and with ftracetest's areas.
#   ci/mutation-sample.sh DIR [SEED [SAMPLE [MUTATE_ARGS...]]]   (default seed 1, 120 mutants)
# MUTATE_ARGS go to `tracebed mutate` as they are: `--again survivors`
# judges the survivors again once tests were written for them, `--mutant
# ID` one mutant of the sample.
# DIR holds the source tree and the results (DIR/seed-S). The results that
# landed (docs/mutation/seed-S.jsonl) are where a run on a new machine
# starts; copy DIR/seed-S/results.jsonl back there to land more.
# TRACEBED=PATH runs an installed tracebed instead of build/'s, so that
# the build tree can change while the sample runs. FTRACETEST=0 leaves
# ftracetest's side out (it is most of a mutant's time: minutes of its
# areas' cases under TCG, against about one of the owning suites).
set -euo pipefail
src=$(cd "$(dirname "$0")/.." && pwd)
dir=$(realpath -m "${1:?usage: ci/mutation-sample.sh DIR [SEED [SAMPLE [MUTATE_ARGS...]]]}")
seed=${2:-1}
sample=${3:-120}
shift $(($# < 3 ? $# : 3))
build=$src/build
tracebed=${TRACEBED:-$build/tracebed}
sides=()
[[ ${FTRACETEST:-1} == 0 ]] || sides=(--also-kselftest)
out=$dir/seed-$seed
landed=$src/docs/mutation/seed-$seed.jsonl

tree=$("$src/ci/linux-source-tree.sh" "$dir" "$build")
mkdir -p "$out"
# Seeds share one work copy, and with it one build of the whole kernel
# (about 20 minutes here): a new seed's tree is the first seed's. They
# run one at a time; a mutated file is put back before the next.
if [[ ! -e $out/tree ]]; then
  for other in "$dir"/seed-*/tree; do
    if [[ -d $other && ! -L $other ]]; then
      ln -s "$other" "$out/tree"
      break
    fi
  done
fi
if [[ -f $landed && ! -f $out/results.jsonl ]]; then
  cp "$landed" "$out/results.jsonl"
fi
files=()
for f in ring_buffer trace trace_output trace_seq trace_events trace_events_filter trace_events_trigger \
  trace_events_hist tracing_map trace_events_synth trace_events_user trace_kprobe trace_probe trace_uprobe \
  trace_eprobe trace_fprobe trace_dynevent ftrace trace_functions trace_functions_graph trace_stack; do
  files+=(--files "kernel/trace/$f.c")
done
exec "$tracebed" mutate --tree "$tree" "${files[@]}" --sample "$sample" --seed "$seed" \
  "${sides[@]}" --equivalent "$src/docs/mutation/equivalent.txt" --out "$out" --timeout 300 "$@"
