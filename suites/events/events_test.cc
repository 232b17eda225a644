// ftracetest event/ in spirit, in a fresh instance per test.
#include <algorithm>
#include <map>
#include <regex>
#include <string>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "framework/testing/tracefs_fixture.h"

namespace tracebed::suites {
namespace {

using Events = TracefsTest;

// event-enable.tc: one event enabled, only it is recorded.
TEST_F(Events, EnablingOneEventRecordsOnlyIt) {
  TRACEBED_COVERS("ftracetest: event/event-enable.tc");
  TRACEBED_REQUIRE(features::sched_events);
  ASSERT_OK(inst().event("sched", "sched_switch").enable());
  EXPECT_TRUE(inst().event("sched", "sched_switch").enabled().value());
  sh("sleep 0.1");
  auto lines = trace_lines(inst());
  ASSERT_THAT(lines, Not(IsEmpty()));
  EXPECT_THAT(lines, Each(HasSubstr("sched_switch: prev_comm=")));
  ASSERT_OK(inst().event("sched", "sched_switch").disable());
  EXPECT_FALSE(inst().event("sched", "sched_switch").enabled().value());
}

// subsystem-enable.tc: the system's enable file turns on all its events.
TEST_F(Events, EnablingASystemEnablesAllItsEvents) {
  TRACEBED_COVERS("ftracetest: event/subsystem-enable.tc");
  TRACEBED_REQUIRE(features::sched_events);
  ASSERT_OK(inst().enable_system("sched", true));
  auto events = inst().system_events("sched");
  ASSERT_OK(events);
  auto enabled = inst().set_event();
  ASSERT_OK(enabled);
  for (const std::string& e : *events) EXPECT_THAT(*enabled, Contains(EventName{"sched", e}));
  ASSERT_OK(inst().enable_system("sched", false));
  EXPECT_THAT(inst().set_event().value(), IsEmpty());
}

// toplevel-enable.tc: events/enable switches every event.
TEST_F(Events, TopLevelEnableSwitchesEverything) {
  TRACEBED_COVERS("ftracetest: event/toplevel-enable.tc");
  ASSERT_OK(inst().enable_all_events(true));
  EXPECT_GT(inst().set_event().value().size(), 100u);
  ASSERT_OK(inst().enable_all_events(false));
  EXPECT_THAT(inst().set_event().value(), IsEmpty());
}

// event-enable.tc via set_event: "sys:event", "sys:*", "!sys:event".
TEST_F(Events, SetEventAcceptsNamesGlobsAndNegation) {
  TRACEBED_REQUIRE(features::sched_events);
  ASSERT_OK(inst().add_set_event("sched:sched_switch"));
  EXPECT_THAT(inst().set_event().value(), ElementsAre(EventName{"sched", "sched_switch"}));
  ASSERT_OK(inst().add_set_event("sched:*"));
  EXPECT_THAT(inst().set_event().value(), Contains(EventName{"sched", "sched_wakeup"}));
  ASSERT_OK(inst().add_set_event("!sched:sched_wakeup"));
  EXPECT_THAT(inst().set_event().value(), Not(Contains(EventName{"sched", "sched_wakeup"})));
  ASSERT_OK(inst().clear_set_event());
  EXPECT_THAT(inst().set_event().value(), IsEmpty());
}

TEST_F(Events, UnknownEventInSetEventIsRejected) {
  auto err = inst().files().try_write("set_event", "nosuchsystem:nosuchevent");
  ASSERT_OK(err);
  EXPECT_EQ(*err, EINVAL);
}

// event-pid.tc: set_event_pid limits events to those pids.
TEST_F(Events, SetEventPidLimitsEventsToThatPid) {
  TRACEBED_REQUIRE(features::set_event_pid);
  TRACEBED_REQUIRE(features::sched_events);
  // kthreadd (pid 2) never execs. Not a made-up pid: older kernels
  // (5.10) refuse pids at or above pid_max.
  ASSERT_OK(inst().set_event_pids(std::vector<int>{2}));
  EXPECT_THAT(inst().event_pids().value(), ElementsAre(2));
  ASSERT_OK(inst().event("sched", "sched_process_exec").enable());
  sh("true; true");
  EXPECT_THAT(trace_lines(inst()), IsEmpty());
  ASSERT_OK(inst().set_event_pids({}));
  sh("true; true");
  EXPECT_THAT(trace_lines(inst()), Contains(HasSubstr("sched_process_exec")));
}

TEST_F(Events, FormatNamesTheEventAndItsId) {
  TRACEBED_REQUIRE(features::sched_events);
  tracefs::Event ev = inst().event("sched", "sched_switch");
  auto format = ev.format();
  ASSERT_OK(format);
  EXPECT_THAT(*format, AllOf(HasSubstr("name: sched_switch\n"), HasSubstr("field:char prev_comm[16];"),
                             HasSubstr("print fmt:")));
  auto id = ev.id();
  ASSERT_OK(id);
  EXPECT_EQ(*id, tracefs::parse_format_id(*format).value());
  // The same event has the same id in every instance.
  EXPECT_EQ(fs().top().event("sched", "sched_switch").id().value(), *id);
}

TEST_F(Events, AvailableEventsListsWhatEventsHolds) {
  TRACEBED_COVERS("ftracetest: 00basic/basic4.tc");
  auto available = fs().available_events();
  ASSERT_OK(available);
  EXPECT_THAT(*available, Contains(EventName{"sched", "sched_switch"}));
  auto systems = inst().event_systems();
  ASSERT_OK(systems);
  EXPECT_THAT(*systems, Contains("sched"));
}

// Honesty check: sched_switch events decoded from the raw pages agree with
// the kernel's own `trace` text on count and on every prev_pid/next_pid,
// and the pages hold nothing else. The probe target wakes a child 100 times
// (each wake-up a switch to the child): hundreds of switches, so a record
// lost at a page's end, or one too many, shows.
TEST_F(Events, DecodedSwitchesAgreeWithTheKernelsText) {
  TRACEBED_REQUIRE(features::sched_events);
  ASSERT_OK(inst().event("sched", "sched_switch").enable());
  ProbeRun run = run_target({"wake", "100"});
  ASSERT_OK(inst().set_tracing_on(false));
  auto woken = run.lines_of("wake");
  ASSERT_THAT(woken, SizeIs(100));
  const int64_t sleeper = std::stoll(woken[0].at(1));
  auto lines = trace_lines(inst());
  ASSERT_THAT(lines, SizeIs(Ge(200u)));
  std::vector<::testing::Matcher<const DecodedEvent&>> from_text;
  std::regex pids(R"(prev_pid=(\d+) .* next_pid=(\d+))");
  for (const std::string& l : lines) {
    std::smatch m;
    ASSERT_TRUE(std::regex_search(l, m, pids)) << l;
    from_text.push_back(AllOf(FieldEq("prev_pid", std::stoll(m[1])), FieldEq("next_pid", std::stoll(m[2]))));
  }
  // `trace` merges the CPUs by time stamp; compared as a multiset, as the
  // order of equal stamps on two CPUs is not the text's to promise.
  std::vector<DecodedEvent> events = decoded_only({"sched", "sched_switch"});
  EXPECT_THAT(events, UnorderedElementsAreArray(from_text));
  const auto to_sleeper = std::count_if(events.begin(), events.end(),
                                        [&](const DecodedEvent& e) { return int_field(e, "next_pid") == sleeper; });
  EXPECT_GE(to_sleeper, 100) << "each of the 100 wake-ups switches to the child " << sleeper;
}

// The context column of `trace` (trace_output.c trace_print_lat_fmt, the
// third flag): 's' for a record made in a softirq, 'h' in a hard
// interrupt, 'H' in a hard interrupt that came during a softirq, '.' in a
// task. softirq_entry runs only with the softirq count (softirqs never run
// inside a hard interrupt), hrtimer_expire_entry from the timer interrupt,
// mostly outside softirqs, and a marker is written by the task.
TEST_F(Events, ContextFlagSaysSoftirqHardirqOrTask) {
  const Event softirq = inst().event("irq", "softirq_entry"), hrtimer = inst().event("timer", "hrtimer_expire_entry");
  if (!softirq.exists() || !hrtimer.exists())
    GTEST_SKIP() << "needs irq:softirq_entry and timer:hrtimer_expire_entry";
  ASSERT_OK(softirq.enable());
  ASSERT_OK(hrtimer.enable());
  sh("sleep 0.5");
  ASSERT_OK(inst().write_marker("tbcontext"));
  ASSERT_OK(inst().set_tracing_on(false));
  // "  sh-123  [001] d.h1.  12.345678: hrtimer_expire_entry: ..."
  const std::regex line(R"(\[[0-9]+\] (\S)(\S)(\S)\S+ +[0-9.]+: (\w+):)");
  std::map<std::string, std::map<char, int>> flags;  // event -> third flag -> records
  for (const std::string& l : trace_lines(inst())) {
    std::smatch m;
    if (std::regex_search(l, m, line)) ++flags[m[4]][m[3].str()[0]];
  }
  auto of = [&](const std::string& e) { return ::testing::PrintToString(flags[e]); };
  ASSERT_GT(flags["softirq_entry"]['s'], 0) << of("softirq_entry");
  EXPECT_THAT(flags["softirq_entry"], SizeIs(1)) << "softirq_entry outside a softirq: " << of("softirq_entry");
  EXPECT_GT(flags["hrtimer_expire_entry"]['h'], 0) << of("hrtimer_expire_entry");
  for (char c : {'s', '.'}) EXPECT_EQ(flags["hrtimer_expire_entry"].count(c), 0u) << of("hrtimer_expire_entry");
  EXPECT_EQ(flags["tracing_mark_write"]['.'], 1) << of("tracing_mark_write");
}

}  // namespace
}  // namespace tracebed::suites
