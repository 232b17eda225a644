// The cross-check of the kernel's own selftests (suites/kselftest) against
// the tracebed tests that cover them (TRACEBED_COVERS, framework/coverage):
// on one kernel, every case whose verdict disagrees with a covering test.
//
//   auto d = cross_check(covers, run.tests);   // both ran in `run`
//   fmt::print("{}", format_cross_check(run.kernel, d, explanations));
//
// Disagreements: the selftest PASSes where our test skips or is unresolved
// (our feature detection misses something), the selftest is UNSUPPORTED (or
// its harness SKIPs) where our test passes, the selftest FAILs where our
// test passes. An UNRESOLVED selftest decided nothing to disagree with.
// Explanations of known ones live in suites/coverage-disagreements.txt.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "framework/base/result.h"
#include "framework/coverage/coverage.h"
#include "framework/matrix/results.h"

namespace tracebed::matrix {

// The gtest suites of suites/kselftest.
inline constexpr std::string_view kFtracetestSuite = "Ftracetest";
inline constexpr std::string_view kUserEventsSelftestSuite = "UserEventsSelftest";

// The selftest's own verdict recorded on a kselftest case ("PASS", "FAIL",
// "UNSUPPORTED", ...; "FAIL" when either of a case's two runs failed or it
// hung, else "UNRESOLVED" when either was), and the case id the coverage registry uses; empty when `t` is not
// a selftest case or recorded none.
std::string selftest_verdict(const TestResult& t);
std::string selftest_case_id(const TestResult& t);

struct Disagreement {
  std::string case_id;   // "ftracetest: kprobe/kprobe_args.tc"
  std::string selftest;  // the selftest's verdict
  std::string test;      // our test, "Kprobe.ArgumentsAreFetched"
  State ours = State::pass;
  std::string detail;        // our skip reason (first line), or the selftest's
  std::string kind() const;  // "PASS vs skip"
};

// Every disagreement in `tests` (one kernel's results), in case order.
std::vector<Disagreement> cross_check(const std::vector<coverage::Cover>& covers, const std::vector<TestResult>& tests);

using coverage::Explanation;
// The first explanation (suites/coverage-disagreements.txt) that matches.
const Explanation* explain(const std::vector<Explanation>& all, std::string_view kernel, const Disagreement& d);

// A Markdown table of one kernel's disagreements with their explanations
// (or "unexplained").
std::string format_cross_check(std::string_view kernel, const std::vector<Disagreement>& disagreements,
                               const std::vector<Explanation>& explanations);

// The cross-check of every kernel in `runs` that ran kselftest cases, from
// the source tree's registry; empty when none did. A registry that cannot
// be read is said in the text.
std::string cross_check_report(const std::vector<KernelRun>& runs);

}  // namespace tracebed::matrix
