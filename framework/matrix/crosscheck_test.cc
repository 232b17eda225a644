// The cross-check of the kernel's selftests against the tests covering them.
#include "framework/matrix/crosscheck.h"

#include <gtest/gtest.h>

#include "framework/matrix/results_for_tests.h"

namespace tracebed::matrix {
namespace {

coverage::Cover cover(std::string id, std::string test) {
  return {std::move(id), std::move(test), "suites/x_test.cc", 1};
}

TEST(CrossCheck, SelftestVerdictFromTheRecordedProperties) {
  EXPECT_EQ(selftest_verdict(result_with_properties("Ftracetest", "a/b.tc", State::pass, {{"ftracetest", "PASS"}})), "PASS");
  // Either run failing is a failure of the case.
  EXPECT_EQ(selftest_verdict(
                result_with_properties("Ftracetest", "a/b.tc", State::fail, {{"ftracetest", "PASS"}, {"ftracetest_instance", "FAIL"}})),
            "FAIL");
  EXPECT_EQ(selftest_verdict(result_with_properties("Ftracetest", "a/b.tc", State::fail, {{"ftracetest", "HANG"}})), "FAIL");
  EXPECT_EQ(selftest_verdict(result_with_properties("UserEventsSelftest", "abi_test.c/flags", State::skip, {{"kselftest", "SKIP"}})),
            "UNSUPPORTED");
  // A run that could not decide leaves the case undecided, as its test is.
  EXPECT_EQ(selftest_verdict(result_with_properties("Ftracetest", "a/b.tc", State::unresolved,
                                                    {{"ftracetest", "PASS"}, {"ftracetest_instance", "UNRESOLVED"}})),
            "UNRESOLVED");
  EXPECT_EQ(selftest_verdict(result("Kprobe", "X", State::pass)), "");
  EXPECT_EQ(selftest_case_id(result("Ftracetest", "kprobe/kprobe_args.tc", State::pass)),
            "ftracetest: kprobe/kprobe_args.tc");
  EXPECT_EQ(selftest_case_id(result("UserEventsSelftest", "abi_test.c/flags", State::pass)),
            "user_events: abi_test.c/flags");
}

TEST(CrossCheck, EachKindOfDisagreementAndNothingElse) {
  std::vector<TestResult> tests = {
      result_with_properties("Ftracetest", "a/pass.tc", State::pass, {{"ftracetest", "PASS"}}),
      result_with_properties("Ftracetest", "a/unsup.tc", State::skip, {{"ftracetest", "UNSUPPORTED"}}),
      result_with_properties("Ftracetest", "a/fail.tc", State::fail, {{"ftracetest", "FAIL"}}, "Failed\nftracetest a/fail.tc: FAIL\nlog"),
      result_with_properties("Ftracetest", "a/agree.tc", State::pass, {{"ftracetest", "PASS"}}),
      result_with_properties("Ours", "Skips", State::skip, {}, "needs X: no \"x\" in README"),
      result("Ours", "Passes", State::pass),
      result("Ours", "AlsoPasses", State::pass),
  };
  std::vector<coverage::Cover> covers = {
      cover("ftracetest: a/pass.tc", "Ours.Skips"),      cover("ftracetest: a/unsup.tc", "Ours.Passes"),
      cover("ftracetest: a/fail.tc", "Ours.AlsoPasses"), cover("ftracetest: a/agree.tc", "Ours.Passes"),
      cover("ftracetest: a/pass.tc", "Ours.NotRunHere"),
  };
  auto d = cross_check(covers, tests);
  ASSERT_EQ(d.size(), 3u);
  EXPECT_EQ(d[0].case_id, "ftracetest: a/pass.tc");
  EXPECT_EQ(d[0].kind(), "PASS vs skip");
  EXPECT_EQ(d[0].detail, "needs X: no \"x\" in README");
  EXPECT_EQ(d[1].kind(), "UNSUPPORTED vs pass");
  EXPECT_EQ(d[1].test, "Ours.Passes");
  EXPECT_EQ(d[2].kind(), "FAIL vs pass");
  EXPECT_EQ(d[2].detail, "ftracetest a/fail.tc: FAIL");
}

// UNRESOLVED decided nothing to disagree with; our test not deciding where
// the selftest passed is as telling as our skipping there.
TEST(CrossCheck, UnresolvedAgreesWithUnresolvedAndUndecidedOursIsFlagged) {
  std::vector<TestResult> tests = {
      result_with_properties("Ftracetest", "a/unres.tc", State::unresolved, {{"ftracetest", "UNRESOLVED"}}),
      result_with_properties("Ftracetest", "a/pass.tc", State::pass, {{"ftracetest", "PASS"}}),
      result("Ours", "Undecided", State::unresolved, "could not tell\nmore"),
      result("Ours", "Passes", State::pass),
  };
  std::vector<coverage::Cover> covers = {
      cover("ftracetest: a/unres.tc", "Ours.Undecided"),
      cover("ftracetest: a/unres.tc", "Ours.Passes"),
      cover("ftracetest: a/pass.tc", "Ours.Undecided"),
  };
  auto d = cross_check(covers, tests);
  ASSERT_EQ(d.size(), 1u);
  EXPECT_EQ(d[0].case_id, "ftracetest: a/pass.tc");
  EXPECT_EQ(d[0].kind(), "PASS vs unresolved");
  EXPECT_EQ(d[0].detail, "could not tell");
}

TEST(CrossCheck, ExplanationsMatchByGlobAndShowInTheTable) {
  auto e = coverage::parse_explanations("# c\ndebian-* | ftracetest: a/* | Ours.Passes | because\n", "f");
  ASSERT_TRUE(e.ok()) << e.error().message;
  Disagreement d{"ftracetest: a/unsup.tc", "UNSUPPORTED", "Ours.Passes", State::pass, ""};
  EXPECT_NE(explain(*e, "debian-6.12", d), nullptr);
  EXPECT_EQ(explain(*e, "tracebed-7.2", d), nullptr);
  std::string table = format_cross_check("debian-6.12", {d}, *e);
  EXPECT_NE(table.find("| ftracetest: a/unsup.tc | UNSUPPORTED vs pass | Ours.Passes |  | because |"),
            std::string::npos)
      << table;
  EXPECT_NE(format_cross_check("tracebed-7.2", {d}, *e).find("**unexplained**"), std::string::npos);
  EXPECT_FALSE(coverage::parse_explanations("a | b | c\n", "f").ok());
  EXPECT_FALSE(coverage::parse_explanations("a | b | c | \n", "f").ok());
}

}  // namespace
}  // namespace tracebed::matrix
