// Event filters: exactly the matching events pass, and a bad filter comes
// back with the kernel's own explanation.
#include <map>
#include <string>

#include <fmt/format.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "framework/testing/tracefs_fixture.h"

namespace tracebed::suites {
namespace {

using Filter = TracefsTest;

// The issue's example: a comm and a state bit. A task named tbsw (a link
// to the probe target) first sleeps 30 times, each switch out in
// TASK_INTERRUPTIBLE (S, 0x01); then two of them spin on one CPU, each
// switched out runnable (R, or R+ when preempted: no 0x01) whenever the
// tick hands the CPU to the other. Beside the filtered instance, one
// without a filter records the same switches: the filter passes exactly
// its S switches of tbsw, task by task, and none of the R ones.
TEST_F(Filter, CommAndStateBitLetThroughOnlyMatchingSwitches) {
  TRACEBED_REQUIRE(features::sched_events);
  const std::string dir = "/tmp/" + unique("tbstate");
  sh(fmt::format("mkdir -p {0} && ln -sf {1} {0}/tbsw", dir, kProbeTarget));
  tracefs::Event sw = inst().event("sched", "sched_switch");
  ASSERT_OK(sw.set_filter("prev_comm == \"tbsw\" && prev_state & 0x01"));
  ASSERT_OK(sw.enable());
  const Instance& all = another_instance();
  ASSERT_OK(all.event("sched", "sched_switch").enable());
  sh(fmt::format("{0}/tbsw sleep 2 30 > /dev/null; taskset 1 {0}/tbsw getpid 150000 > /dev/null & "
                 "taskset 1 {0}/tbsw getpid 150000 > /dev/null; wait; rm -r {0}",
                 dir));
  ASSERT_OK(inst().set_tracing_on(false));
  ASSERT_OK(all.set_tracing_on(false));
  auto lines = trace_lines(inst());
  EXPECT_THAT(lines, Each(AllOf(HasSubstr("prev_comm=tbsw "), HasSubstr("prev_state=S"))));
  std::vector<DecodedEvent> passed = decoded({"sched", "sched_switch"});
  EXPECT_EQ(passed.size(), lines.size()) << "the pages and `trace` differ";
  auto interruptible = ::testing::Truly([](int64_t state) { return (state & 0x01) != 0; });
  EXPECT_THAT(passed, Each(AllOf(FieldEq("prev_comm", "tbsw"), IntField("prev_state", interruptible))));

  // What the unfiltered instance saw of tbsw: S switches per task, and R.
  std::map<int64_t, int> sleeping, passed_by_task;
  int running = 0;
  for (const DecodedEvent& e : decoded(all, {{"sched", "sched_switch"}})) {
    if (str_field(e, "prev_comm") != "tbsw") continue;
    int64_t state = int_field(e, "prev_state");
    if (state & 0x01) ++sleeping[int_field(e, "prev_pid")];
    else if ((state & 0x7f) == 0) ++running;  // R, or R+ (TASK_REPORT_MAX)
  }
  for (const DecodedEvent& e : passed) ++passed_by_task[int_field(e, "prev_pid")];
  int slept = 0;
  for (const auto& task : sleeping) slept += task.second;
  ASSERT_GE(slept, 20) << "30 sleeps of 2 ms, each a switch out in S";
  ASSERT_GE(running, 1) << "two spinners on one CPU were never switched out runnable: the workload proves nothing";
  EXPECT_EQ(passed_by_task, sleeping) << "S switches of tbsw per pid: filtered vs unfiltered";
}

const Feature kCpumaskFilters = Feature::since_release("cpumask filters (CPUS{...})", 6, 6);

// A CPU mask in a filter (6.6+: trace_events_filter.c parse_pred's
// "CPUS{...}"): common_cpu & CPUS{1} passes exactly the getpid(2)s the
// probe target made pinned to CPU 1 (70 of them, every one, on CPU 1) and
// none of the 50 it made pinned to CPU 0; a mask without its opening brace
// is refused with EINVAL.
TEST_F(Filter, CpumaskPassesExactlyTheEventsOnThoseCpus) {
  TRACEBED_REQUIRE(kCpumaskFilters);
  TRACEBED_REQUIRE(features::sys_enter_getpid);
  const Event getpid = inst().event("syscalls", "sys_enter_getpid");
  std::vector<int> cpus = inst().cpus().value();
  if (cpus.size() < 2) GTEST_SKIP() << "needs 2 CPUs: the guest has " << cpus.size();
  auto refused = getpid.files().try_write("filter", "common_cpu & CPUS1}");
  ASSERT_OK(refused);
  EXPECT_EQ(*refused, EINVAL) << "a mask without '{'";
  ASSERT_OK(getpid.set_filter("common_cpu & CPUS{1}"));
  ASSERT_OK(getpid.enable());
  // The shell pins itself, turns tracing on and execs the program: every
  // getpid(2) of that pid recorded is the program's, on the CPU asked (the
  // shell's own, for $$, came before, maybe elsewhere).
  auto pinned = [&](int mask, int calls) {
    EXPECT_OK(inst().set_tracing_on(false));
    ProbeRun run = parse_probe_output(sh(fmt::format("sh -c 'taskset -p {} $$ > /dev/null && echo 1 > {} && exec {} getpid {}'",
                                                     mask, inst().path("tracing_on"), kProbeTarget, calls)));
    EXPECT_OK(inst().set_tracing_on(false));
    return run;
  };
  ProbeRun on0 = pinned(1, 50);
  ProbeRun on1 = pinned(2, 70);
  std::vector<DecodedEvent> events = decoded(getpid);
  EXPECT_THAT(events, Each(::testing::Field(&DecodedEvent::cpu, 1)));
  EXPECT_THAT(of_pid(events, on0.pid), IsEmpty()) << "the getpids on CPU 0";
  EXPECT_THAT(of_pid(events, on1.pid), SizeIs(Ge(70u))) << "the getpids on CPU 1";
}

// A numeric "!=" passes every value but the one named (trace_events_filter.c
// parse_pred: the equality test, negated): of 100 writes of 7 bytes and
// 100 of 9 to the probe target's fd, "count != 7" keeps exactly the 9s,
// and "count == 7" exactly the 7s.
TEST_F(Filter, NumericNotEqualPassesEveryValueButThatOne) {
  TRACEBED_REQUIRE(features::sys_enter_write);
  const Event write = inst().event("syscalls", "sys_enter_write");
  std::vector<std::string> args = {"write"};
  for (int i = 0; i < 100; ++i) args.insert(args.end(), {"7", "1", "9", "1"});
  for (const char* op : {"!=", "=="}) {
    SCOPED_TRACE(op);
    ASSERT_OK(inst().clear_trace());
    ASSERT_OK(write.set_filter(fmt::format("fd == 100 && count {} 7", op)));
    ASSERT_OK(write.enable());
    ProbeRun probe = run_target_only(args);
    ASSERT_OK(write.disable());
    std::vector<int64_t> counts = int_fields(of_pid(decoded(write), probe.pid), "count");
    EXPECT_THAT(counts, SizeIs(100));
    EXPECT_THAT(counts, Each(std::string(op) == "!=" ? 9 : 7));
    ASSERT_OK(inst().set_tracing_on(true));
  }
}

// A filter no switch matches records none of the switches an unfiltered
// instance sees in the same window (there are some: the sleeps).
TEST_F(Filter, FilterThatMatchesNothingRecordsNothing) {
  TRACEBED_REQUIRE(features::sched_events);
  tracefs::Event sw = inst().event("sched", "sched_switch");
  ASSERT_OK(sw.set_filter("prev_pid == 999999 && next_pid == 999999"));
  ASSERT_OK(sw.enable());
  const Instance& all = another_instance();
  ASSERT_OK(all.event("sched", "sched_switch").enable());
  sh("sleep 0.05; sleep 0.05");
  ASSERT_OK(inst().set_tracing_on(false));
  ASSERT_OK(all.set_tracing_on(false));
  EXPECT_THAT(trace_lines(inst()), IsEmpty());
  EXPECT_THAT(decoded(all, {{"sched", "sched_switch"}}), Not(IsEmpty())) << "the window had no switch at all";
}

// A filter of parentheses and blanks alone holds no predicate
// (trace_events_filter.c process_preds: nr_preds == 0) and is refused
// with EINVAL. The event's filter file shows it with an "Error:" line, as
// for any refused filter, and the event passes each of the probe target's
// getpid(2)s (its pid line's and 100 more).
TEST_F(Filter, FilterWithoutAPredicateIsRefused) {
  TRACEBED_REQUIRE(features::sys_enter_getpid);
  const Event getpid = inst().event("syscalls", "sys_enter_getpid");
  for (const char* empty : {"()", "( ( ) )", "(\t)"}) {
    auto refused = getpid.files().try_write("filter", empty);
    ASSERT_OK(refused);
    EXPECT_EQ(*refused, EINVAL) << "filter \"" << empty << "\"";
    EXPECT_THAT(getpid.filter().value(), StartsWith(std::string(empty) + "\nError:"));
  }
  ASSERT_OK(getpid.enable());
  ProbeRun probe = run_target_only({"getpid", "100"});
  ASSERT_OK(getpid.disable());
  EXPECT_THAT(of_pid(decoded(getpid), probe.pid), SizeIs(Ge(101u)));
}

TEST_F(Filter, ReadBackAndCleared) {
  tracefs::Event sw = inst().event("sched", "sched_switch");
  ASSERT_OK(sw.set_filter("next_pid == 1"));
  EXPECT_EQ(sw.filter().value(), "next_pid == 1");
  ASSERT_OK(sw.clear_filter());
  EXPECT_EQ(sw.filter().value(), "none");
}

// A system's filter is set on each of its events, and the system's own
// file keeps only its comment lines, an error shown there only when no
// event took the filter (trace_events_filter.c process_system_preds).
// And it filters: a shell sets "common_pid == <its pid>" on the sched
// system, then forks 5 children while sched_process_fork is on: exactly
// its 5 forks are recorded, with every other task's filtered out.
TEST_F(Filter, SystemFilterAppliesToItsEvents) {
  TRACEBED_REQUIRE(features::sched_events);
  ASSERT_OK(inst().files().write("events/sched/filter", "common_pid == 999999"));
  for (const char* e : {"sched_switch", "sched_wakeup", "sched_process_exec"})
    EXPECT_EQ(inst().event("sched", e).filter().value(), "common_pid == 999999") << e;
  auto system = inst().files().read("events/sched/filter");
  ASSERT_OK(system);
  EXPECT_THAT(trace_lines(*system), Each(StartsWith("#"))) << *system;

  const tracefs::Event fork = inst().event("sched", "sched_process_fork");
  ASSERT_OK(fork.enable());
  const int shell = std::stoi(sh(fmt::format(
      "sh -c 'echo \"common_pid == $$\" > {}; i=0; while [ $i -lt 5 ]; do (true); i=$((i+1)); done; echo $$'",
      inst().path("events/sched/filter"))));
  EXPECT_EQ(fork.filter().value(), "common_pid == " + std::to_string(shell));
  const std::vector<DecodedEvent> forks = decoded(fork);
  EXPECT_THAT(forks, SizeIs(5));
  EXPECT_THAT(forks, Each(::testing::Field(&DecodedEvent::pid, shell)));
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
  EXPECT_EQ((*log)[0].error, "Field not found");
  // Just past the field's name, plus one: predicate_parse hands parse_pred
  // the position after the predicate's first character.
  EXPECT_EQ((*log)[0].caret, 14u);
}

// A number operand has a buffer of 24 bytes (trace_events_filter.c
// parse_pred's num_buf, "big enough to hold an address"): 23 characters
// are taken (0x, twenty zeros, 1) and read back as written; 24 are
// refused with "Operand too long", the caret just past them (plus one,
// as for every predicate's error).
TEST_F(Filter, NumberOperandOfTwentyFourCharactersIsTooLong) {
  TRACEBED_REQUIRE(features::error_log);
  tracefs::Event sw = inst().event("sched", "sched_switch");
  const std::string fits = "prev_pid == 0x" + std::string(20, '0') + "1";
  ASSERT_OK(sw.set_filter(fits));
  EXPECT_EQ(sw.filter().value(), fits);
  ASSERT_OK(sw.clear_filter());
  const std::string too_long = "prev_pid == 0x" + std::string(21, '0') + "1";
  ASSERT_FALSE(sw.set_filter(too_long).ok()) << too_long;
  auto log = inst().error_log();
  ASSERT_OK(log);
  ASSERT_EQ(log->size(), 1u);
  EXPECT_EQ((*log)[0].command, too_long);
  EXPECT_EQ((*log)[0].error, "Operand too long");
  EXPECT_EQ((*log)[0].caret, too_long.size() + 1);
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
