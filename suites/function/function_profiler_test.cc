// The function profiler (kernel/trace/ftrace.c, FUNCTION_PROFILER):
// function_profile_enabled and trace_stat/function<cpu>, at the top level
// (it has no per-instance files). It counts the functions of the top
// level's set_ftrace_filter; the probe target's getpid(2) calls are the
// independent count.
#include <map>
#include <sstream>
#include <string>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "framework/base/text.h"
#include "framework/testing/tracefs_fixture.h"

namespace tracebed::suites {
namespace {

using tracefs::Feature;

const Feature kProfiler = Feature::file("function profiler", "function_profile_enabled");
// The syscall's entry on x86-64 (arch/x86/entry/syscall_64.c wrappers).
constexpr const char* kGetpid = "__x64_sys_getpid";

class FunctionProfiler : public TracefsTest {
 protected:
  FunctionProfiler() : TracefsTest({kProfiler, tracefs::features::dynamic_ftrace}) {}
  void SetUpTest() override {
    ASSERT_OK(top().set_ftrace_filter(std::vector<std::string>{kGetpid}));
  }
  void TearDown() override {
    // ftracetest's reset leaves the profiler alone.
    if (features().has(kProfiler)) EXPECT_OK(top().files().write("function_profile_enabled", "0"));
    TracefsTest::TearDown();
  }
  Status set_profiling(bool on) { return top().files().write("function_profile_enabled", on ? "1" : "0"); }

  // Hits of `function` summed over trace_stat/function<cpu>: lines
  // "  name  hits  time us ..." after the two header lines.
  int64_t hits(const std::string& function) {
    int64_t sum = 0;
    for (int cpu = 0;; ++cpu) {
      auto text = top().files().read("trace_stat/function" + std::to_string(cpu));
      if (!text) break;
      for (std::string_view line : base::split_lines(*text)) {
        auto words = base::split_words(line);
        if (words.size() >= 2 && words[0] == function) {
          auto n = base::parse_number<int64_t>(words[1]);
          EXPECT_TRUE(n.has_value()) << line;
          if (n) sum += *n;
        }
      }
    }
    return sum;
  }
};

// func_profile_stat.tc: while enabled, the profile counts every call; once
// disabled, calls leave it as it was. Here with counts: N getpid calls are
// N hits, and N more with the profiler off change nothing.
TEST_F(FunctionProfiler, CountsEveryCallWhileEnabledAndNoneAfter) {
  TRACEBED_COVERS("ftracetest: ftrace/func_profile_stat.tc");
  constexpr int kCalls = 2000;
  ASSERT_OK(set_profiling(true));
  ProbeRun first = run_target({"getpid", std::to_string(kCalls)});
  ASSERT_OK(set_profiling(false));
  int64_t after_first = hits(kGetpid);
  // Only the probe target calls getpid in the guest.
  EXPECT_EQ(after_first, kCalls) << "trace_stat hits of " << kGetpid << " after " << kCalls << " calls";
  run_target({"getpid", std::to_string(kCalls)});
  EXPECT_EQ(hits(kGetpid), after_first) << "the profile changed while function_profile_enabled was 0";
  // Enabling again starts from zero (ftrace_profile_init resets the stats).
  ASSERT_OK(set_profiling(true));
  run_target({"getpid", std::to_string(kCalls / 2)});
  ASSERT_OK(set_profiling(false));
  EXPECT_EQ(hits(kGetpid), kCalls / 2);
}

}  // namespace
}  // namespace tracebed::suites
