// Event filters: exactly the matching events pass, and a bad filter comes
// back with the kernel's own explanation.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "framework/testing/tracefs_fixture.h"

namespace tracebed::suites {
namespace {

using Filter = TracefsTest;

// The example: a comm and a state bit. sleep(1) blocks in
// TASK_INTERRUPTIBLE (S, 0x01); the filter must let through its switches
// and nothing else.
TEST_F(Filter, CommAndStateBitLetThroughOnlyMatchingSwitches) {
  TRACEBED_REQUIRE(features::sched_events);
  tracefs::Event sw = inst().event("sched", "sched_switch");
  ASSERT_OK(sw.set_filter("prev_comm == \"sleep\" && prev_state & 0x01"));
  ASSERT_OK(sw.enable());
  sh("sleep 0.05; sleep 0.05; sleep 0.05");
  ASSERT_OK(inst().set_tracing_on(false));
  auto lines = trace_lines(inst());
  ASSERT_THAT(lines, Not(IsEmpty()));
  EXPECT_THAT(lines, Each(AllOf(HasSubstr("prev_comm=sleep "), HasSubstr("prev_state=S"))));
  // The same, decoded from the pages: every event matches the filter.
  std::vector<DecodedEvent> events = decoded({"sched", "sched_switch"});
  EXPECT_EQ(events.size(), lines.size());
  auto interruptible = ::testing::Truly([](int64_t state) { return (state & 0x01) != 0; });
  EXPECT_THAT(events, Each(AllOf(FieldEq("prev_comm", "sleep"), IntField("prev_state", interruptible))));
}

TEST_F(Filter, FilterThatMatchesNothingRecordsNothing) {
  TRACEBED_REQUIRE(features::sched_events);
  tracefs::Event sw = inst().event("sched", "sched_switch");
  ASSERT_OK(sw.set_filter("prev_pid == 999999 && next_pid == 999999"));
  ASSERT_OK(sw.enable());
  sh("sleep 0.1");
  EXPECT_THAT(trace_lines(inst()), IsEmpty());
}

TEST_F(Filter, GlobOnAString) {
  TRACEBED_REQUIRE(features::sched_events);
  tracefs::Event exec = inst().event("sched", "sched_process_exec");
  ASSERT_OK(exec.set_filter("filename ~ \"*slee*\""));
  ASSERT_OK(exec.enable());
  run({"true"});
  run({"sleep", "0"});
  run({"true"});
  auto lines = trace_lines(inst());
  ASSERT_THAT(lines, Not(IsEmpty()));
  EXPECT_THAT(lines, Each(HasSubstr("sleep")));
}

TEST_F(Filter, ReadBackAndCleared) {
  tracefs::Event sw = inst().event("sched", "sched_switch");
  ASSERT_OK(sw.set_filter("next_pid == 1"));
  EXPECT_EQ(sw.filter().value(), "next_pid == 1");
  ASSERT_OK(sw.clear_filter());
  EXPECT_EQ(sw.filter().value(), "none");
}

TEST_F(Filter, SystemFilterAppliesToItsEvents) {
  TRACEBED_REQUIRE(features::sched_events);
  ASSERT_OK(inst().files().write("events/sched/filter", "common_pid == 999999"));
  EXPECT_EQ(inst().event("sched", "sched_switch").filter().value(), "common_pid == 999999");
}

// filter-error-log (ftracetest ftrace/func-filter-*, trigger error logs):
// the error names the path, the value, the errno, and the kernel's entry.
TEST_F(Filter, UnknownFieldIsExplainedByTheKernel) {
  TRACEBED_COVERS("ftracetest: ftrace/tracing-error-log.tc");
  TRACEBED_REQUIRE(features::error_log);
  tracefs::Event sw = inst().event("sched", "sched_switch");
  Status s = sw.set_filter("no_such_field == 1");
  ASSERT_FALSE(s.ok());
  EXPECT_THAT(s.error().message,
              AllOf(HasSubstr("write \"no_such_field == 1\" to " + sw.files().path("filter")),
                    HasSubstr("Invalid argument (EINVAL)"), HasSubstr("event filter parse error: error: "),
                    HasSubstr("Command: no_such_field == 1\n"), HasSubstr("^")));
  auto log = inst().error_log();
  ASSERT_OK(log);
  ASSERT_EQ(log->size(), 1u);
  EXPECT_EQ((*log)[0].location, "event filter parse error");
  EXPECT_EQ((*log)[0].command, "no_such_field == 1");
}

TEST_F(Filter, ErrorLogCanBeCleared) {
  TRACEBED_REQUIRE(features::error_log);
  EXPECT_FALSE(inst().event("sched", "sched_switch").set_filter("prev_pid ==").ok());
  ASSERT_THAT(inst().error_log().value(), Not(IsEmpty()));
  ASSERT_OK(inst().clear_error_log());
  EXPECT_THAT(inst().error_log().value(), IsEmpty());
}

}  // namespace
}  // namespace tracebed::suites
