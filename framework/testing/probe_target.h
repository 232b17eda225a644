// Runs the guest's probe target program (vmimages/probe_target) and parses
// what it says it did, so a test compares decoded events with the truth:
//
//   ProbeRun r = run_probe_target(*this, {"add", "1", "2", "3"});
//   r.pid                      -> the process that made the calls
//   r.lines_of("add")          -> {{"1","2","->","3"}, {"2","2","->","4"}, ...}
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "framework/vm/image.h"
#include "framework/tracefs/tracefs.h"

namespace tracebed::testing {

class TracefsTest;

inline constexpr std::string_view kProbeTarget = vm::kGuestProbeTarget;

struct ProbeRun {
  int pid = 0;
  // Each output line after the pid, split at spaces: {"open", "/etc/x", "3"}.
  std::vector<std::vector<std::string>> lines;
  // The lines whose first word is `what`, without that word.
  std::vector<std::vector<std::string>> lines_of(std::string_view what) const;
};

// Runs `tracebed-probe-target ARGS...` by exec in the guest (a failure fails
// the test) and parses its output.
ProbeRun run_probe_target(TracefsTest& test, std::vector<std::string> args);

struct OnlyOptions {
  bool follow_forks = false;  // its children too (option event-fork)
  // tracing_on=0 until the shell is about to exec the program, so not even
  // the shell's own work before the exec (its opens, its writes) is there.
  bool start_tracing = false;
};

// The same, with the instance's events limited to that process
// (set_event_pid, written by the shell that then execs the program). Hist
// triggers do not see events the pid filter drops, and no event of the
// window comes after the program exits: buffer and hist totals cover the
// same events.
ProbeRun run_probe_target_only(TracefsTest& test, const tracefs::Instance& inst, std::vector<std::string> args,
                               OnlyOptions options = {});

// Parses the program's output; exposed for the suites' own checks.
ProbeRun parse_probe_output(std::string_view out);

}  // namespace tracebed::testing
