// ftracetest instances/ in spirit: instances come and go cleanly and do not
// see each other's events.
#include <cerrno>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "framework/testing/tracefs_fixture.h"
#include "framework/tracefs/tracefs_text.h"

namespace tracebed::suites {
namespace {

using Instances = TracefsTest;

TEST_F(Instances, CreatedInstanceHasItsOwnControlFiles) {
  for (const char* f : {"trace", "trace_marker", "tracing_on", "buffer_size_kb", "events/enable", "per_cpu"}) {
    EXPECT_TRUE(inst().files().has(f)) << f;
  }
  auto names = fs().instance_names();
  ASSERT_OK(names);
  EXPECT_THAT(*names, Contains(inst().name()));
}

TEST_F(Instances, ObjectRemovesOnlyWhatItCreated) {
  std::string name = tracefs::unique_instance_name("tracebed-scoped");
  {
    auto created = fs().create_instance(name);
    ASSERT_OK(created);
    auto again = fs().create_instance(name);
    ASSERT_FALSE(again.ok());
    EXPECT_THAT(again.error().message, HasSubstr("File exists (EEXIST)"));
    auto opened = fs().open_instance(name);
    ASSERT_OK(opened);
  }  // opened goes first and removes nothing; created removes the directory
  EXPECT_THAT(fs().instance_names().value(), Not(Contains(name)));
}

TEST_F(Instances, MarkersDoNotLeakBetweenInstances) {
  tracefs::Instance& other = another_instance();
  ASSERT_OK(inst().write_marker("tracebed-only-in-first"));
  ASSERT_OK(other.write_marker("tracebed-only-in-second"));
  EXPECT_THAT(trace_lines(inst()), Contains(HasSubstr("tracebed-only-in-first")));
  EXPECT_THAT(trace_lines(inst()), Not(Contains(HasSubstr("tracebed-only-in-second"))));
  EXPECT_THAT(trace_lines(other), Contains(HasSubstr("tracebed-only-in-second")));
  EXPECT_THAT(trace_lines(other), Not(Contains(HasSubstr("tracebed-only-in-first"))));
}

TEST_F(Instances, EventsEnabledInOneAreNotRecordedInAnother) {
  tracefs::Instance& other = another_instance();
  ASSERT_OK(inst().event("sched", "sched_switch").enable());
  sh("sleep 0.1");
  EXPECT_THAT(trace_lines(inst()), Contains(HasSubstr("sched_switch")));
  EXPECT_THAT(trace_lines(other), IsEmpty());
  EXPECT_FALSE(other.event("sched", "sched_switch").enabled().value());
}

// instance-event.tc: repeated mkdir/rmdir, also with events and triggers
// active, leaves nothing behind.
TEST_F(Instances, RepeatedCreateAndRemoveWithActiveEventsAndTriggers) {
  for (int i = 0; i < 10; ++i) {
    SCOPED_TRACE(i);
    auto t = fs().create_instance(tracefs::unique_instance_name("tracebed-churn"));
    ASSERT_OK(t);
    ASSERT_OK(t->event("sched", "sched_switch").enable());
    ASSERT_OK(t->event("sched", "sched_wakeup").add_trigger(Trigger::traceoff().count(1)));
    ASSERT_OK(t->destroy());
  }
  auto names = fs().instance_names();
  ASSERT_OK(names);
  for (const std::string& n : *names) EXPECT_FALSE(n.starts_with("tracebed-churn")) << n;
}

// tracing_on is per instance: with another instance off, 100 markers
// written to both are all in this one, in order, and the other refuses
// each (EBADF: trace.c, "Ring buffer disabled, return as if not open for
// write"); the top level's switch is untouched; turned on again, the other
// records the next marker alone.
TEST_F(Instances, TracingOffInOneDoesNotStopAnother) {
  tracefs::Instance& other = another_instance();
  auto top_was = fs().top().tracing_on();
  ASSERT_OK(top_was);
  ASSERT_OK(other.set_tracing_on(false));
  std::vector<std::string> written;
  for (int i = 0; i < 100; ++i) {
    written.push_back("tracebed-still-on-" + std::to_string(i));
    ASSERT_OK(inst().write_marker(written.back()));
    auto refused = other.files().try_write("trace_marker", written.back());
    ASSERT_OK(refused);
    EXPECT_EQ(*refused, EBADF) << written.back();
  }
  EXPECT_EQ(fs().top().tracing_on().value(), *top_was);
  EXPECT_TRUE(inst().tracing_on().value());
  EXPECT_FALSE(other.tracing_on().value());
  ASSERT_OK(other.set_tracing_on(true));
  ASSERT_OK(other.write_marker("tracebed-on-again"));
  const EventRef markers{"ftrace", "print"};
  auto bufs = [](const std::vector<DecodedEvent>& events) {
    std::vector<std::string> out;
    for (const std::string& b : str_fields(events, "buf")) out.push_back(std::string(tracefs::trim(b)));
    return out;
  };
  EXPECT_THAT(bufs(decoded(markers)), ElementsAreArray(written));
  EXPECT_THAT(bufs(decoded(other, {markers})), ElementsAre("tracebed-on-again"));
}

TEST_F(Instances, BufferSizeClockAndFiltersArePerInstance) {
  tracefs::Instance& other = another_instance();
  uint64_t other_kb = other.buffer_size().value().effective_kb();
  std::string other_clock = other.trace_clock().value().current;
  ASSERT_OK(inst().set_buffer_size_kb(other_kb + 512));
  ASSERT_OK(inst().set_trace_clock(other_clock == "global" ? "local" : "global"));
  ASSERT_OK(inst().event("sched", "sched_switch").set_filter("prev_pid == 1"));
  EXPECT_EQ(other.buffer_size().value().effective_kb(), other_kb);
  EXPECT_EQ(other.trace_clock().value().current, other_clock);
  EXPECT_EQ(other.event("sched", "sched_switch").filter().value(), "none");
}

TEST_F(Instances, TriggersArePerInstance) {
  tracefs::Instance& other = another_instance();
  ASSERT_OK(inst().event("sched", "sched_process_exec").add_trigger(Trigger::traceoff()));
  ASSERT_OK(inst().event("sched", "sched_process_exec").enable());
  ASSERT_OK(other.event("sched", "sched_process_exec").enable());
  run({"true"});
  EXPECT_FALSE(inst().tracing_on().value());
  EXPECT_TRUE(other.tracing_on().value());
  EXPECT_THAT(other.event("sched", "sched_process_exec").triggers().value(), IsEmpty());
}

}  // namespace
}  // namespace tracebed::suites
