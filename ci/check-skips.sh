#!/usr/bin/env bash
# Fails when a guest suite skips for a reason that is not a missing
# feature. A skip is TRACEBED_REQUIRE / TRACEBED_SUITE_REQUIRES (a probe),
# TRACEBED_SKIP_IF_KNOWN_BUG (a KnownKernelBug with the release it is gone
# in), or a bare GTEST_SKIP() whose message starts with "needs " and names
# what was looked for. The bare skips below are the reviewed exceptions,
# each with why it is still a probe; a new one must be added here, where a
# reviewer sees it (docs/writing-tests.md "Skips"). No test is DISABLED_.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"

# FILE<TAB>TEXT ON THE SKIP'S LINE<TAB>why it is a probe
allowed=$(cat <<'LIST'
suites/kprobe/kprobe_syntax_errors_test.cc	the kernel has BTF args	a row for kernels without BTF args, found by the btf_args probe
suites/kselftest/kselftest_test.cc	"ftracetest " << skips.front()	ftracetest's own UNSUPPORTED/UNTESTED/UNRESOLVED verdict, its probe
suites/kselftest/kselftest_test.cc	h.directive == "SKIP"	the selftest's own KTAP SKIP directive, its probe
suites/faults/faults_test.cc	libvirt's QEMU is not our child	the launcher under test has no child QEMU to kill
suites/faults/host_cache_test.cc	apt did not take http_proxy	the host's apt configuration overrides the proxy the test injects
suites/smoke/smoke_test.cc	local kernel without a known release	the local launcher has no catalogue release to compare
suites/latency/latency_test.cc	no task woke from lower priority	without timerlat (probed) nothing makes a wakeup from lower priority
suites/tooling/bpftrace/bpftrace_test.cc	GTEST_SKIP() << refused_	refused_ is set only to a "needs ..." text (BPF_JIT, ENOTSUPP)
suites/tooling/bpftrace/bpftrace_test.cc	tool_version() << ": " << *why	lacks_probe_type: bpftrace's own list of probe types
LIST
)

status=0
while IFS= read -r hit; do
  file=${hit%%:*}
  rest=${hit#*:}
  line=${rest%%:*}
  text=${rest#*:}
  # The message, when it is on the skip's own line.
  if [[ "$text" =~ GTEST_SKIP\(\)[[:space:]]*\<\<[[:space:]]*\"needs[[:space:]] ]]; then continue; fi
  ok=0
  while IFS=$'\t' read -r afile aneedle _; do
    [[ -z "$afile" ]] && continue
    if [[ "$file" == "$afile" && "$text" == *"$aneedle"* ]]; then ok=1; break; fi
  done <<<"$allowed"
  if ((ok == 0)); then
    # A message on the next line: read it from there.
    next=$(sed -n "$((line + 1))p" "$file")
    if [[ "$text" =~ GTEST_SKIP\(\)[[:space:]]*(\<\<)?[[:space:]]*$ && "$next" =~ ^[[:space:]]*(\<\<[[:space:]]*)?\"needs[[:space:]] ]]; then continue; fi
    echo "$file:$line: a skip that is not a probe (\"needs ...\") nor a declared known bug:" >&2
    echo "  $text" >&2
    status=1
  fi
done < <(grep -rn --include='*.cc' --include='*.h' 'GTEST_SKIP()' suites | grep -v '^\S*:[0-9]*:\s*//')
# A disabled test is a skip on every kernel: a known bug is declared with
# the release it is gone in instead (TRACEBED_SKIP_IF_KNOWN_BUG).
while IFS= read -r hit; do
  echo "$hit: a DISABLED_ test; declare the kernel bug it waits for as a KnownKernelBug" >&2
  status=1
done < <(grep -rn --include='*.cc' -E '^(TEST|TEST_F|TEST_P)\([^,]*, *DISABLED_' suites || true)
if ((status != 0)); then
  echo "check-skips: use TRACEBED_REQUIRE, TRACEBED_SKIP_IF_KNOWN_BUG, a \"needs ...\" message, or list the skip in $0 with its reason" >&2
fi
exit $status
