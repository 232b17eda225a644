// ftracetest trigger/ (the non-hist cases) in spirit, in a fresh instance
// per test. sched_process_exec is the trigger event: one per command run,
// with the file name to filter on.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "framework/testing/tracefs_fixture.h"

namespace tracebed::suites {
namespace {

class Triggers : public TracefsTest {
 public:
  Triggers() : TracefsTest({features::event_triggers, features::sched_events}) {}

 protected:  tracefs::Event exec() { return inst().event("sched", "sched_process_exec"); }
};

// trigger-traceonoff.tc: traceoff stops the buffer right after the match.
TEST_F(Triggers, TraceoffStopsTheBufferAtTheMatchingEvent) {
  TRACEBED_COVERS("ftracetest: trigger/trigger-traceonoff.tc");
  ASSERT_OK(exec().add_trigger(Trigger::traceoff().filter("filename ~ \"*sleep*\"")));
  ASSERT_OK(exec().enable());
  run({"true"});
  run({"sleep", "0"});
  run({"true"});
  run({"true"});
  EXPECT_FALSE(inst().tracing_on().value());
  auto lines = trace_lines(inst());
  ASSERT_THAT(lines, Not(IsEmpty()));
  // The matching event is the last one recorded: the `true`s after it are not.
  EXPECT_THAT(lines.back(), HasSubstr("sleep"));
}

TEST_F(Triggers, TraceonRestartsTheBuffer) {
  ASSERT_OK(inst().set_tracing_on(false));
  ASSERT_OK(exec().add_trigger(Trigger::traceon()));
  ASSERT_OK(exec().enable());
  sh("true");
  EXPECT_TRUE(inst().tracing_on().value());
}

// The count is spent only when the trigger acts, and reads back as count=N.
TEST_F(Triggers, CountIsSpentAndReadBack) {
  ASSERT_OK(exec().add_trigger(Trigger::traceoff().count(2)));
  auto before = exec().triggers();
  ASSERT_OK(before);
  ASSERT_THAT(*before, SizeIs(1));
  EXPECT_EQ((*before)[0].line, "traceoff:count=2");
  ASSERT_OK(exec().enable());
  sh("true");
  EXPECT_FALSE(inst().tracing_on().value());
  EXPECT_EQ(exec().triggers().value()[0].count, 1u);
  sh("true");  // tracing is already off: traceoff does nothing, the count stays
  EXPECT_EQ(exec().triggers().value()[0].count, 1u);
}

// trigger-eventonoff.tc: enable_event arms the target (soft mode, "0*")
// and turns it on when the trigger fires.
TEST_F(Triggers, EnableEventTurnsAnotherEventOn) {
  TRACEBED_COVERS("ftracetest: trigger/trigger-eventonoff.tc");
  tracefs::Event exit = inst().event("sched", "sched_process_exit");
  ASSERT_OK(exec().add_trigger(Trigger::enable_event("sched", "sched_process_exit").count(1)));
  EXPECT_EQ(exit.enable_state().value(), "0*");
  sh("true");  // no exec event enabled yet: the trigger still fires (soft mode)
  EXPECT_THAT(exit.enable_state().value(), HasSubstr("1"));
  sh("true");
  EXPECT_THAT(trace_lines(inst()), Contains(HasSubstr("sched_process_exit")));
}

TEST_F(Triggers, DisableEventTurnsAnotherEventOff) {
  tracefs::Event exit = inst().event("sched", "sched_process_exit");
  ASSERT_OK(exit.enable());
  ASSERT_OK(exec().add_trigger(Trigger::disable_event("sched", "sched_process_exit")));
  sh("true");
  ASSERT_OK(inst().clear_trace());
  sh("true; true");
  EXPECT_THAT(trace_lines(inst()), Not(Contains(HasSubstr("sched_process_exit"))));
}

// trigger-filter.tc: a trigger whose `if` never matches never fires.
TEST_F(Triggers, FilterThatNeverMatchesNeverFires) {
  TRACEBED_COVERS("ftracetest: trigger/trigger-filter.tc");
  ASSERT_OK(exec().add_trigger(Trigger::traceoff().filter("filename == \"/no/such/program\"")));
  ASSERT_OK(exec().enable());
  sh("true; true");
  EXPECT_TRUE(inst().tracing_on().value());
}

// trigger-stacktrace.tc: a kernel stack follows the event.
TEST_F(Triggers, StacktraceRecordsAStack) {
  TRACEBED_COVERS("ftracetest: trigger/trigger-stacktrace.tc");
  ASSERT_OK(exec().add_trigger(Trigger::stacktrace().count(1)));
  ASSERT_OK(exec().enable());
  sh("true");
  EXPECT_THAT(trace_lines(inst()), Contains(HasSubstr("<stack trace>")));
}

// trigger-snapshot.tc: the snapshot trigger takes a snapshot.
TEST_F(Triggers, SnapshotTriggerTakesASnapshot) {
  TRACEBED_COVERS("ftracetest: trigger/trigger-snapshot.tc");
  TRACEBED_REQUIRE(features::snapshot_trigger);
  ASSERT_OK(inst().write_marker("tracebed-before-trigger"));
  ASSERT_OK(exec().add_trigger(Trigger::snapshot().count(1)));
  sh("true");
  auto snap = inst().read_snapshot();
  ASSERT_OK(snap);
  EXPECT_THAT(*snap, HasSubstr("tracebed-before-trigger"));
}

TEST_F(Triggers, RemovedTriggerIsGone) {
  Trigger t = Trigger::traceoff().count(5).filter("filename ~ \"*x*\"");
  ASSERT_OK(exec().add_trigger(t));
  ASSERT_THAT(exec().triggers().value(), SizeIs(1));
  ASSERT_OK(exec().remove_trigger(t));
  EXPECT_THAT(exec().triggers().value(), IsEmpty());
}

TEST_F(Triggers, ResetRemovesEveryTrigger) {
  ASSERT_OK(exec().add_trigger(Trigger::traceoff().count(5)));
  ASSERT_OK(exec().add_trigger(Trigger::stacktrace()));
  ASSERT_OK(inst().event("sched", "sched_switch").add_trigger(Trigger::enable_event("sched", "sched_waking")));
  ASSERT_OK(tracefs::reset(inst()));
  EXPECT_THAT(exec().triggers().value(), IsEmpty());
  EXPECT_THAT(inst().event("sched", "sched_switch").triggers().value(), IsEmpty());
  EXPECT_EQ(inst().event("sched", "sched_waking").enable_state().value(), "0");
}

TEST_F(Triggers, BadTriggerFilterIsExplained) {
  TRACEBED_REQUIRE(features::error_log);
  Status s = exec().add_trigger(Trigger::traceoff().filter("no_such_field > 1"));
  ASSERT_FALSE(s.ok());
  EXPECT_THAT(s.error().message, AllOf(HasSubstr("write \"traceoff if no_such_field > 1\" to " +
                                                 exec().files().path("trigger")),
                                       HasSubstr("Invalid argument (EINVAL)")));
  // 6.1 does not log a trigger's filter errors (6.12 does): the message
  // carries the kernel's entry exactly when there is one.
  auto log = inst().error_log();
  ASSERT_OK(log);
  if (log->empty()) {
    EXPECT_THAT(s.error().message, Not(HasSubstr("Command: ")));
  } else {
    EXPECT_THAT(s.error().message, HasSubstr("Command: " + log->back().command + "\n"));
  }
}

TEST_F(Triggers, UnknownTriggerCommandIsRejected) {
  auto err = exec().files().try_write("trigger", "no_such_trigger", true);
  ASSERT_OK(err);
  EXPECT_EQ(*err, EINVAL);
}

TEST_F(Triggers, SeveralTriggersOnOneEventAllFire) {
  // Not traceoff: the kernel runs the newest trigger first, and a buffer
  // turned off would drop the other's stack.
  ASSERT_OK(exec().add_trigger(Trigger::stacktrace().count(1)));
  ASSERT_OK(exec().add_trigger(Trigger::enable_event("sched", "sched_process_exit").count(1)));
  ASSERT_THAT(exec().triggers().value(), SizeIs(2));
  ASSERT_OK(exec().enable());
  run({"true"});
  EXPECT_THAT(trace_lines(inst()), Contains(HasSubstr("<stack trace>")));
  EXPECT_THAT(inst().event("sched", "sched_process_exit").enable_state().value(), HasSubstr("1"));
}

TEST_F(Triggers, SameTriggerTwiceIsRejected) {
  ASSERT_OK(exec().add_trigger(Trigger::traceoff()));
  auto err = exec().files().try_write("trigger", Trigger::traceoff().command(), true);
  ASSERT_OK(err);
  EXPECT_EQ(*err, EEXIST);
}

}  // namespace
}  // namespace tracebed::suites
