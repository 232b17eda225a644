#include "framework/tracefs/sql.h"

#include <regex>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "framework/tracefs/testdata_for_tests.h"

namespace tracebed::tracefs {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using testlib::testdata;

// The variables carry a tag made from the event's name (libtracefs uses a
// random number there); replaces it by "T" after checking every variable
// has the same one.
std::vector<std::string> untagged(const std::vector<std::string>& lines) {
  std::regex var("__([a-z_]+?)_([0-9]+)_([0-9]+)");
  std::string tag;
  std::vector<std::string> out;
  for (const std::string& l : lines) {
    for (auto it = std::sregex_iterator(l.begin(), l.end(), var); it != std::sregex_iterator(); ++it) {
      if (tag.empty()) tag = (*it)[2];
      EXPECT_EQ((*it)[2], tag) << l;
    }
    out.push_back(tag.empty() ? l : std::regex_replace(l, std::regex("_" + tag + "_"), "_T_"));
  }
  return out;
}

// The talk's wakeup latency (and the "done when"). The expected
// lines follow libtracefs src/tracefs-hist.c: an end field is a variable
// of the end hist (tracefs_synth_add_end_field), a start field is saved by
// the start hist and passed on (synth_add_start_field: its name first,
// then __arg), a difference saves the start side and subtracts on the end
// (tracefs_synth_add_compare_field: __arg first, then its name). All three
// accepted by debian-6.1, 6.12, 7.2 and 7.2-rt (tracebed sqlhist -e).
TEST(Sql, WakeupLatency) {
  auto sql = compile_sql(
      "SELECT end.next_comm AS name, start.pid, (end.TIMESTAMP_USECS - start.TIMESTAMP_USECS) AS latency "
      "FROM sched_waking AS start JOIN sched_switch AS end ON start.pid = end.next_pid",
      "wakeup_lat", offline_resolver());
  ASSERT_TRUE(sql.ok()) << sql.error().message;
  EXPECT_THAT(
      untagged(sql->commands()),
      ElementsAre("echo 'wakeup_lat char name[16]; pid_t pid; u64 latency' >> /sys/kernel/tracing/synthetic_events",
                  "echo 'hist:keys=pid:__arg_T_3=pid,__arg_T_4=common_timestamp.usecs' >> "
                  "/sys/kernel/tracing/events/sched/sched_waking/trigger",
                  "echo 'hist:keys=next_pid:__name_T_1=next_comm,__pid_T_2=$__arg_T_3,"
                  "__latency_T_5=common_timestamp.usecs-$__arg_T_4:"
                  "onmatch(sched.sched_waking).trace(wakeup_lat,$__name_T_1,$__pid_T_2,$__latency_T_5)' >> "
                  "/sys/kernel/tracing/events/sched/sched_switch/trigger"));
  EXPECT_EQ(sql->start, (EventName{"sched", "sched_waking"}));
  EXPECT_EQ(sql->end, (EventName{"sched", "sched_switch"}));
  // libtracefs's newer form: "s:" to dynamic_events.
  EXPECT_EQ(sql->commands("/sys/kernel/tracing", true)[0],
            "echo 's:wakeup_lat char name[16]; pid_t pid; u64 latency' >> /sys/kernel/tracing/dynamic_events");
}

// The same variables on every run, different ones for another event.
TEST(Sql, VariableNamesAreStableAndPerEvent) {
  const char* q = "SELECT start.pid, (end.TIMESTAMP_USECS - start.TIMESTAMP_USECS) AS lat FROM sched_waking AS start "
                  "JOIN sched_switch AS end ON start.pid = end.next_pid";
  auto a = compile_sql(q, "wakeup_lat", offline_resolver());
  auto b = compile_sql(q, "wakeup_lat", offline_resolver());
  auto c = compile_sql(q, "other_lat", offline_resolver());
  ASSERT_TRUE(a.ok() && b.ok() && c.ok());
  EXPECT_EQ(a->commands(), b->commands());
  EXPECT_NE(a->commands()[1], c->commands()[1]);
}

// The talk's open latency: a pointer is a u64, a long an s64, as the
// libtracefs-sql example's "u64 fd; s64 ret". Accepted on 6.1, 6.12, 7.2.
TEST(Sql, MyOpen) {
  auto sql = compile_sql(
      "SELECT start.filename, end.ret FROM sys_enter_openat AS start JOIN sys_exit_openat AS end "
      "ON start.common_pid = end.common_pid",
      "myopen", offline_resolver());
  ASSERT_TRUE(sql.ok()) << sql.error().message;
  EXPECT_THAT(untagged(sql->commands()),
              ElementsAre("echo 'myopen u64 filename; s64 ret' >> /sys/kernel/tracing/synthetic_events",
                          "echo 'hist:keys=common_pid:__arg_T_2=filename' >> "
                          "/sys/kernel/tracing/events/syscalls/sys_enter_openat/trigger",
                          "echo 'hist:keys=common_pid:__filename_T_1=$__arg_T_2,__ret_T_3=ret:"
                          "onmatch(syscalls.sys_enter_openat).trace(myopen,$__filename_T_1,$__ret_T_3)' >> "
                          "/sys/kernel/tracing/events/syscalls/sys_exit_openat/trigger"));
}

// Blocking system calls, two statements chained: sysname fires when a
// task in a system call sleeps; offcpu joins it to the task's return to a
// CPU. The second reads the first's synthetic event. Accepted on 6.1,
// 6.12, 7.2.
TEST(Sql, BlockingSyscallsChained) {
  auto sysname = compile_sql(
      "SELECT start.id AS syscall, end.prev_pid AS pid FROM sys_enter AS start JOIN sched_switch AS end "
      "ON start.common_pid = end.prev_pid WHERE end.prev_state & 3",
      "sysname", offline_resolver());
  ASSERT_TRUE(sysname.ok()) << sysname.error().message;
  EXPECT_THAT(untagged(sysname->commands()),
              ElementsAre("echo 'sysname s64 syscall; pid_t pid' >> /sys/kernel/tracing/synthetic_events",
                          "echo 'hist:keys=common_pid:__arg_T_2=id' >> "
                          "/sys/kernel/tracing/events/raw_syscalls/sys_enter/trigger",
                          "echo 'hist:keys=prev_pid:__syscall_T_1=$__arg_T_2,__pid_T_3=prev_pid:"
                          "onmatch(raw_syscalls.sys_enter).trace(sysname,$__syscall_T_1,$__pid_T_3) if prev_state & 3' "
                          ">> /sys/kernel/tracing/events/sched/sched_switch/trigger"));

  auto offcpu = compile_sql(
      "SELECT start.syscall, (end.TIMESTAMP_USECS - start.TIMESTAMP_USECS) AS delta FROM sysname AS start "
      "JOIN sched_switch AS end ON start.pid = end.next_pid",
      "offcpu", offline_resolver().with({*sysname->synth}));
  ASSERT_TRUE(offcpu.ok()) << offcpu.error().message;
  EXPECT_THAT(untagged(offcpu->commands()),
              ElementsAre("echo 'offcpu s64 syscall; u64 delta' >> /sys/kernel/tracing/synthetic_events",
                          "echo 'hist:keys=pid:__arg_T_2=syscall,__arg_T_3=common_timestamp.usecs' >> "
                          "/sys/kernel/tracing/events/synthetic/sysname/trigger",
                          "echo 'hist:keys=next_pid:__syscall_T_1=$__arg_T_2,"
                          "__delta_T_4=common_timestamp.usecs-$__arg_T_3:"
                          "onmatch(synthetic.sysname).trace(offcpu,$__syscall_T_1,$__delta_T_4)' >> "
                          "/sys/kernel/tracing/events/sched/sched_switch/trigger"));
}

// libtracefs-sql.txt: WHERE filters either event; conditions joined by a
// top-level && go to their event; an || across events is refused.
TEST(Sql, WhereSplitsByEvent) {
  auto sql = compile_sql(
      "select start.pid, (end.TIMESTAMP_USECS - start.TIMESTAMP_USECS) as lat from sched_waking as start "
      "JOIN sched_switch as end ON start.pid = end.next_pid "
      "WHERE start.prio < 100 && (!(end.prev_pid < 1 || end.prev_prio > 100) || end.prev_pid == 0)",
      "wakeup_lat", offline_resolver());
  ASSERT_TRUE(sql.ok()) << sql.error().message;
  EXPECT_EQ(sql->start_hist.filter_value(), "prio < 100");
  EXPECT_EQ(sql->end_hist->filter_value(), "(!(prev_pid < 1 || prev_prio > 100) || prev_pid == 0)");

  auto quoted = compile_sql(
      "SELECT end.next_comm AS comm, (end.TIMESTAMP_USECS - start.TIMESTAMP_USECS) AS lat FROM sched_waking AS "
      "start JOIN sched_switch AS end ON start.pid = end.next_pid WHERE end.next_prio < 100 && end.next_comm == "
      "\"cyclictest\"",
      "wakeup_lat", offline_resolver());
  ASSERT_TRUE(quoted.ok()) << quoted.error().message;
  EXPECT_EQ(quoted->end_hist->filter_value(), "next_prio < 100 && next_comm == \"cyclictest\"");
  EXPECT_TRUE(quoted->start_hist.filter_value().empty());

  auto mixed = compile_sql(
      "select start.pid, (end.TIMESTAMP_USECS - start.TIMESTAMP_USECS) as lat from sched_waking as start "
      "JOIN sched_switch as end ON start.pid = end.next_pid WHERE start.prio < 100 || end.prev_prio < 100",
      "wakeup_lat", offline_resolver());
  ASSERT_FALSE(mixed.ok());
  EXPECT_THAT(mixed.error().message, HasSubstr("mixes both events"));
}

// sqlhist(1): "SELECT CAST(call_site as SYM-OFFSET), bytes_req,
// CAST(bytes_alloc AS _COUNTER_) FROM kmalloc" produces
// "hist:keys=call_site.sym-offset,bytes_req:vals=bytes_alloc".
TEST(Sql, WithoutJoinAHistogram) {
  auto sql = compile_sql("SELECT CAST(call_site as SYM-OFFSET), bytes_req, CAST(bytes_alloc AS _COUNTER_) FROM kmalloc",
                         "Anonymous", offline_resolver());
  ASSERT_TRUE(sql.ok()) << sql.error().message;
  EXPECT_FALSE(sql->synth.has_value());
  EXPECT_THAT(sql->commands(), ElementsAre("echo 'hist:keys=call_site.sym-offset,bytes_req:vals=bytes_alloc' >> "
                                           "/sys/kernel/tracing/events/kmem/kmalloc/trigger"));
  // libtracefs-sql.txt: "select CAST(common_pid AS comm), CAST(id AS syscall) FROM sys_enter".
  auto sys = compile_sql("select CAST(common_pid AS comm), CAST(id AS syscall) FROM sys_enter", "x", offline_resolver());
  ASSERT_TRUE(sys.ok()) << sys.error().message;
  EXPECT_EQ(sys->start_hist.command(), "hist:keys=common_pid.execname,id.syscall");
}

// libtracefs-sql.txt "KEYWORDS AS EVENT FIELDS", and system.event names.
TEST(Sql, EscapedKeywordsAndSystemNames) {
  auto r = offline_resolver();
  auto sql = compile_sql("SELECT raw_syscalls.sys_enter.id FROM raw_syscalls.sys_enter", "x", r);
  ASSERT_TRUE(sql.ok()) << sql.error().message;
  EXPECT_EQ(sql->start_hist.command(), "hist:keys=id");
  auto bad = compile_sql("SELECT from FROM sys_enter", "x", r);
  EXPECT_FALSE(bad.ok());
  auto esc = compile_sql("SELECT \\id FROM sys_enter", "x", r);
  ASSERT_TRUE(esc.ok()) << esc.error().message;
  EXPECT_EQ(esc->start_hist.command(), "hist:keys=id");
}

TEST(Sql, ErrorsSayWhatAndWhere) {
  auto r = offline_resolver();
  auto ev = compile_sql("SELECT start.pid FROM sched_wakin AS start JOIN sched_switch AS end ON start.pid = end.next_pid",
                        "x", r);
  ASSERT_FALSE(ev.ok());
  EXPECT_THAT(ev.error().message, HasSubstr("unknown event \"sched_wakin\""));
  EXPECT_THAT(ev.error().message, HasSubstr("at \"sched_wakin AS start"));

  auto field = compile_sql(
      "SELECT start.nosuch FROM sched_waking AS start JOIN sched_switch AS end ON start.pid = end.next_pid", "x", r);
  ASSERT_FALSE(field.ok());
  EXPECT_THAT(field.error().message, HasSubstr("sched.sched_waking has no field \"nosuch\" (fields: comm pid prio"));

  auto noname = compile_sql(
      "SELECT (end.TIMESTAMP - start.TIMESTAMP) FROM sched_waking AS start JOIN sched_switch AS end "
      "ON start.pid = end.next_pid",
      "x", r);
  ASSERT_FALSE(noname.ok());
  EXPECT_THAT(noname.error().message, HasSubstr("needs a name: AS <name>"));

  auto same = compile_sql("SELECT sched_switch.prev_pid FROM sched_switch JOIN sched_switch ON "
                          "sched_switch.prev_pid = sched_switch.next_pid",
                          "x", r);
  ASSERT_FALSE(same.ok());
  EXPECT_THAT(same.error().message, HasSubstr("give them aliases with AS"));

  auto nokernel = compile_sql("SELECT start.x FROM sched_wakeup AS start JOIN sched_switch AS end ON "
                              "start.pid = end.next_pid",
                              "x", r);
  ASSERT_FALSE(nokernel.ok());
  EXPECT_THAT(nokernel.error().message, HasSubstr("no built-in format for sched.sched_wakeup"));

  EXPECT_FALSE(compile_sql("SELECT", "x", r).ok());
  EXPECT_FALSE(compile_sql("SELECT pid FROM sched_waking WHERE", "x", r).ok());
  EXPECT_FALSE(compile_sql("SELECT 'x", "x", r).ok());
}

// The old action form, for kernels without trace() (README check).
TEST(Sql, OldActionForm) {
  auto sql = compile_sql("SELECT start.pid FROM sched_waking AS start JOIN sched_switch AS end ON start.pid = end.next_pid",
                         "wl", offline_resolver(), {.old_action_form = true});
  ASSERT_TRUE(sql.ok()) << sql.error().message;
  EXPECT_THAT(sql->end_hist->command(), HasSubstr(":onmatch(sched.sched_waking).wl($__pid_"));
}

// The built-in files are the captured ones, byte for byte.
TEST(Sql, OfflineFilesAreTheCapturedOnes) {
  EXPECT_EQ(offline_available_events(), testdata("available_events-6.12.txt"));
  for (auto [sys, name] : std::vector<std::pair<std::string, std::string>>{{"sched", "sched_waking"},
                                                                           {"sched", "sched_switch"},
                                                                           {"syscalls", "sys_enter_openat"},
                                                                           {"syscalls", "sys_exit_openat"},
                                                                           {"raw_syscalls", "sys_enter"},
                                                                           {"raw_syscalls", "sys_exit"},
                                                                           {"kmem", "kmalloc"}}) {
    SCOPED_TRACE(name);
    EXPECT_EQ(offline_format({sys, name}), testdata("format-" + name + "-6.12.txt"));
  }
}

// The types the compiler gives a synthetic event's fields (for chained
// statements) against the format the kernel made for tb_all.
TEST(SqlFormat, SyntheticFieldsMatchTheKernelsFormat) {
  auto all = parse_synthetic_events(testdata("synthetic_events-6.12.txt"));
  ASSERT_TRUE(all.ok()) << all.error().message;
  SqlFormat ours = synth_format((*all)[0]);
  auto kernel = parse_sql_format({"synthetic", "tb_all"}, testdata("format-synthetic-tb_all-6.12.txt"));
  ASSERT_TRUE(kernel.ok()) << kernel.error().message;
  ASSERT_EQ(ours.fields.size(), kernel->fields.size());
  for (size_t i = 0; i < ours.fields.size(); ++i) {
    SCOPED_TRACE(kernel->fields[i].name);
    EXPECT_EQ(ours.fields[i].name, kernel->fields[i].name);
    EXPECT_EQ(ours.fields[i].dynamic, kernel->fields[i].dynamic);
    if (!ours.fields[i].dynamic) {
      EXPECT_EQ(ours.fields[i].size, kernel->fields[i].size);
    }
    // The kernel marks char arrays signed; the compiler does not care.
    if (!kernel->fields[i].array_len && !kernel->fields[i].dynamic) {
      EXPECT_EQ(ours.fields[i].is_signed, kernel->fields[i].is_signed);
    }
  }
}

TEST(SqlFormat, ParsesAFormatFile) {
  auto f = parse_sql_format({"sched", "sched_switch"}, testdata("format-sched_switch-6.12.txt"));
  ASSERT_TRUE(f.ok()) << f.error().message;
  const SqlFormatField* comm = f->field("next_comm");
  ASSERT_NE(comm, nullptr);
  EXPECT_EQ(comm->type, "char");
  EXPECT_EQ(comm->array_len, 16u);
  EXPECT_EQ(f->field("prev_state")->size, 8u);
  EXPECT_TRUE(f->field("prev_state")->is_signed);
  EXPECT_FALSE(parse_sql_format({"a", "b"}, "name: b\n").ok());
}

}  // namespace
}  // namespace tracebed::tracefs
