#include "framework/tracefs/trigger.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "framework/tracefs/testdata_for_tests.h"

namespace tracebed::tracefs {
namespace {

using ::testing::HasSubstr;
using testlib::testdata;

// The examples of Documentation/trace/events.rst and the README.
TEST(Trigger, CommandsAsDocumented) {
  EXPECT_EQ(Trigger::traceoff().command(), "traceoff");
  EXPECT_EQ(Trigger::traceoff().count(3).command(), "traceoff:3");
  EXPECT_EQ(Trigger::enable_event("kmem", "kmalloc").count(3).filter("nr_rq > 1").command(),
            "enable_event:kmem:kmalloc:3 if nr_rq > 1");
  EXPECT_EQ(Trigger::disable_event("sched", "sched_switch").command(), "disable_event:sched:sched_switch");
  EXPECT_EQ(Trigger::snapshot().filter("prev_pid == 0").command(), "snapshot if prev_pid == 0");
  EXPECT_EQ(Trigger::stacktrace().count(5).command(), "stacktrace:5");
  EXPECT_EQ(Trigger::traceon().command(), "traceon");
}

// README: "To remove a trigger without a count: echo '!<trigger>", "with a
// count: echo '!<trigger>:0", "Filters can be ignored when removing".
TEST(Trigger, RemoveCommandAsTheReadmeSays) {
  EXPECT_EQ(Trigger::traceoff().remove_command(), "!traceoff");
  EXPECT_EQ(Trigger::traceoff().count(3).filter("prev_pid == 0").remove_command(), "!traceoff:0");
  EXPECT_EQ(Trigger::enable_event("kmem", "kmalloc").count(3).remove_command(), "!enable_event:kmem:kmalloc:0");
  EXPECT_EQ(Trigger::stacktrace().filter("prev_pid == 0").remove_command(), "!stacktrace");
}

// Documentation/trace/ftrace.rst, "Filter commands".
TEST(FunctionTrigger, CommandsAsDocumented) {
  EXPECT_EQ(FunctionTrigger::traceoff("do_fault").command(), "do_fault:traceoff");
  EXPECT_EQ(FunctionTrigger::traceoff("do_trap").count(3).command(), "do_trap:traceoff:3");
  EXPECT_EQ(FunctionTrigger::enable_event("try_to_wake_up", "sched", "sched_switch").count(2).command(),
            "try_to_wake_up:enable_event:sched:sched_switch:2");
  EXPECT_EQ(FunctionTrigger::stacktrace("__schedule").command(), "__schedule:stacktrace");
  EXPECT_EQ(FunctionTrigger::snapshot("native_flush_tlb_others").count(1).command(),
            "native_flush_tlb_others:snapshot:1");
  EXPECT_EQ(FunctionTrigger::dump("oops").command(), "oops:dump");
  EXPECT_EQ(FunctionTrigger::cpudump("oops").command(), "oops:cpudump");
  // README: "To remove trigger with a count: echo '!<function>:<trigger>:0".
  EXPECT_EQ(FunctionTrigger::traceoff("do_trap").count(3).remove_command(), "!do_trap:traceoff:0");
  EXPECT_EQ(FunctionTrigger::traceoff("do_fault").remove_command(), "!do_fault:traceoff");
}

TEST(TriggerFile, ParsesCapturedTriggers) {
  auto t = parse_trigger_file(testdata("trigger-sched_switch-6.18.txt"));
  ASSERT_TRUE(t.ok()) << t.error().message;
  ASSERT_EQ(t->size(), 4u);

  EXPECT_EQ((*t)[0].name, "disable_event");
  EXPECT_EQ((*t)[0].spec, "disable_event:sched:sched_waking");
  EXPECT_FALSE((*t)[0].count.has_value());  // unlimited

  EXPECT_EQ((*t)[1].spec, "enable_event:sched:sched_wakeup");
  EXPECT_EQ((*t)[1].count, 1u);  // written as :2, fired once since

  EXPECT_EQ((*t)[2].name, "stacktrace");
  EXPECT_EQ((*t)[2].spec, "stacktrace");

  EXPECT_EQ((*t)[3].name, "traceoff");
  EXPECT_EQ((*t)[3].count, 0u);  // written as :3, used up: tracing was turned off 3 times
  EXPECT_EQ((*t)[3].filter, "prev_pid == 0");
  EXPECT_EQ((*t)[3].remove_command(), "!traceoff:count=0 if prev_pid == 0");
  for (const TriggerEntry& e : *t) EXPECT_FALSE(e.is_action()) << e.line;
}

TEST(TriggerFile, EmptyFileHasOnlyComments) {
  auto t = parse_trigger_file(testdata("trigger-empty-6.18.txt"));
  ASSERT_TRUE(t.ok()) << t.error().message;
  EXPECT_TRUE(t->empty());
}

TEST(TriggerFile, BadCountIsAnError) {
  auto t = parse_trigger_file("traceoff:count=x\n");
  ASSERT_FALSE(t.ok());
  EXPECT_THAT(t.error().message, HasSubstr("bad count"));
}


// Captured in a debian-6.12 guest after writing vfs_read,
// vfs_write:traceoff:3, ksys_read:enable_event:sched:sched_switch:2,
// schedule_timeout:stacktrace and do_sys_open*:traceon (some fired since).
TEST(FunctionFilterFile, ParsesCapturedFunctionsAndTriggers) {
  auto f = parse_function_filter(testdata("set_ftrace_filter-triggers-6.12.txt"), "set_ftrace_filter");
  ASSERT_TRUE(f.ok()) << f.error().message;
  EXPECT_FALSE(f->all_functions);
  EXPECT_THAT(f->functions, ::testing::ElementsAre("vfs_read"));
  ASSERT_EQ(f->triggers.size(), 5u);

  const TriggerEntry& glob = f->triggers[0];  // the glob became one probe per function
  EXPECT_EQ(glob.function, "do_sys_openat2");
  EXPECT_EQ(glob.name, "traceon");
  EXPECT_FALSE(glob.count.has_value());
  EXPECT_EQ(glob.remove_command(), "!do_sys_openat2:traceon");

  const TriggerEntry& en = f->triggers[3];
  EXPECT_EQ(en.function, "ksys_read");
  EXPECT_EQ(en.spec, "enable_event:sched:sched_switch");
  EXPECT_EQ(en.count, 1u);
  EXPECT_EQ(en.remove_command(), "!ksys_read:enable_event:sched:sched_switch:0");

  const TriggerEntry& off = f->triggers[4];
  EXPECT_EQ(off.function, "vfs_write");
  EXPECT_EQ(off.name, "traceoff");
  EXPECT_EQ(off.count, 1u);
  EXPECT_EQ(off.line, "vfs_write:traceoff:count=1");
}

TEST(FunctionFilterFile, EmptyFilterMeansAllFunctions) {
  auto f = parse_function_filter(testdata("set_ftrace_filter-empty-6.12.txt"), "set_ftrace_filter");
  ASSERT_TRUE(f.ok()) << f.error().message;
  EXPECT_TRUE(f->all_functions);
  EXPECT_TRUE(f->functions.empty());
  auto n = parse_function_filter(testdata("set_ftrace_notrace-empty-6.12.txt"), "set_ftrace_notrace");
  ASSERT_TRUE(n.ok()) << n.error().message;
  EXPECT_FALSE(n->all_functions);  // "no functions disabled"
  EXPECT_TRUE(n->functions.empty());
}

// Captured in a debian-6.12 guest: a hist trigger, a filtered snapshot
// trigger and a counted traceoff on sched_switch.
TEST(TriggerFile, ParsesHistAndSnapshotTriggers) {
  auto t = parse_trigger_file(testdata("trigger-hist-snapshot-6.12.txt"));
  ASSERT_TRUE(t.ok()) << t.error().message;
  ASSERT_EQ(t->size(), 3u);
  EXPECT_EQ((*t)[0].name, "traceoff");
  EXPECT_EQ((*t)[0].count, 4u);
  EXPECT_EQ((*t)[1].name, "snapshot");
  EXPECT_EQ((*t)[1].count, 1u);
  EXPECT_EQ((*t)[1].filter, "prev_pid == 1");
  const TriggerEntry& hist = (*t)[2];
  EXPECT_EQ(hist.name, "hist");
  EXPECT_EQ(hist.spec, "hist:keys=prev_pid:vals=hitcount:sort=hitcount:size=2048");
  EXPECT_FALSE(hist.count.has_value());
  EXPECT_FALSE(hist.is_action());
  // The kernel took exactly these removals (the file was empty after).
  EXPECT_EQ(hist.remove_command(), "!hist:keys=prev_pid:vals=hitcount:sort=hitcount:size=2048");
  EXPECT_EQ((*t)[1].remove_command(), "!snapshot:count=1 if prev_pid == 1");
}

}  // namespace
}  // namespace tracebed::tracefs
