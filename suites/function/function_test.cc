// The function tracer: filters, notrace, pid filters, function triggers
// (function_fixture.h).
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "suites/function/function_fixture.h"

namespace tracebed::suites {
namespace {

TEST_F(Function, FilterLimitsTracingToThatFunction) {
  ASSERT_OK(inst().set_ftrace_filter(kRead));
  EXPECT_THAT(inst().ftrace_filter().value().functions, ElementsAre("vfs_read"));
  ASSERT_OK(inst().set_tracer("function"));
  sh("cat /proc/version > /dev/null");
  ASSERT_OK(inst().set_tracing_on(false));
  auto lines = trace_lines(inst());
  ASSERT_THAT(lines, Not(IsEmpty()));
  EXPECT_THAT(lines, Each(HasSubstr(" vfs_read <-")));
}

// ftrace/func_set_ftrace_file.tc, func-filter-glob.tc: globs select sets.
TEST_F(Function, GlobSelectsEveryMatchingFunction) {
  ASSERT_OK(inst().set_ftrace_filter(std::vector<std::string>{"vfs_rea*"}));
  auto filter = inst().ftrace_filter();
  ASSERT_OK(filter);
  EXPECT_THAT(filter->functions, Contains("vfs_read"));
  EXPECT_THAT(filter->functions, Each(HasSubstr("vfs_rea")));
}

TEST_F(Function, NotraceRemovesFromTheFilter) {
  ASSERT_OK(inst().set_ftrace_filter(std::vector<std::string>{"vfs_read", "vfs_write"}));
  ASSERT_OK(inst().set_ftrace_notrace(std::vector<std::string>{"vfs_write"}));
  ASSERT_OK(inst().set_tracer("function"));
  sh("echo x > /dev/null; cat /proc/version > /dev/null");
  ASSERT_OK(inst().set_tracing_on(false));
  auto lines = trace_lines(inst());
  ASSERT_THAT(lines, Not(IsEmpty()));
  EXPECT_THAT(lines, Each(HasSubstr(" vfs_read <-")));
}

TEST_F(Function, UnknownFunctionIsRejected) {
  auto err = inst().files().try_write("set_ftrace_filter", "tracebed_no_such_function");
  ASSERT_OK(err);
  EXPECT_EQ(*err, EINVAL);
}

// func-filter-pid.tc: set_ftrace_pid limits function events to that pid.
TEST_F(Function, PidFilterLimitsToThatPid) {
  TRACEBED_REQUIRE(features::set_ftrace_pid);
  ASSERT_OK(inst().set_ftrace_filter(kRead));
  // kthreadd (pid 2) never reads files. Not a made-up pid: older kernels
  // (5.10) refuse pids at or above pid_max.
  ASSERT_OK(inst().set_ftrace_pids(std::vector<int>{2}));
  EXPECT_THAT(inst().ftrace_pids().value(), ElementsAre(2));
  ASSERT_OK(inst().set_tracer("function"));
  sh("cat /proc/version > /dev/null");
  EXPECT_THAT(trace_lines(inst()), IsEmpty());
  ASSERT_OK(inst().set_ftrace_pids({}));
  sh("cat /proc/version > /dev/null");
  EXPECT_THAT(trace_lines(inst()), Not(IsEmpty()));
}

TEST_F(Function, NotracePidExcludesThatPid) {
  TRACEBED_REQUIRE(features::set_ftrace_notrace_pid);
  ASSERT_OK(inst().set_ftrace_filter(kRead));
  ASSERT_OK(inst().set_ftrace_notrace_pids(std::vector<int>{1}));
  EXPECT_THAT(inst().ftrace_notrace_pids().value(), ElementsAre(1));
  ASSERT_OK(inst().set_tracer("function"));
  sh("cat /proc/version > /dev/null");
  ASSERT_OK(inst().set_tracing_on(false));
  EXPECT_THAT(trace_lines(inst()), Not(Contains(HasSubstr("-1 "))));
}

// func_traceonoff_triggers.tc: a function trigger stops the buffer.
TEST_F(Function, TraceoffFunctionTriggerStopsTheBuffer) {
  TRACEBED_COVERS("ftracetest: ftrace/func_traceonoff_triggers.tc");
  TRACEBED_REQUIRE(features::function_triggers);
  ASSERT_OK(inst().set_ftrace_filter(kRead));
  ASSERT_OK(inst().add_function_trigger(FunctionTrigger::traceoff("vfs_read").count(1)));
  auto filter = inst().ftrace_filter();
  ASSERT_OK(filter);
  ASSERT_EQ(filter->triggers.size(), 1u);
  EXPECT_EQ(filter->triggers[0].function, "vfs_read");
  EXPECT_EQ(filter->triggers[0].name, "traceoff");
  // Counted, and likely spent already: reading set_ftrace_filter calls
  // vfs_read, and a function probe fires whatever the current tracer.
  EXPECT_TRUE(filter->triggers[0].count.has_value());
  sh("cat /proc/version > /dev/null");
  EXPECT_FALSE(inst().tracing_on().value());
  ASSERT_OK(inst().remove_function_trigger(FunctionTrigger::traceoff("vfs_read").count(1)));
  EXPECT_THAT(inst().ftrace_filter().value().triggers, IsEmpty());
}

TEST_F(Function, ResetClearsFiltersAndFunctionTriggers) {
  TRACEBED_REQUIRE(features::function_triggers);
  ASSERT_OK(inst().set_ftrace_filter(kRead));
  ASSERT_OK(inst().add_function_trigger(FunctionTrigger::stacktrace("vfs_write").count(3)));
  ASSERT_OK(tracefs::reset(inst()));
  auto filter = inst().ftrace_filter();
  ASSERT_OK(filter);
  EXPECT_THAT(filter->functions, IsEmpty());
  EXPECT_THAT(filter->triggers, IsEmpty());
}

}  // namespace
}  // namespace tracebed::suites
