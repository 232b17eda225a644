// function_graph limited by set_ftrace_filter (fgraph-filter.tc), also
// with the stack tracer on (fgraph-filter-stack.tc), and the return values
// it records (fgraph-retval.tc). The kernel's `trace` text and the decoded
// funcgraph records must agree.
#include <regex>
#include <string>

#include <fmt/format.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "suites/function_graph/function_graph_fixture.h"

namespace tracebed::suites {
namespace {

// The lines of a function_graph trace that are calls: "f() {" or "f();".
std::vector<std::string> call_lines(const std::vector<std::string>& lines) {
  std::vector<std::string> out;
  for (const std::string& l : lines)
    if (l.find("{") != std::string::npos || l.find(';') != std::string::npos) out.push_back(l);
  return out;
}

class GraphFilter : public FunctionGraph {
 protected:
  // schedule() alone, traced over two sleeps: every call line is
  // schedule(), there are some, and each is one funcgraph_entry record of
  // one address.
  void ExpectOnlySchedule() {
    ASSERT_OK(graph().clear_trace());
    ASSERT_OK(graph().set_tracing_on(true));
    sh("sleep 0.05; sleep 0.05");
    ASSERT_OK(graph().set_tracing_on(false));
    auto calls = call_lines(trace_lines(graph()));
    ASSERT_THAT(calls, Not(IsEmpty()));
    EXPECT_THAT(calls, Each(HasSubstr("schedule()")));
    auto entries = decoded(graph(), {{"ftrace", "funcgraph_entry"}});
    EXPECT_EQ(entries.size(), calls.size());
    ASSERT_FALSE(entries.empty());
    EXPECT_THAT(entries, Each(FieldEq("func", int_field(entries[0], "func"))));
  }
  void start_schedule_graph() {
    ASSERT_OK(graph().set_ftrace_filter(std::vector<std::string>{"schedule"}));
    ASSERT_OK(graph().set_tracing_on(false));
    ASSERT_OK(graph().set_tracer("function_graph"));
  }
};

TEST_F(GraphFilter, FtraceFilterLimitsTheGraphToThatFunction) {
  TRACEBED_COVERS("ftracetest: ftrace/fgraph-filter.tc");
  start_schedule_graph();
  ExpectOnlySchedule();
  ASSERT_OK(graph().set_tracer("nop"));
}

TEST_F(GraphFilter, FtraceFilterHoldsWithTheStackTracerOnAndOff) {
  TRACEBED_COVERS("ftracetest: ftrace/fgraph-filter-stack.tc");
  TRACEBED_REQUIRE(features::stack_tracer);
  start_schedule_graph();
  struct StackTracerOff {
    TracefsTest* t;
    ~StackTracerOff() { (void)t->sh("echo 0 > /proc/sys/kernel/stack_tracer_enabled"); }
  } off{this};
  sh("echo 1 > /proc/sys/kernel/stack_tracer_enabled");
  {
    SCOPED_TRACE("stack tracer on");
    ExpectOnlySchedule();
  }
  sh("echo 0 > /proc/sys/kernel/stack_tracer_enabled");
  {
    SCOPED_TRACE("stack tracer off again");
    ExpectOnlySchedule();
  }
  ASSERT_OK(graph().set_tracer("nop"));
}

// Writing to /proc/interrupts fails in proc_reg_write with -EIO: each of
// 50 writes (one shell) is one return of -5, printed in decimal, then in
// hex, and one funcgraph_exit record: a lost or an extra one shows.
TEST_F(FunctionGraph, RetvalIsTheErrorEachCallReturned) {
  TRACEBED_COVERS("ftracetest: ftrace/fgraph-retval.tc");
  TRACEBED_REQUIRE(features::funcgraph_retval);
  if (!graph().files().has("options/funcgraph-retval-hex")) GTEST_SKIP() << "needs option funcgraph-retval-hex";
  ASSERT_OK(graph().set_ftrace_filter(std::vector<std::string>{"proc_reg_write"}));
  ASSERT_OK(graph().set_tracer("function_graph"));
  ASSERT_OK(graph().set_option("funcgraph-retval", true));
  ASSERT_OK(graph().clear_trace());
  constexpr int kWrites = 50;
  std::string failed = sh(fmt::format(
      "n=0; i=0; while [ $i -lt {} ]; do i=$((i+1)); echo > /proc/interrupts || n=$((n+1)); done 2>/dev/null; echo $n",
      kWrites));
  ASSERT_EQ(failed, std::to_string(kWrites) + "\n") << "every write to /proc/interrupts fails";
  ASSERT_OK(graph().set_tracing_on(false));
  // `trace` first: decoding consumes the pages. A leaf's whole comment:
  // "proc_reg_write(); /* ret=-5 */" (before 6.13 "/* = -5 */").
  auto with = [&](const std::string& value) {
    const std::regex leaf("proc_reg_write\\(\\); /\\* (= |ret=)" + value + " \\*/$");
    auto lines = trace_lines(graph());
    return std::count_if(lines.begin(), lines.end(), [&](const std::string& l) { return std::regex_search(l, leaf); });
  };
  ASSERT_OK(graph().set_option("funcgraph-retval-hex", false));
  EXPECT_EQ(with("-5"), kWrites) << ::testing::PrintToString(trace_lines(graph()));
  ASSERT_OK(graph().set_option("funcgraph-retval-hex", true));
  EXPECT_EQ(with("0xfffffffffffffffb"), kWrites) << ::testing::PrintToString(trace_lines(graph()));
  auto exits = decoded(graph(), {{"ftrace", "funcgraph_exit"}});
  EXPECT_THAT(exits, SizeIs(kWrites));
  EXPECT_THAT(exits, Each(FieldEq("retval", -5)));  // an unsigned long: -EIO
  ASSERT_OK(graph().set_option("funcgraph-retval", false));
  ASSERT_OK(graph().set_option("funcgraph-retval-hex", false));
  ASSERT_OK(graph().set_tracer("nop"));
}

}  // namespace
}  // namespace tracebed::suites
