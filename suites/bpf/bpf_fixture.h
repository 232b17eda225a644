// The bpf suite's fixture: BPF programs generated for the kernel under
// test (framework/bpf), compiled on the host, loaded in the guest by the
// BPF helper (vmimages/bpf_helper) while a command runs, and what they saw
// compared with what ftrace decoded from the same window.
//
//   auto ctx = context({"sched", "sched_switch"});      // from the guest's format
//   bpf::ObjectSource src;
//   src.add(bpf::tracepoint_program(*ctx));
//   BpfRun run = run_bpf(src, {std::string(kProbeTarget), "sleep", "1", "50"});
//   Comparison c = compare_per_cpu(decoded(ev, Order::page), run, src, {});
#pragma once

#include <functional>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "framework/bpf/context.h"
#include "framework/bpf/program.h"
#include "framework/testing/tracefs_fixture.h"

namespace tracebed::suites {

inline constexpr std::string_view kBpfHelper = "/opt/tracebed/bin/tracebed-bpf";

// What the helper did and printed.
struct BpfRun {
  int status = -1;  // the helper's: 0, 3 (load refused), 4 (attach refused)
  std::string out;
  std::string err;  // libbpf's messages, the verifier's log among them
  int child = 0;    // the command's pid
  int child_exit = -1;
  uint64_t lost = 0;
  std::string error;  // the helper's "error ..." line, if any
  std::vector<bpf::Record> records;
  // For messages: both outputs, cut to a readable length.
  std::string said() const;
};

// Records of both sides that differ, in words.
struct Comparison {
  size_t compared = 0;
  std::vector<std::string> mismatches;
  // Records whose every difference is a KnownDifference.
  std::vector<std::string> known;
  std::string text() const;
};

// A difference a kernel is known to make between two consumers of one
// tracepoint, in an integer field: `matches(ftrace's value, the program's)`.
// A record whose every difference is known counts in Comparison::known.
struct KnownDifference {
  std::string field;
  std::function<bool(int64_t ftrace, int64_t bpf)> matches;
};

class BpfTest : public testlib::TracefsTest {
 protected:
  void SetUpTest() override;

  // Whether the guest kernel has this symbol (/proc/kallsyms, read once per
  // binary for every name the suite asks about).
  static bool has_ksym(const std::string& name);
  static bool has_btf();
  // The first of `names` the kernel can trace (available_filter_functions).
  static std::optional<std::string> traceable_one(std::initializer_list<std::string_view> names);

  // The context of an event, generated from the guest's own format file.
  bpf::Context context(const EventName& event);

  // Compiles the object on the host, copies it into the guest and runs the
  // helper on it with `command`; `multi` attaches kprobe.multi programs
  // ("PROG=SYM,SYM"). A compile error fails the test.
  BpfRun run_bpf(const bpf::ObjectSource& src, std::vector<std::string> command, std::vector<std::string> multi = {});
};

// Per CPU, the records from the command's first to its last on that CPU
// (ftrace's by common_pid, the program's by the task it ran in), compared
// one by one: the same number, the same task, and each of the program's
// values equal to ftrace's field named by `names` (the value's own name
// when it is not there; values of neither are left out).
Comparison compare_per_cpu(const std::vector<testlib::DecodedEvent>& by_page, const BpfRun& run,
                           const bpf::ObjectSource& src, const std::map<std::string, std::string>& names = {},
                           const std::vector<KnownDifference>& known = {});

// The command's records of both sides in order (it is one thread), compared
// the same way: for probes on functions the syscall events surround.
Comparison compare_in_order(const std::vector<testlib::DecodedEvent>& by_time, const BpfRun& run,
                            const bpf::ObjectSource& src, uint64_t prog,
                            const std::map<std::string, std::string>& names);

}  // namespace tracebed::suites
