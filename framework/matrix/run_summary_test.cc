#include "framework/matrix/run_summary.h"

#include <fmt/format.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "framework/matrix/results_for_tests.h"

#include "framework/base/text.h"

namespace tracebed::matrix {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

KernelRun run_of(std::vector<TestResult> tests) {
  KernelRun run;
  run.kernel = "debian-6.12";
  run.release = "6.12.57+deb13-amd64";
  run.tests = std::move(tests);
  return run;
}

TEST(RunSummary, SkipsAreGroupedByReasonMostFirst) {
  std::vector<TestResult> tests;
  for (int i = 0; i < 28; ++i)
    tests.push_back(result("UserEvents", fmt::format("T{}", i), State::skip,
                           "needs user_events: no \"user_events_data\" in tracefs\nmore text"));
  for (int i = 0; i < 3; ++i) tests.push_back(result("Modules", fmt::format("M{}", i), State::skip, "needs module x"));
  tests.push_back(result("Basics", "Ok", State::pass));
  std::string s = write_run_summary(run_of(tests));
  EXPECT_THAT(s, HasSubstr("debian-6.12 (6.12.57+deb13-amd64): 1 passed, 31 skipped, 0 failed\n"));
  auto user = s.find(" 28 × needs user_events: no \"user_events_data\" in tracefs\n");
  auto mod = s.find("   3 × needs module x\n");
  ASSERT_NE(user, std::string::npos) << s;
  ASSERT_NE(mod, std::string::npos) << s;
  EXPECT_LT(user, mod);
  EXPECT_THAT(s, Not(HasSubstr("more text")));
  EXPECT_THAT(s, Not(HasSubstr("failed:")));
}

// Counted apart from skips and failures, grouped by reason as skips are.
TEST(RunSummary, UnresolvedHasItsOwnCountAndReasons) {
  std::vector<TestResult> tests = {
      result("Basics", "Ok", State::pass),
      result("Ftracetest", "a.tc", State::skip, "ftracetest UNSUPPORTED on the top level: x")};
  for (int i = 0; i < 2; ++i)
    tests.push_back(result("Ftracetest", fmt::format("u{}.tc", i), State::unresolved,
                           "ftracetest UNRESOLVED on the top level: no poll\nlog"));
  std::string s = write_run_summary(run_of(tests));
  EXPECT_THAT(s, HasSubstr("debian-6.12 (6.12.57+deb13-amd64): 1 passed, 1 skipped, 2 unresolved, 0 failed\n"
                           "skipped, by reason:\n    1 × ftracetest UNSUPPORTED on the top level: x\n"
                           "unresolved, by reason:\n    2 × ftracetest UNRESOLVED on the top level: no poll\n"));
  EXPECT_THAT(s, Not(HasSubstr("failed:")));
  EXPECT_THAT(write_test_table(run_of(tests)),
              HasSubstr("1 passed, 1 skipped, 2 unresolved, 0 failed in 0.0 s"));
  EXPECT_THAT(write_test_table(run_of(tests)),
              HasSubstr("| Ftracetest.u0.tc | unresolved | 0.00 | ftracetest UNRESOLVED on the top level: no poll |"));
  // Without one, the line reads as it always did.
  EXPECT_THAT(write_run_summary(run_of({tests[0]})), HasSubstr(": 1 passed, 0 skipped, 0 failed\n"));
}

TEST(RunSummary, FailuresCarryTheirFirstMessageAndTheRestAreCounted) {
  std::vector<TestResult> tests;
  for (int i = 0; i < 5; ++i) {
    auto t = result("Hist", fmt::format("F{}", i), State::fail, fmt::format("Expected 100, got {}\nsecond line", i));
    t.location = "hist_test.cc:12";
    tests.push_back(t);
  }
  std::string s = write_run_summary(run_of(tests), {.failures = 3, .skip_reasons = 15});
  EXPECT_THAT(s, HasSubstr("failed:\n  Hist.F0  (hist_test.cc:12)\n    Expected 100, got 0\n"));
  EXPECT_THAT(s, HasSubstr("Hist.F2"));
  EXPECT_THAT(s, Not(HasSubstr("Hist.F3")));
  EXPECT_THAT(s, HasSubstr("… 2 more failures, in the table\n"));
}

TEST(RunSummary, StaysShortForAThousandTestsWithManyReasons) {
  std::vector<TestResult> tests;
  for (int i = 0; i < 1000; ++i)
    tests.push_back(result("S", fmt::format("T{}", i), i % 2 ? State::skip : State::pass,
                           fmt::format("reason {}", i % 40)));
  std::string s = write_run_summary(run_of(tests));
  EXPECT_LE(base::split_lines(s).size(), 20u) << s;
  EXPECT_THAT(s, HasSubstr("… 8 more reasons (200 tests), in the table"));
}

TEST(TestTable, HasEveryTestAndTheFailuresInFull) {
  auto fail = result("Hist", "Bad", State::fail, "first\nsecond");
  fail.console = "BUG: kernel NULL pointer dereference";
  std::string t = write_test_table(
      run_of({result("Basics", "Ok", State::pass), result("Uprobe", "Skip|ped", State::skip, "needs uprobes"), fail}));
  EXPECT_THAT(t, HasSubstr("| Basics.Ok | pass |"));
  EXPECT_THAT(t, HasSubstr("| Uprobe.Skip\\|ped | skip | 0.00 | needs uprobes |"));
  EXPECT_THAT(t, HasSubstr("| Hist.Bad | FAIL | 0.00 | first |"));
  EXPECT_THAT(t, HasSubstr("## FAIL Hist.Bad\n\n```\nfirst\nsecond\n```\n"));
  EXPECT_THAT(t, HasSubstr("BUG: kernel NULL pointer dereference"));
}

}  // namespace
}  // namespace tracebed::matrix
