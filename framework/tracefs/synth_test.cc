#include "framework/tracefs/synth.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "framework/tracefs/testdata_for_tests.h"

namespace tracebed::tracefs {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using testlib::testdata;

// Documentation/trace/histogram.rst 2.2: "echo 'wakeup_latency u64 lat;
// pid_t pid; int prio' >> /sys/kernel/tracing/synthetic_events" and the
// README's "echo 'myevent u64 lat; char name[]; long[] stack' >>
// synthetic_events". All written to debian-6.12 and 7.2 (accepted).
TEST(SynthDef, CommandsAsDocumented) {
  SynthDef wl("wakeup_latency");
  wl.field("u64", "lat").field("pid_t", "pid").field("int", "prio");
  EXPECT_EQ(wl.command(), "wakeup_latency u64 lat; pid_t pid; int prio");
  EXPECT_EQ(wl.remove_command(), "!wakeup_latency");

  SynthDef my("myevent");
  my.field("u64", "lat").dynamic_string("name").stacktrace("stack");
  EXPECT_EQ(my.command(), "myevent u64 lat; char name[]; long[] stack");

  // README: "s:[synthetic/]<event> <field> [<field>]", "-:[<group>/][<event>]".
  EXPECT_EQ(my.dynamic_command(), "s:myevent u64 lat; char name[]; long[] stack");
  EXPECT_EQ(my.dynamic_remove_command(), "-:synthetic/myevent");

  SynthDef comm("tb_comm");
  comm.string("comm", 16);
  EXPECT_EQ(comm.command(), "tb_comm char comm[16]");
}

// Written: 'tb_all u8 a; u16 b; ...; char n[16]; char o[]' to
// synthetic_events, 's:tb_dyn u64 lat; char comm[16]' and
// 's:synthetic/tb_dyn2 pid_t pid' to dynamic_events, 'tb_stack u64 delta;
// long[] stack' to synthetic_events; read back on debian-6.12.
TEST(SynthDef, ParsesTheCapturedSyntheticEventsFile) {
  auto all = parse_synthetic_events(testdata("synthetic_events-6.12.txt"));
  ASSERT_TRUE(all.ok()) << all.error().message;
  ASSERT_EQ(all->size(), 4u);
  const SynthDef& tb = (*all)[0];
  EXPECT_EQ(tb.name(), "tb_all");
  SynthDef written("tb_all");
  for (const char* t : {"u8", "u16", "u32", "u64", "s8", "s16", "s32", "s64"})
    written.field(t, std::string(1, static_cast<char>('a' + (written.fields().size()))));
  written.field("int", "i").field("unsigned int", "j").field("long", "k").field("unsigned long", "l");
  written.field("pid_t", "m").field("bool", "p").string("n", 16).dynamic_string("o");
  EXPECT_EQ(written.command(),
            "tb_all u8 a; u16 b; u32 c; u64 d; s8 e; s16 f; s32 g; s64 h; int i; unsigned int j; long k; "
            "unsigned long l; pid_t m; bool p; char n[16]; char o[]");
  EXPECT_EQ(tb, written);  // the kernel's "char[16] n" reads as char n[16]

  EXPECT_EQ((*all)[1].command(), "tb_dyn u64 lat; char comm[16]");
  EXPECT_EQ((*all)[2].command(), "tb_dyn2 pid_t pid");
  EXPECT_EQ((*all)[3].command(), "tb_stack u64 delta; long[] stack");
  EXPECT_EQ((*all)[3].fields()[1].kind, SynthField::Kind::stack);
}

TEST(SynthDef, ParsesTheSLinesOfDynamicEvents) {
  auto all = parse_synthetic_events(testdata("dynamic_events-synth-6.12.txt"));
  ASSERT_TRUE(all.ok()) << all.error().message;
  ASSERT_EQ(all->size(), 4u);
  EXPECT_EQ((*all)[0].name(), "tb_all");
  EXPECT_EQ((*all)[2].command(), "tb_dyn2 pid_t pid");
  // kprobes in dynamic_events are not synthetic events.
  auto kp = parse_synthetic_events(testdata("dynamic_events-kprobes-6.12.txt"));
  ASSERT_TRUE(kp.ok()) << kp.error().message;
  EXPECT_TRUE(kp->empty());
}

TEST(SynthDef, BadLinesAreErrors) {
  EXPECT_FALSE(SynthDef::parse("tb u64").ok());
  EXPECT_FALSE(SynthDef::parse("tb char x[1x]").ok());
  EXPECT_FALSE(SynthDef::parse("").ok());
}

// A synthetic event the kernel refuses carries the error_log entry
// (captured on debian-6.12 after 'tb_bad u64 lat; nosuchtype x').
TEST(SynthDef, TheKernelsComplaintAboutATypeIsLogged) {
  std::string log = testdata("error_log-synth-6.12.txt");
  EXPECT_THAT(log, HasSubstr("synthetic_events: error: Invalid type"));
  EXPECT_THAT(log, HasSubstr("Command: tb_bad u64 lat; nosuchtype x"));
}

}  // namespace
}  // namespace tracebed::tracefs
