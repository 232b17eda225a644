// The function tracer: filters, notrace, pid filters, function triggers
// (function_fixture.h).
#include <chrono>
#include <map>
#include <regex>

#include <fmt/format.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "suites/function/function_fixture.h"

namespace tracebed::suites {
namespace {

TEST_F(Function, FilterLimitsTracingToThatFunction) {
  ASSERT_OK(inst().set_ftrace_filter(kRead));
  EXPECT_THAT(inst().ftrace_filter().value().functions, ElementsAre("vfs_read"));
  ASSERT_OK(inst().set_tracer("function"));
  sh("cat /proc/version > /dev/null");
  ASSERT_OK(inst().set_tracing_on(false));
  auto lines = trace_lines(inst());
  ASSERT_THAT(lines, Not(IsEmpty()));
  EXPECT_THAT(lines, Each(HasSubstr(" vfs_read <-")));
}

// ftrace/func_set_ftrace_file.tc, func-filter-glob.tc: globs select sets.
TEST_F(Function, GlobSelectsEveryMatchingFunction) {
  ASSERT_OK(inst().set_ftrace_filter(std::vector<std::string>{"vfs_rea*"}));
  auto filter = inst().ftrace_filter();
  ASSERT_OK(filter);
  EXPECT_THAT(filter->functions, Contains("vfs_read"));
  EXPECT_THAT(filter->functions, Each(HasSubstr("vfs_rea")));
}

TEST_F(Function, NotraceRemovesFromTheFilter) {
  ASSERT_OK(inst().set_ftrace_filter(std::vector<std::string>{"vfs_read", "vfs_write"}));
  ASSERT_OK(inst().set_ftrace_notrace(std::vector<std::string>{"vfs_write"}));
  ASSERT_OK(inst().set_tracer("function"));
  sh("echo x > /dev/null; cat /proc/version > /dev/null");
  ASSERT_OK(inst().set_tracing_on(false));
  auto lines = trace_lines(inst());
  ASSERT_THAT(lines, Not(IsEmpty()));
  EXPECT_THAT(lines, Each(HasSubstr(" vfs_read <-")));
}

// Tracing sets up the top level at boot and an instance when it is made
// without an allocation failing (trace.h MEM_FAIL: each failure prints an
// "ERROR: ..." line, as trace.c does when an instance's function filter
// files cannot be made): with an instance made, the kernel's log has no
// such line, and the top level and the instance have those files. The
// message is printed once a boot: an instance made before this test's
// snapshot printed it there, where dmesg still shows it.
TEST_F(Function, TracingSetsUpWithoutAnAllocationError) {
  const tracefs::Instance top = fs().top();
  for (const tracefs::Instance* in : std::vector<const tracefs::Instance*>{&top, &inst()}) {
    SCOPED_TRACE(in->is_top() ? "top level" : "instance");
    for (const char* f : {"set_ftrace_filter", "set_ftrace_notrace", "set_ftrace_pid"})
      EXPECT_TRUE(in->files().has(f)) << f;
  }
  // MEM_FAIL's format has no newline, so its record stays open, unseen by
  // dmesg, until the next message: one of ours closes it. With or without
  // printk's time stamps (tinyconfig has none).
  sh("echo 'tracebed: instance made' > /dev/kmsg");
  EXPECT_EQ(sh("dmesg | grep -cE '(^|\\] )ERROR: ' || true"), "0\n") << sh("dmesg | grep -E '(^|\\] )ERROR: ' || true");
}

TEST_F(Function, UnknownFunctionIsRejected) {
  auto err = inst().files().try_write("set_ftrace_filter", "tracebed_no_such_function");
  ASSERT_OK(err);
  EXPECT_EQ(*err, EINVAL);
}

// A shell that waits on a FIFO of its own, then reads /proc/version kReads
// times with the read builtin: each read is a vfs_read of that shell's own
// pid (no child does it). Two of them do the same work, so what a pid
// filter lets through is counted beside what it keeps out.
constexpr int kReads = 20;

Result<int> spawn_reader(vm::Guest& g, const std::string& fifo) {
  auto made = g.sh(fmt::format("rm -f {0} && mkfifo {0}", fifo));
  if (!made) return made.error();
  if (!made->ok()) return Error{fmt::format("mkfifo {}: {}", fifo, made->err)};
  return g.agent().spawn({"sh", "-c",
                  fmt::format("read go < {}; i=0; while [ $i -lt {} ]; do read l < /proc/version; i=$((i+1)); done",
                              fifo, kReads)},
                 {}, fifo + ".out");
}

// The pid of each line of `trace` ("  sh-123  [001] ...").
std::map<int, int> lines_per_pid(const std::vector<std::string>& lines) {
  static const std::regex kTask(R"(-(\d+)\s+\[\d+\])");
  std::map<int, int> out;
  for (const auto& line : lines) {
    std::smatch m;
    if (std::regex_search(line, m, kTask)) ++out[std::stoi(m[1])];
  }
  return out;
}

int lines_of(const std::map<int, int>& per_pid, int pid) {
  auto it = per_pid.find(pid);
  return it == per_pid.end() ? 0 : it->second;
}

// Starts both readers and waits for them to finish their reads.
void run_readers(vm::Guest& g, int first, int second) {
  ASSERT_OK(g.sh("echo go > /tmp/tb-reader-a; echo go > /tmp/tb-reader-b"));
  for (int pid : {first, second}) {
    auto w = g.agent().kill(pid, 0, std::chrono::seconds(60));
    ASSERT_OK(w);
    ASSERT_TRUE(w->exited) << "reader " << pid << " did not finish its reads";
    EXPECT_EQ(w->exit_code, 0);
  }
}

// func-filter-pid.tc: set_ftrace_pid limits function events to that pid.
// The filtered-in reader's every read is there; the other's, none.
TEST_F(Function, PidFilterLimitsToThatPid) {
  TRACEBED_REQUIRE(features::set_ftrace_pid);
  auto& a = guest();
  auto in = spawn_reader(a, "/tmp/tb-reader-a");
  auto out = spawn_reader(a, "/tmp/tb-reader-b");
  ASSERT_OK(in);
  ASSERT_OK(out);
  ASSERT_OK(inst().set_ftrace_filter(kRead));
  ASSERT_OK(inst().set_ftrace_pids(std::vector<int>{*in}));
  EXPECT_THAT(inst().ftrace_pids().value(), ElementsAre(*in));
  ASSERT_OK(inst().set_tracer("function"));
  run_readers(a, *in, *out);
  ASSERT_OK(inst().set_tracing_on(false));
  auto per_pid = lines_per_pid(trace_lines(inst()));
  EXPECT_GE(lines_of(per_pid, *in), kReads) << "each read of the filtered-in reader is a vfs_read";
  EXPECT_EQ(lines_of(per_pid, *out), 0);
  for (const auto& [pid, n] : per_pid) EXPECT_EQ(pid, *in) << n << " lines of pid " << pid;
  // The filter gone, every task is traced again.
  ASSERT_OK(inst().set_ftrace_pids({}));
  ASSERT_OK(inst().set_tracing_on(true));
  sh("cat /proc/version > /dev/null");
  EXPECT_THAT(trace_lines(inst()).size(), Gt(static_cast<size_t>(lines_of(per_pid, *in))));
}

// The notrace reader's reads are all gone; the same reads of the other
// reader are all there.
TEST_F(Function, NotracePidExcludesThatPid) {
  TRACEBED_REQUIRE(features::set_ftrace_notrace_pid);
  auto& a = guest();
  auto out = spawn_reader(a, "/tmp/tb-reader-a");
  auto in = spawn_reader(a, "/tmp/tb-reader-b");
  ASSERT_OK(out);
  ASSERT_OK(in);
  ASSERT_OK(inst().set_ftrace_filter(kRead));
  ASSERT_OK(inst().set_ftrace_notrace_pids(std::vector<int>{*out}));
  EXPECT_THAT(inst().ftrace_notrace_pids().value(), ElementsAre(*out));
  ASSERT_OK(inst().set_tracer("function"));
  run_readers(a, *out, *in);
  ASSERT_OK(inst().set_tracing_on(false));
  auto per_pid = lines_per_pid(trace_lines(inst()));
  EXPECT_EQ(lines_of(per_pid, *out), 0);
  EXPECT_GE(lines_of(per_pid, *in), kReads) << "the reader not excluded did the same reads";
}

// func_traceonoff_triggers.tc: a function trigger stops the buffer.
TEST_F(Function, TraceoffFunctionTriggerStopsTheBuffer) {
  TRACEBED_COVERS("ftracetest: ftrace/func_traceonoff_triggers.tc");
  TRACEBED_REQUIRE(features::function_triggers);
  ASSERT_OK(inst().set_ftrace_filter(kRead));
  ASSERT_OK(inst().add_function_trigger(FunctionTrigger::traceoff("vfs_read").count(1)));
  auto filter = inst().ftrace_filter();
  ASSERT_OK(filter);
  ASSERT_EQ(filter->triggers.size(), 1u);
  EXPECT_EQ(filter->triggers[0].function, "vfs_read");
  EXPECT_EQ(filter->triggers[0].name, "traceoff");
  // Counted, and likely spent already: reading set_ftrace_filter calls
  // vfs_read, and a function probe fires whatever the current tracer.
  EXPECT_TRUE(filter->triggers[0].count.has_value());
  sh("cat /proc/version > /dev/null");
  EXPECT_FALSE(inst().tracing_on().value());
  ASSERT_OK(inst().remove_function_trigger(FunctionTrigger::traceoff("vfs_read").count(1)));
  EXPECT_THAT(inst().ftrace_filter().value().triggers, IsEmpty());
}

// traceoff:N and traceon:N act N times, each time the state changes
// (trace_functions.c update_traceon_count): on lseek(2)'s function, which
// the agent's reads do not call, traceoff:3 turns tracing off at three
// rounds of "on, one lseek", its count falling 2, 1, 0, and the fourth
// lseek leaves it on; traceon:2 likewise, from off.
TEST_F(Function, TraceonAndTraceoffProbesActExactlyTheirCount) {
  TRACEBED_REQUIRE(features::function_triggers);
  const std::string lseek = lseek_probe().function;
  const std::vector<std::string> one_lseek = {"lseek", "/etc/tracebed/release", "0", "0"};
  for (bool off : {true, false}) {
    SCOPED_TRACE(off ? "traceoff:3" : "traceon:2");
    const uint64_t n = off ? 3 : 2;
    FunctionTrigger t = off ? FunctionTrigger::traceoff(lseek).count(n) : FunctionTrigger::traceon(lseek).count(n);
    ASSERT_OK(inst().add_function_trigger(t));
    for (uint64_t round = 1; round <= n + 1; ++round) {
      SCOPED_TRACE(::testing::Message() << "round " << round);
      ASSERT_OK(inst().set_tracing_on(off));
      run_probe_target(*this, one_lseek);
      const bool acted = round <= n;
      EXPECT_EQ(inst().tracing_on().value(), acted ? !off : off) << (acted ? "the probe did not act" : "acted past its count");
      auto probes = inst().ftrace_filter().value().triggers;
      ASSERT_THAT(probes, SizeIs(1));
      EXPECT_EQ(probes[0].count, std::optional<uint64_t>(round <= n ? n - round : 0));
    }
    ASSERT_OK(inst().remove_function_trigger(t));
  }
  ASSERT_OK(inst().set_tracing_on(true));
}

const Feature kNoRepeats = Feature::option("func-no-repeats");

// func-no-repeats (trace_functions.c is_repeat_check): 100 lseek(2)s of
// the probe target, pinned to CPU 0, call lseek's function from the same
// parent each time. Without the option each call is a line; with it the
// first is a line and the other 99 one "(repeats: 99, ...)" line, written
// when the next traced function (do_exit, the target ending) comes.
TEST_F(Function, NoRepeatsFoldsEachRunOfOneCallIntoItsCount) {
  TRACEBED_REQUIRE(kNoRepeats);
  const std::string lseek = lseek_probe().function;
  ASSERT_OK(inst().set_ftrace_filter(std::vector<std::string>{lseek, "do_exit"}));
  ASSERT_OK(inst().set_tracer("function"));
  std::string calls = " lseek /etc/tracebed/release";
  for (int i = 0; i < 100; ++i) calls += " 0 0";
  const std::regex line(" " + lseek + " <-(\\S+)( \\(repeats: ([0-9]+),)?");
  uint64_t unfolded = 0;
  for (bool folded : {false, true}) {
    SCOPED_TRACE(folded ? "func-no-repeats" : "every call");
    ASSERT_OK(inst().set_option("func-no-repeats", folded));
    ASSERT_OK(inst().clear_trace());
    ASSERT_OK(inst().set_tracing_on(true));
    ProbeRun run = parse_probe_output(
        sh(fmt::format("sh -c 'taskset -p 1 $$ > /dev/null && exec {}{}'", kProbeTarget, calls)));
    ASSERT_OK(inst().set_tracing_on(false));
    uint64_t plain = 0, repeated = 0, repeat_lines = 0;
    for (const std::string& l : trace_lines(inst())) {
      std::smatch m;
      if (l.find("-" + std::to_string(run.pid) + " ") == std::string::npos || !std::regex_search(l, m, line)) continue;
      if (m[3].matched) {
        ++repeat_lines;
        repeated += std::stoull(m[3]);
      } else {
        ++plain;
      }
    }
    if (folded) {
      // The same program makes the same calls: the lines and their repeat
      // counts add up to exactly the calls the unfolded run printed.
      EXPECT_EQ(plain + repeated, unfolded) << "every lseek(2), folded into its count";
      EXPECT_GE(repeat_lines, 1u);
      EXPECT_LE(plain, 3u) << "each call a line of its own";
    } else {
      unfolded = plain;
      EXPECT_GE(plain, 100u) << "every lseek(2) a line";
      EXPECT_LE(plain, 102u);
      EXPECT_EQ(repeat_lines, 0u);
    }
  }
  ASSERT_OK(inst().set_option("func-no-repeats", false));
}

TEST_F(Function, ResetClearsFiltersAndFunctionTriggers) {
  TRACEBED_REQUIRE(features::function_triggers);
  ASSERT_OK(inst().set_ftrace_filter(kRead));
  ASSERT_OK(inst().add_function_trigger(FunctionTrigger::stacktrace("vfs_write").count(3)));
  ASSERT_OK(tracefs::reset(inst()));
  auto filter = inst().ftrace_filter();
  ASSERT_OK(filter);
  EXPECT_THAT(filter->functions, IsEmpty());
  EXPECT_THAT(filter->triggers, IsEmpty());
}

}  // namespace
}  // namespace tracebed::suites
