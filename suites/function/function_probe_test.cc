// Function probes in set_ftrace_filter: `:stacktrace` (func-filter-
// stacktrace.tc) and enable_event/disable_event with and without a count
// (func_event_triggers.tc). The kernel's own trace text and the probe's
// remaining count are the independent sources.
#include <algorithm>
#include <chrono>
#include <thread>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "suites/function/function_fixture.h"

namespace tracebed::suites {
namespace {

class FunctionProbe : public Function {
 public:
  FunctionProbe() : Function({features::function_triggers}) {}

 protected:
  // What every fork calls (ftracetest's FUNCTION_FORK).
  std::string fork_function() {
    auto all = fs().available_filter_functions();
    EXPECT_OK(all);
    if (all && std::find(all->begin(), all->end(), "kernel_clone") != all->end()) return "kernel_clone";
    return "_do_fork";
  }
  std::vector<tracefs::TriggerEntry> probes() { return inst().ftrace_filter().value().triggers; }
};

// Each fork records one stack; `trace` prints as many "<stack trace>" as
// the pages hold kernel_stack records, and a count stops it exactly.
TEST_F(FunctionProbe, StacktraceProbeRecordsAStackPerCall) {
  TRACEBED_COVERS("ftracetest: ftrace/func-filter-stacktrace.tc");
  const std::string fork = fork_function();
  ASSERT_OK(inst().add_ftrace_filter(fork + ":stacktrace"));
  ASSERT_THAT(inst().files().read("set_ftrace_filter").value(), HasSubstr(fork + ":stacktrace:unlimited"));
  sh("for i in 1 2 3 4 5; do /bin/true; done");
  ASSERT_OK(inst().set_tracing_on(false));
  size_t texts = 0;
  for (const std::string& l : trace_lines(inst())) texts += l.find("<stack trace>") != std::string::npos;
  auto stacks = decoded({"ftrace", "kernel_stack"});
  EXPECT_GE(stacks.size(), 5u) << "five forks of /bin/true";
  EXPECT_EQ(stacks.size(), texts);
  ASSERT_OK(inst().add_ftrace_filter("!" + fork + ":stacktrace"));

  // With a count of 3: three stacks and a spent count, however many forks.
  ASSERT_OK(inst().clear_trace());
  ASSERT_OK(inst().set_tracing_on(true));
  ASSERT_OK(inst().add_ftrace_filter(fork + ":stacktrace:3"));
  sh("for i in 1 2 3 4 5; do /bin/true; done");
  EXPECT_THAT(decoded({"ftrace", "kernel_stack"}), SizeIs(3));
  auto left = probes();
  ASSERT_THAT(left, SizeIs(1));
  EXPECT_EQ(left[0].count, 0u);
}

// `:snapshot:N` swaps the buffer with the snapshot at the function's
// first N calls (trace.c register_snapshot_cmd, ftrace_snapshot): with a
// count of 1, a marker written before three forks is in the snapshot, one
// written after them is in the buffer and not the snapshot, and the count
// is spent.
TEST_F(FunctionProbe, SnapshotProbeSwapsTheBufferAsOftenAsItsCount) {
  TRACEBED_REQUIRE(features::snapshot);
  const std::string fork = fork_function();
  ASSERT_OK(inst().add_ftrace_filter(fork + ":snapshot:1"));
  ASSERT_OK(inst().write_marker("tbsnap-before"));
  sh("for i in 1 2 3; do /bin/true; done");
  ASSERT_OK(inst().write_marker("tbsnap-after"));
  auto snapshot = inst().read_snapshot();
  ASSERT_OK(snapshot);
  EXPECT_THAT(*snapshot, HasSubstr("tbsnap-before"));
  EXPECT_THAT(*snapshot, Not(HasSubstr("tbsnap-after")));
  const std::string buffer = inst().read_trace().value();
  EXPECT_THAT(buffer, HasSubstr("tbsnap-after"));
  EXPECT_THAT(buffer, Not(HasSubstr("tbsnap-before")));
  auto left = probes();
  ASSERT_THAT(left, SizeIs(1));
  EXPECT_EQ(left[0].count, 0u) << "one snapshot of three forks";
}

class FunctionEventProbe : public FunctionProbe {
 protected:
  Event sw() { return inst().event("sched", "sched_switch"); }
  // Waits (up to a second: schedule() runs all the time) for the state.
  void ExpectState(const std::string& want) {
    std::string state;
    for (int i = 0; i < 10; ++i) {
      auto now = sw().enable_state();
      state = now ? *now : now.error().message;
      if (state == want) return;
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
    ADD_FAILURE() << "sched_switch enable is \"" << state << "\", expected \"" << want << "\"";
  }
  // ftracetest's run_enable_disable: the probe keeps setting the soft
  // state back; with a count it does so exactly that often.
  void ExpectProbeWorks(const std::string& action, const std::string& reset, const std::string& fired,
                        const std::string& spent) {
    const std::string probe = "schedule:" + action + ":sched:sched_switch";
    ASSERT_OK(sw().files().write("enable", reset));
    ExpectState(reset);
    ASSERT_OK(inst().files().write("set_ftrace_filter", probe));
    // Every kernel the suites run (5.10 on) keeps function probes per
    // instance (ftrace_func_probe's tr): one at the top level is a bug.
    if (fs().top().files().read("set_ftrace_filter").value().find(probe) != std::string::npos) {
      ASSERT_OK(fs().top().add_ftrace_filter("!" + probe));
      FAIL() << "the probe written to the instance's set_ftrace_filter went to the top level's";
    }
    EXPECT_THAT(probes(), ElementsAre(::testing::Field(&tracefs::TriggerEntry::function, "schedule")))
        << "the instance lists its probe";
    for (int i = 0; i < 5; ++i) {
      SCOPED_TRACE(i);
      ExpectState(fired);
      ASSERT_OK(sw().files().write("enable", reset));
    }
    ExpectState(fired);
    ASSERT_OK(inst().add_ftrace_filter("!" + probe));
    ASSERT_OK(sw().files().write("enable", reset));
    ASSERT_OK(inst().files().write("set_ftrace_filter", probe + ":3"));
    for (int i = 0; i < 3; ++i) {
      SCOPED_TRACE(i);
      ExpectState(fired);
      ASSERT_OK(sw().files().write("enable", reset));
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(300));
    ExpectState(spent);
    auto left = probes();
    ASSERT_THAT(left, SizeIs(1));
    EXPECT_EQ(left[0].count, 0u) << left[0].line;
    // A counted probe is removed with a count: it has its own ops.
    ASSERT_OK(inst().add_ftrace_filter("!" + probe + ":3"));
    EXPECT_THAT(probes(), IsEmpty());
  }
};

TEST_F(FunctionEventProbe, EnableEventProbeFiresAsOftenAsItsCount) {
  TRACEBED_COVERS("ftracetest: ftrace/func_event_triggers.tc");
  ExpectProbeWorks("enable_event", "0", "1*", "0*");
  if (IsSkipped()) return;
  ASSERT_OK(sw().disable());
}

TEST_F(FunctionEventProbe, DisableEventProbeFiresAsOftenAsItsCount) {
  TRACEBED_COVERS("ftracetest: ftrace/func_event_triggers.tc");
  ExpectProbeWorks("disable_event", "1", "0*", "1*");
  if (IsSkipped()) return;
  ASSERT_OK(sw().disable());
}

// While the probe has it soft-enabled, sched_switch is recorded.
TEST_F(FunctionEventProbe, SoftEnabledEventIsRecorded) {
  const std::string probe = "schedule:enable_event:sched:sched_switch";
  ASSERT_OK(inst().files().write("set_ftrace_filter", probe));
  ExpectState("1*");
  sh("sleep 0.05; sleep 0.05");
  EXPECT_THAT(decoded({"sched", "sched_switch"}), Not(IsEmpty()));
  ASSERT_OK(inst().add_ftrace_filter("!" + probe));
}

}  // namespace
}  // namespace tracebed::suites
