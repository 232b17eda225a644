// The function profiler (kernel/trace/ftrace.c, FUNCTION_PROFILER):
// function_profile_enabled and trace_stat/function<cpu>, at the top level
// (it has no per-instance files). It counts the functions of the top
// level's set_ftrace_filter; the probe target's getpid(2) calls are the
// independent count.
#include <algorithm>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "framework/base/text.h"
#include "framework/testing/tracefs_fixture.h"

namespace tracebed::suites {
namespace {

const Feature kProfiler = Feature::file("function profiler", "function_profile_enabled");
// getpid(2)'s function on x86-64: the syscall wrapper, or where the
// compiler folded the wrapper into it (one address, two symbols; ftrace
// lists only the second), the SYSCALL_DEFINE body.
const std::vector<std::string> kGetpidCandidates = {"__x64_sys_getpid", "__do_sys_getpid"};

class FunctionProfiler : public TracefsTest {
 protected:
  FunctionProfiler() : TracefsTest({kProfiler, tracefs::features::dynamic_ftrace}) {}
  void SetUpTest() override {
    auto functions = top().files().read("available_filter_functions");
    ASSERT_OK(functions);
    for (std::string_view line : base::split_lines(*functions)) {
      auto w = base::split_words(line);
      for (const auto& c : kGetpidCandidates)
        if (getpid_.empty() && !w.empty() && w[0] == c) getpid_ = c;
    }
    ASSERT_FALSE(getpid_.empty()) << "available_filter_functions lists no getpid function";
    ASSERT_OK(top().set_ftrace_filter(std::vector<std::string>{getpid_}));
  }
  std::string getpid_;
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
  int64_t after_first = hits(getpid_);
  // Only the probe target calls getpid in the guest: kCalls times, and
  // once to report its pid (probe_target.c main).
  EXPECT_EQ(after_first, kCalls + 1) << "trace_stat hits of " << getpid_ << " after " << kCalls + 1 << " calls";
  run_target({"getpid", std::to_string(kCalls)});
  EXPECT_EQ(hits(getpid_), after_first) << "the profile changed while function_profile_enabled was 0";
  // Enabling again starts from zero (ftrace_profile_init resets the stats).
  ASSERT_OK(set_profiling(true));
  run_target({"getpid", std::to_string(kCalls / 2)});
  ASSERT_OK(set_profiling(false));
  EXPECT_EQ(hits(getpid_), kCalls / 2 + 1);
}


// func_profiler.tc: switching the profiler on and off while the function
// tracer runs leaves the tracer's filter in force: filtered to getpid's
// function, the trace holds exactly the probe target's calls of it and
// nothing else; with the filter emptied, other functions are traced.
TEST_F(FunctionProfiler, TogglingItLeavesTheFunctionTracersFilterInForce) {
  TRACEBED_COVERS("ftracetest: ftrace/func_profiler.tc");
  TRACEBED_REQUIRE(tracefs::features::function_tracer);
  constexpr int kCalls = 300;
  ASSERT_OK(top().set_tracer("function"));
  ASSERT_OK(set_profiling(true));
  ASSERT_OK(top().set_ftrace_filter(std::vector<std::string>{getpid_}));
  ASSERT_OK(top().clear_trace());
  ASSERT_OK(set_profiling(false));
  run_target({"getpid", std::to_string(kCalls)});
  ASSERT_OK(top().set_tracing_on(false));
  auto lines = trace_lines(top());
  size_t ours = std::count_if(lines.begin(), lines.end(), [&](const std::string& l) {
    return l.find(" " + getpid_ + " <-") != std::string::npos || l.find(" " + getpid_ + "()") != std::string::npos;
  });
  // kCalls, and the target's own getpid that reports its pid.
  EXPECT_EQ(ours, static_cast<size_t>(kCalls + 1)) << "function events of " << getpid_;
  EXPECT_EQ(ours, lines.size()) << "functions outside the filter were traced";

  ASSERT_OK(top().clear_ftrace_filter());
  ASSERT_OK(top().clear_trace());
  ASSERT_OK(top().set_tracing_on(true));
  run_target({"getpid", "1"});
  ASSERT_OK(top().set_tracing_on(false));
  lines = trace_lines(top());
  EXPECT_TRUE(std::any_of(lines.begin(), lines.end(),
                          [&](const std::string& l) { return l.find(" " + getpid_ + " <-") == std::string::npos; }))
      << "with the filter emptied, only " << getpid_ << " was traced";
}

// fgraph-profiler.tc: the profiler can be enabled while function_graph is
// the tracer (two function-graph users at once; the profiler then times
// calls through the graph entry and return hooks). Here with counts: the
// graph trace and the profile both see exactly the target's getpid calls,
// and the profile's time for them is not zero.
TEST_F(FunctionProfiler, WorksBesideTheFunctionGraphTracer) {
  TRACEBED_COVERS("ftracetest: ftrace/fgraph-profiler.tc");
  TRACEBED_REQUIRE(tracefs::features::function_graph_tracer);
  constexpr int kCalls = 300;
  ASSERT_OK(top().set_tracer("function_graph"));
  ASSERT_OK(set_profiling(true));
  run_target({"getpid", std::to_string(kCalls)});
  ASSERT_OK(set_profiling(false));
  ASSERT_OK(top().set_tracing_on(false));
  auto lines = trace_lines(top());
  size_t leaves = std::count_if(lines.begin(), lines.end(),
                                [&](const std::string& l) { return l.find(getpid_ + "();") != std::string::npos; });
  // kCalls, and the target's own getpid that reports its pid.
  EXPECT_EQ(leaves, static_cast<size_t>(kCalls + 1)) << "function_graph entries of " << getpid_;
  EXPECT_EQ(hits(getpid_), kCalls + 1) << "profile hits of " << getpid_;
  double time = -1;
  for (int cpu = 0; time <= 0; ++cpu) {
    auto text = top().files().read("trace_stat/function" + std::to_string(cpu));
    if (!text) break;
    for (std::string_view line : base::split_lines(*text)) {
      auto w = base::split_words(line);
      if (w.size() >= 3 && w[0] == getpid_) time = std::stod(std::string(w[2]));
    }
  }
  EXPECT_GT(time, 0) << "the profile timed " << getpid_ << "'s calls as 0";
}

// The profile's columns (ftrace.c function_stat_show) against the graph
// tracer's own time of each call, both hooked on the same nanosleep
// function at once: sleeps of 10, 100, 200 and 400 ms, all on one CPU.
// The profile's hits are that CPU's funcgraph_exit records, its time
// their sum and its s^2 their sample variance (n*sum(x^2) - sum(x)^2) /
// (n*(n-1)), in us^2. The two hooks stamp a call at nearly the same
// moment, but a loaded host can stall the vCPU between them for
// milliseconds: the spread of the sleeps keeps that within 8 %, where
// n*n for n*(n-1) would be 25 % off.
TEST_F(FunctionProfiler, VarianceIsTheSampleVarianceOfTheCallsTimes) {
  TRACEBED_REQUIRE(tracefs::features::function_graph_tracer);
  std::string fn;
  auto functions = top().files().read("available_filter_functions");
  ASSERT_OK(functions);
  for (const char* c : {"hrtimer_nanosleep", "common_nsleep", "do_nanosleep"}) {
    for (std::string_view line : base::split_lines(*functions)) {
      auto w = base::split_words(line);
      if (fn.empty() && !w.empty() && w[0] == c) fn = c;
    }
  }
  ASSERT_FALSE(fn.empty()) << "available_filter_functions lists no nanosleep function";
  ASSERT_OK(top().set_ftrace_filter(std::vector<std::string>{fn}));
  ASSERT_OK(top().set_tracing_on(false));
  ASSERT_OK(top().set_tracer("function_graph"));
  ASSERT_OK(top().clear_trace());
  ASSERT_OK(set_profiling(true));
  ASSERT_OK(top().set_tracing_on(true));
  const int cpu = top().cpus().value().front();
  for (const char* ms : {"10", "100", "200", "400"})
    sh(fmt::format("taskset {:x} {} sleep {} > /dev/null", 1u << cpu, kProbeTarget, ms));
  ASSERT_OK(top().set_tracing_on(false));
  ASSERT_OK(set_profiling(false));

  std::map<int, std::vector<double>> us_per_cpu;  // each call's time, by the CPU it returned on
  for (const DecodedEvent& e : decoded(top(), {{"ftrace", "funcgraph_exit"}}))
    us_per_cpu[e.cpu].push_back(static_cast<double>(int_field(e, "rettime") - int_field(e, "calltime")) / 1000.0);
  ASSERT_EQ(us_per_cpu.size(), 1u) << "calls returned on CPUs other than the one their task was pinned to";
  const std::vector<double>& us = us_per_cpu[cpu];
  ASSERT_EQ(us.size(), 4u) << "funcgraph_exit records of " << fn << " on CPU " << cpu;
  SCOPED_TRACE(::testing::Message() << "calls of " << ::testing::PrintToString(us) << " us");
  auto text = top().files().read("trace_stat/function" + std::to_string(cpu));
  ASSERT_OK(text);
  std::vector<std::string> row;
  for (std::string_view line : base::split_lines(*text)) {
    auto w = base::split_words(line);
    if (!w.empty() && w[0] == fn) row.assign(w.begin(), w.end());
  }
  // name, hits, time "us", avg "us", s^2 "us"
  ASSERT_EQ(row.size(), 8u) << *text;
  const double n = static_cast<double>(us.size());
  double sum = 0, squares = 0;
  for (double x : us) sum += x, squares += x * x;
  EXPECT_EQ(row[1], "4") << "hits";
  EXPECT_NEAR(std::stod(row[2]), sum, sum * 0.02) << "time";
  const double variance = (n * squares - sum * sum) / (n * (n - 1));
  EXPECT_NEAR(std::stod(row[6]), variance, variance * 0.08) << "s^2";
}

}  // namespace
}  // namespace tracebed::suites
