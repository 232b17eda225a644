// The batch runner (ftracetest_batch.h) against real faults: the kernel's
// own ftracetest in the guest, given cases of ours that hang or panic the
// kernel between two that pass. The hung case alone gets the error, with
// its log, within the stall timeout; the case before it keeps its PASS, the
// one after it gets no result (it runs again in a new batch), and the guest
// is gone. A panic names no case unless only one could have caused it; the
// next test's batch runs on a fresh guest.
#include <chrono>
#include <map>
#include <string>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "framework/agent/protocol.h"
#include "framework/testing/guest_environment.h"
#include "suites/kselftest/ftracetest_batch.h"

namespace tracebed::suites {
namespace {

using ::testing::HasSubstr;
using namespace std::chrono_literals;
using Clock = std::chrono::steady_clock;

// Where the kselftest suite puts the kernel's ftracetest (kselftest_test.cc).
constexpr std::string_view kFtrace = "/opt/kselftest/ftrace";
constexpr std::string_view kBin = "/opt/kselftest/bin";
constexpr auto kStall = 10s;

const std::vector<std::string> kBefore = {"tracebed-harness/1-before.tc"};

class FtracetestHarness : public ::testing::Test {
 protected:
  void SetUp() override {
    auto& g = testlib::guest();
    if (!g.agent().stat(std::string(kFtrace) + "/ftracetest").ok())
      GTEST_SKIP() << "needs the kernel's ftracetest in the guest (the kselftest suite found no selftests)";
    write_case("1-before.tc", "echo before");
    write_case("3-after.tc", "echo after");
  }

  // test.d/tracebed-harness/NAME, a case that runs `body`.
  void write_case(const std::string& name, const std::string& body) {
    auto& g = testlib::guest();
    const std::string dir = std::string(kFtrace) + "/test.d/tracebed-harness";
    auto made = g.sh("mkdir -p " + dir, 30s);
    ASSERT_TRUE(made && made->ok()) << (made ? made->err : made.error().message);
    std::string text = "#!/bin/sh\n# SPDX-License-Identifier: GPL-2.0\n# description: tracebed harness: " + name +
                       "\n" + body + "\n";
    auto w = g.agent().write_file(dir + "/" + name, text, agent::kWriteCreate, 0755);
    ASSERT_TRUE(w && *w == 0) << "writing " << name;
  }

  std::map<std::string, FtracetestResult> run(const std::vector<std::string>& cases) {
    return run_ftracetest_batch(cases, {}, std::string(kFtrace), std::string(kBin), "", kStall);
  }

  static void ExpectPassed(const std::map<std::string, FtracetestResult>& out, const std::string& tc) {
    auto it = out.find(tc);
    ASSERT_NE(it, out.end()) << tc << " has no result";
    EXPECT_EQ(it->second.error, "");
    ASSERT_EQ(it->second.runs.size(), 1u) << tc;
    EXPECT_EQ(it->second.runs[0].run.verdict, coverage::SelftestVerdict::pass) << tc << ": " << it->second.runs[0].log;
  }
};

TEST_F(FtracetestHarness, AHungCaseFailsAloneWithItsLogAndTheGuestIsEnded) {
  write_case("2-hang.tc", "echo about to hang\nsleep 100000");
  if (HasFatalFailure()) return;
  const auto t0 = Clock::now();
  auto out = run({kBefore[0], "tracebed-harness/2-hang.tc", "tracebed-harness/3-after.tc"});
  const auto took = Clock::now() - t0;
  ExpectPassed(out, kBefore[0]);
  ASSERT_TRUE(out.count("tracebed-harness/2-hang.tc"));
  const std::string& error = out["tracebed-harness/2-hang.tc"].error;
  EXPECT_THAT(error, HasSubstr("no result for 10 s (hung)"));
  EXPECT_THAT(error, HasSubstr("about to hang"));  // its log so far
  EXPECT_FALSE(out.count("tracebed-harness/3-after.tc")) << "the case after the hang must run again elsewhere";
  vm::Guest* g = testlib::environment().guest();
  EXPECT_FALSE(g && g->alive()) << "the hung guest was left running";
  EXPECT_LT(took, kStall + 60s) << "the hang was seen late";
}

// The guest's last second of ftracetest's log dies with it: the case before
// may have passed unread. So no case is blamed, none passes that did not,
// and the case after gets no result.
TEST_F(FtracetestHarness, APanicInABatchBlamesNoCaseThatMayHavePassed) {
  write_case("2-panic.tc", "echo c > /proc/sysrq-trigger\nsleep 5");
  if (HasFatalFailure()) return;
  auto out = run({kBefore[0], "tracebed-harness/2-panic.tc", "tracebed-harness/3-after.tc"});
  if (out.count(kBefore[0])) ExpectPassed(out, kBefore[0]);  // read before the panic, or not at all
  EXPECT_FALSE(out.count("tracebed-harness/2-panic.tc")) << "blamed without certainty, or passed";
  EXPECT_FALSE(out.count("tracebed-harness/3-after.tc"));
  vm::Guest* g = testlib::environment().guest();
  EXPECT_FALSE(g && g->alive());
}

// Run alone (the suite's second attempt), the panicking case is named, with
// the console; its guest was restored from a snapshot.
TEST_F(FtracetestHarness, ACaseThatPanicsAloneFailsWithTheConsole) {
  write_case("2-panic.tc", "echo c > /proc/sysrq-trigger\nsleep 5");
  if (HasFatalFailure()) return;
  auto out = run({"tracebed-harness/2-panic.tc"});
  ASSERT_TRUE(out.count("tracebed-harness/2-panic.tc"));
  const std::string& error = out["tracebed-harness/2-panic.tc"].error;
  EXPECT_THAT(error, HasSubstr("the guest died"));
  EXPECT_THAT(error, HasSubstr("sysrq triggered crash"));
}

// After the guests above died, a batch on this test's (fresh) guest runs as usual.
TEST_F(FtracetestHarness, TheNextBatchRunsOnAFreshGuest) {
  auto out = run({kBefore[0], "tracebed-harness/3-after.tc"});
  ExpectPassed(out, kBefore[0]);
  ExpectPassed(out, "tracebed-harness/3-after.tc");
}

}  // namespace
}  // namespace tracebed::suites
