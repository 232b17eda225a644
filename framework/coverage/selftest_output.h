// What the kernel's selftests say about themselves: ftracetest's per-case
// result lines and logs, and the kselftest harness's KTAP (the user_events
// selftests), read back for suites/kselftest and the cross-check.
//
//   for (const auto& run : parse_ftracetest_output(stdout_text))
//     ...  // run.number, run.instance, run.verdict
//   std::string why = ftracetest_reason(log);  // "Required tracer wakeup is not configured."
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace tracebed::coverage {

// ftracetest's result codes (its "Dejagnu extended code").
enum class SelftestVerdict { pass, fail, unresolved, untested, unsupported, xfail, undefined };
std::string_view verdict_name(SelftestVerdict v);  // "PASS", "FAIL", ..., as ftracetest prints them
std::optional<SelftestVerdict> parse_verdict(std::string_view name);

// One "[N] DESCRIPTION\t[RESULT]" line; a run on an instance says
// "[N] (instance)  DESCRIPTION".
struct FtracetestRun {
  int number = 0;
  bool instance = false;
  std::string description;
  SelftestVerdict verdict = SelftestVerdict::undefined;
};
std::vector<FtracetestRun> parse_ftracetest_output(std::string_view text);

// Why a case did not run, from its log (ftracetest runs it under `set -x`):
// the last line the case printed itself ("Required feature pattern ... is
// not in README."), else the last traced commands.
std::string ftracetest_reason(std::string_view log);

// The last `lines` lines of a log.
std::string log_tail(std::string_view log, size_t lines);

// One result of a kselftest_harness.h program: "ok 3 user.enablement",
// "ok 4 user.flags # SKIP why", "not ok 5 user.bad".
struct HarnessResult {
  std::string full;  // "user.enablement" (fixture[.variant].test)
  std::string test;  // "enablement": the TEST_F name, as the case list has it
  bool ok = false;
  std::string directive;  // "SKIP", "XFAIL" or empty
  std::string reason;
  std::string log;  // the "# ..." lines the test printed, from its "#  RUN" line on
};
std::vector<HarnessResult> parse_harness_output(std::string_view text);

}  // namespace tracebed::coverage
