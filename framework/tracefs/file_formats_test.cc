#include "framework/tracefs/file_formats.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "framework/tracefs/testdata_for_tests.h"

namespace tracebed::tracefs {
namespace {

using ::testing::Contains;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::Not;
using testlib::testdata;

TEST(TraceClock, CurrentIsTheBracketedOne) {
  auto s = parse_selection(testdata("trace_clock-6.18.txt"), "trace_clock");
  ASSERT_TRUE(s.ok()) << s.error().message;
  EXPECT_EQ(s->current, "local");
  EXPECT_THAT(s->choices, ElementsAre("local", "global", "counter", "uptime", "perf", "mono", "mono_raw", "boot",
                                      "tai", "x86-tsc"));
}

TEST(BufferSize, UnexpandedTopLevel) {
  auto b = parse_buffer_size(testdata("buffer_size_kb-top-6.18.txt"), "buffer_size_kb");
  ASSERT_TRUE(b.ok()) << b.error().message;
  EXPECT_EQ(b->kb, 7u);
  EXPECT_EQ(b->expanded_kb, 1408u);
  EXPECT_EQ(b->effective_kb(), 1408u);
  EXPECT_FALSE(b->cpus_differ());
}

TEST(BufferSize, Instance) {
  auto b = parse_buffer_size(testdata("buffer_size_kb-6.18.txt"), "buffer_size_kb");
  ASSERT_TRUE(b.ok()) << b.error().message;
  EXPECT_EQ(b->kb, 1410u);
  EXPECT_FALSE(b->expanded_kb.has_value());
}

TEST(BufferSize, CpusDiffer) {
  auto b = parse_buffer_size(testdata("buffer_size_kb-cpus-differ-6.18.txt"), "buffer_size_kb");
  ASSERT_TRUE(b.ok()) << b.error().message;
  EXPECT_TRUE(b->cpus_differ());
}

TEST(TraceOptions, OnAndOff) {
  auto o = parse_trace_options(testdata("trace_options-6.18.txt"));
  ASSERT_TRUE(o.ok()) << o.error().message;
  EXPECT_EQ(o->at("print-parent"), true);
  EXPECT_EQ(o->at("sym-offset"), false);
  EXPECT_EQ(o->at("pause-on-trace"), false);
  EXPECT_EQ(o->at("trace_printk_dest"), false);
  EXPECT_EQ(o->at("function-trace"), true);
  EXPECT_EQ(o->size(), 32u);
}

TEST(EventList, AvailableEvents) {
  auto e = parse_event_list(testdata("available_events-6.18.txt"), "available_events");
  ASSERT_TRUE(e.ok()) << e.error().message;
  EXPECT_EQ(e->size(), 2305u);
  EXPECT_THAT(*e, Contains(EventName{"sched", "sched_switch"}));
  EXPECT_THAT(*e, Contains(EventName{"timer", "hrtimer_start"}));
  // The ftrace system (print, function) cannot be enabled, so is not listed.
  EXPECT_THAT(*e, Not(Contains(EventName{"ftrace", "print"})));
}

TEST(EventList, SetEvent) {
  auto e = parse_event_list(testdata("set_event-6.18.txt"), "set_event");
  ASSERT_TRUE(e.ok()) << e.error().message;
  EXPECT_THAT(*e, ElementsAre(EventName{"sched", "sched_switch"}, EventName{"sched", "sched_wakeup"},
                              EventName{"sched", "sched_waking"}));
}

TEST(SavedCmdlines, PidToComm) {
  auto c = parse_saved_cmdlines(testdata("saved_cmdlines-6.18.txt"));
  ASSERT_TRUE(c.ok()) << c.error().message;
  EXPECT_EQ(c->at(15), "rcu_preempt");
  EXPECT_EQ(c->at(1168), "memfd:sealed-91");
  EXPECT_EQ(c->at(18), "migration/0");
}

TEST(PidList, SetEventPid) {
  auto p = parse_pid_list(testdata("set_event_pid-6.18.txt"), "set_event_pid");
  ASSERT_TRUE(p.ok()) << p.error().message;
  EXPECT_THAT(*p, ElementsAre(123456));
}

TEST(PidList, NoPid) {
  auto p = parse_pid_list(testdata("set_ftrace_pid-empty-6.12.txt"), "set_ftrace_pid");
  ASSERT_TRUE(p.ok()) << p.error().message;
  EXPECT_TRUE(p->empty());
}

TEST(Format, Id) {
  auto id = parse_format_id(testdata("format-sched_switch-6.18.txt"));
  ASSERT_TRUE(id.ok()) << id.error().message;
  EXPECT_EQ(*id, 372);
}

// The error a parser gives for text no kernel writes, which names the file
// and the line; "(parsed)" when it took it.
template <typename R>
std::string error_of(const R& r) {
  return r.ok() ? "(parsed)" : r.error().message;
}

TEST(FileFormats, TextNoKernelWritesIsAnError) {
  EXPECT_THAT(error_of(parse_selection("local global\n", "trace_clock")), HasSubstr("no [selected] entry"));
  EXPECT_THAT(error_of(parse_buffer_size("7 (expanded 1408)\n", "buffer_size_kb")), HasSubstr("buffer_size_kb"));
  EXPECT_THAT(error_of(parse_event_list("sched:sched_switch\nsched_wakeup\n", "set_event")),
              HasSubstr("set_event line 2"));
  EXPECT_NE(error_of(parse_format_id("name: x\nformat:\n")), "(parsed)");
}

}  // namespace
}  // namespace tracebed::tracefs
