// ftracetest's and the kselftest harness's output, as the kernel's own
// scripts print it (tools/testing/selftests/ftrace/ftracetest's prlog and
// eval_result; kselftest.h's ksft_test_result_code).
#include "framework/coverage/selftest_output.h"

#include <gtest/gtest.h>

namespace tracebed::coverage {
namespace {

TEST(FtracetestOutput, ResultLinesOfTheTopLevelAndTheInstance) {
  auto runs = parse_ftracetest_output(
      "=== Ftrace unit tests ===\n"
      "[1] ftrace - function pid filters\t[PASS]\n"
      "[2] Test wakeup tracer\t[UNSUPPORTED]\n"
      "execute: /opt/x.tc\n"
      "[3] (instance)  ftrace - function pid filters\t[FAIL]\n"
      "[4] bogus\t[MAYBE]\n"
      "\n\n# of passed:  1\n");
  ASSERT_EQ(runs.size(), 3u);
  EXPECT_EQ(runs[0].number, 1);
  EXPECT_FALSE(runs[0].instance);
  EXPECT_EQ(runs[0].description, "ftrace - function pid filters");
  EXPECT_EQ(runs[0].verdict, SelftestVerdict::pass);
  EXPECT_EQ(runs[1].verdict, SelftestVerdict::unsupported);
  EXPECT_TRUE(runs[2].instance);
  EXPECT_EQ(runs[2].description, "ftrace - function pid filters");
  EXPECT_EQ(runs[2].verdict, SelftestVerdict::fail);
}

TEST(FtracetestOutput, EveryVerdictNameRoundTrips) {
  for (auto v : {SelftestVerdict::pass, SelftestVerdict::fail, SelftestVerdict::unresolved, SelftestVerdict::untested,
                 SelftestVerdict::unsupported, SelftestVerdict::xfail, SelftestVerdict::undefined})
    EXPECT_EQ(parse_verdict(verdict_name(v)), v);
  EXPECT_FALSE(parse_verdict("pass"));
}

TEST(FtracetestOutput, ReasonIsTheLastLineTheCasePrinted) {
  EXPECT_EQ(ftracetest_reason("execute: /x/wakeup.tc\n+ checkreq /x/wakeup.tc\n+ grep -wq wakeup available_tracers\n"
                              "Required tracer wakeup is not configured.\n+ exit_unsupported\n+ kill -s 40 12\n"),
            "Required tracer wakeup is not configured.");
  EXPECT_EQ(ftracetest_reason("execute: /x/a.tc\n+ test -d events/foo\n+ exit_unsupported\n"),
            "after: + test -d events/foo; + exit_unsupported");
  EXPECT_EQ(ftracetest_reason("execute: /x/k.tc\n+ modprobe trace-printk\n+ echo 'No module - please make X='\n"
                              "No module - please make X=\nm\n+ exit_unresolved\n"),
            "No module - please make X= m");
  EXPECT_EQ(ftracetest_reason(""), "ftracetest gave no reason");
}

TEST(FtracetestOutput, LogTailSaysWhatItLeftOut) {
  EXPECT_EQ(log_tail("a\nb\nc\n", 2), "[... 1 lines before]\nb\nc\n");
  EXPECT_EQ(log_tail("a\n", 5), "a\n");
}

TEST(HarnessOutput, OkSkipFailAndTheLogOfEachTest) {
  auto r = parse_harness_output(
      "TAP version 13\n1..3\n"
      "# Starting 3 tests from 1 test cases.\n"
      "#  RUN           user.enablement ...\n"
      "#            OK  user.enablement\n"
      "ok 1 user.enablement\n"
      "#  RUN           user.flags ...\n"
      "#      SKIP      user_events is not enabled\n"
      "ok 2 user.flags # SKIP user_events is not enabled\n"
      "#  RUN           user.bad ...\n"
      "# abi_test.c:99:bad:Expected 0 (0) == ret (-1)\n"
      "not ok 3 user.bad\n"
      "# FAILED: 1 / 3 tests passed.\n");
  ASSERT_EQ(r.size(), 3u);
  EXPECT_EQ(r[0].test, "enablement");
  EXPECT_TRUE(r[0].ok);
  EXPECT_EQ(r[0].directive, "");
  EXPECT_EQ(r[1].full, "user.flags");
  EXPECT_EQ(r[1].directive, "SKIP");
  EXPECT_EQ(r[1].reason, "user_events is not enabled");
  EXPECT_FALSE(r[2].ok);
  EXPECT_NE(r[2].log.find("Expected 0 (0) == ret (-1)"), std::string::npos);
  EXPECT_EQ(r[2].log.find("user.flags"), std::string::npos);
}

}  // namespace
}  // namespace tracebed::coverage
