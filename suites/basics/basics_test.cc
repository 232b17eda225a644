// ftracetest 00basic, in spirit, through the control layer.
#include <algorithm>
#include <cerrno>
#include <cstring>
#include <map>
#include <numeric>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "framework/testing/tracefs_fixture.h"
#include "framework/tracefs/tracefs_text.h"

namespace tracebed::suites {
namespace {

using Basics = TracefsTest;

// A shell pinned to `cpu` that writes "<prefix>-0" ... "<prefix>-<n-1>" to
// the instance's trace_marker: one ftrace:print each, all on that CPU, in
// this order.
std::string marker_loop(const Instance& in, const std::string& prefix, int n, int cpu) {
  return fmt::format("taskset {:x} sh -c 'i=0; while [ $i -lt {} ]; do echo {}-$i > {}; i=$((i+1)); done'",
                     1u << cpu, n, prefix, in.path("trace_marker"));
}

// The N of each "<prefix>-N" marker in these lines of trace text, in order.
std::vector<int64_t> marker_numbers(const std::vector<std::string>& lines, const std::string& prefix) {
  const std::regex marker(" " + prefix + "-([0-9]+)\\s*$");
  std::vector<int64_t> out;
  for (const std::string& l : lines) {
    std::smatch m;
    if (std::regex_search(l, m, marker)) out.push_back(std::stoll(m[1]));
  }
  return out;
}

// 0, 1, ..., n-1.
std::vector<int64_t> upto(int n) {
  std::vector<int64_t> v(static_cast<size_t>(n));
  std::iota(v.begin(), v.end(), 0);
  return v;
}

// The bufs of those markers, newline and all, as ftrace:print holds them.
std::vector<std::string> marker_bufs(const std::string& prefix, int n) {
  std::vector<std::string> out;
  for (int i = 0; i < n; ++i) out.push_back(fmt::format("{}-{}\n", prefix, i));
  return out;
}

// basic1.tc: the files every tracefs has, at the top level and (but
// README) in an instance, and what each says when read.
TEST_F(Basics, CoreFilesAreThereAndAnswer) {
  TRACEBED_COVERS("ftracetest: 00basic/basic1.tc");
  const tracefs::Instance top_level = fs().top();
  for (const tracefs::Instance* in : std::initializer_list<const tracefs::Instance*>{&top_level, &inst()}) {
    SCOPED_TRACE(in->is_top() ? "top level" : "instance");
    for (const char* f : {"trace", "tracing_on", "trace_pipe"}) EXPECT_TRUE(in->files().has(f)) << f;
    EXPECT_THAT(in->files().read("tracing_on").value(), AnyOf("0\n", "1\n"));
    EXPECT_THAT(in->read_trace().value(), StartsWith("# tracer: "));
  }
  EXPECT_TRUE(top_level.files().has("README"));
  EXPECT_THAT(fs().readme().value(), HasSubstr("tracing_on"));
}

// basic2.tc: every tracer the instance offers can be set, and nop put back.
TEST_F(Basics, EveryAvailableTracerCanBeSet) {
  TRACEBED_COVERS("ftracetest: 00basic/basic2.tc");
  auto tracers = inst().available_tracers();
  ASSERT_OK(tracers);
  ASSERT_THAT(*tracers, Contains("nop"));
  // One function in the filter: function tracers then patch one call site
  // instead of tens of thousands (tens of seconds under TCG).
  if (inst().files().has("set_ftrace_filter")) ASSERT_OK(inst().set_ftrace_filter(std::vector<std::string>{"vfs_read"}));
  for (const std::string& t : *tracers) {
    SCOPED_TRACE(t);
    EXPECT_OK(inst().set_tracer(t));
    EXPECT_EQ(inst().current_tracer().value(), t);
  }
  ASSERT_OK(inst().set_tracer("nop"));
}

TEST_F(Basics, UnknownTracerIsRejectedWithEinval) {
  auto err = inst().files().try_write("current_tracer", "no_such_tracer");
  ASSERT_OK(err);
  EXPECT_EQ(*err, EINVAL);
  EXPECT_EQ(inst().current_tracer().value(), "nop");
}

// basic3.tc: every clock can be selected, and is then the one in []; and
// the records after the switch are stamped by it. Ten markers from one CPU,
// a 500 ms sleep (longer than a loaded host stalls a vCPU), ten more: in page order they are all there, in order, on
// that CPU, with stamps that never go back. `counter` counts them one by
// one, across the sleep too; the nanosecond clocks step by at least the
// sleep across it and by less anywhere else; `uptime` (jiffies in USER_HZ,
// kernel/trace/trace_clock.c trace_clock_jiffies) steps by about 50; any
// other clock (x86-tsc, ...) steps most across the sleep.
TEST_F(Basics, EveryTraceClockCanBeSelected) {
  TRACEBED_COVERS("ftracetest: 00basic/basic3.tc");
  auto clocks = inst().trace_clock();
  ASSERT_OK(clocks);
  const int cpu = inst().cpus().value().front();
  const std::set<std::string> nanoseconds = {"local", "global", "perf", "mono", "mono_raw", "boot", "tai"};
  std::vector<std::string> want = marker_bufs("tbclock-a", 10), after = marker_bufs("tbclock-b", 10);
  want.insert(want.end(), after.begin(), after.end());
  for (const std::string& c : clocks->choices) {
    SCOPED_TRACE(c);
    ASSERT_OK(inst().set_trace_clock(c));
    EXPECT_EQ(inst().trace_clock().value().current, c);
    ASSERT_OK(inst().clear_trace());
    ASSERT_OK(inst().set_tracing_on(true));
    // /proc/uptime (boot time, in hundredths) around the two loops: the
    // elapsed time by a clock that is not the tick's.
    const std::string uptimes = sh("cut -d' ' -f1 /proc/uptime; " + marker_loop(inst(), "tbclock-a", 10, cpu) +
                                   "; sleep 0.5; " + marker_loop(inst(), "tbclock-b", 10, cpu) +
                                   "; cut -d' ' -f1 /proc/uptime");
    std::vector<DecodedEvent> marks = decoded({"ftrace", "print"}, Order::page);
    ASSERT_THAT(str_fields(marks, "buf"), ElementsAreArray(want));
    EXPECT_THAT(marks, Each(::testing::Field(&DecodedEvent::cpu, cpu)));
    std::vector<uint64_t> steps;
    for (size_t i = 0; i + 1 < marks.size(); ++i) {
      ASSERT_GE(marks[i + 1].ts, marks[i].ts) << "the stamp of marker " << i + 1 << " is before the one of " << i;
      steps.push_back(marks[i + 1].ts - marks[i].ts);
    }
    const uint64_t across = steps[9];  // from tbclock-a-9 to tbclock-b-0
    uint64_t others = 0;
    for (size_t i = 0; i < steps.size(); ++i)
      if (i != 9) others = std::max(others, steps[i]);
    if (c == "counter") {
      EXPECT_THAT(steps, Each(1u)) << "counter gives each record the next count";
    } else if (nanoseconds.contains(c)) {
      EXPECT_GE(across, 450'000'000u) << "a 500 ms sleep, in ns";
      EXPECT_LT(across, 60'000'000'000u) << "a 500 ms sleep, in ns";
      EXPECT_GT(across, others) << "a step between two markers outgrew the 500 ms sleep";
    } else if (c == "uptime") {
      // jiffies in USER_HZ ticks (100 a second): at most the hundredths
      // /proc/uptime saw pass (+1 for where each edge fell), and at least
      // half the sleep's 50: a kernel with a periodic tick (tinyconfig's
      // HZ_PERIODIC) counts a jiffy per tick interrupt, and a loaded host
      // delays some past the next (43 of 50 seen).
      std::istringstream in(uptimes);
      double before = 0, after = 0;
      ASSERT_TRUE(in >> before >> after) << "/proc/uptime read: " << uptimes;
      const auto hundredths = static_cast<uint64_t>((after - before) * 100 + 0.5);
      EXPECT_GE(across, 25u) << "a 500 ms sleep, in USER_HZ ticks";
      EXPECT_LE(across, hundredths + 1) << "a 500 ms sleep, in USER_HZ ticks, within " << hundredths
                                        << " hundredths of /proc/uptime";
    } else {
      EXPECT_GT(across, others) << "a step between two markers outgrew the 500 ms sleep";
    }
  }
}

// trace_clock takes only a clock it lists (trace.c tracing_clock_write:
// the name, stripped, must be one of trace_clocks[], and the write under
// 64 bytes): names of 1, 15, 16, 17, 63, 64, 65 and 256 characters and a
// page are refused with EINVAL, and the clock stays the one chosen.
TEST_F(Basics, TraceClockRefusesUnknownAndOverlongNames) {
  ASSERT_OK(inst().set_trace_clock("global"));
  for (size_t n : {1u, 15u, 16u, 17u, 63u, 64u, 65u, 256u, 4096u}) {
    SCOPED_TRACE(::testing::Message() << n << " characters");
    auto err = inst().files().try_write("trace_clock", std::string(n, 'q'));
    ASSERT_OK(err);
    EXPECT_EQ(*err, EINVAL);
    EXPECT_EQ(inst().trace_clock().value().current, "global");
  }
}

TEST_F(Basics, TracingOffRecordsNothing) {
  ASSERT_OK(inst().set_tracing_on(false));
  EXPECT_FALSE(inst().tracing_on().value());
  ASSERT_OK(inst().event("sched", "sched_switch").enable());
  sh("sleep 0.1");
  EXPECT_THAT(trace_lines(inst()), IsEmpty());
  ASSERT_OK(inst().set_tracing_on(true));
  sh("sleep 0.1");
  EXPECT_THAT(trace_lines(inst()), Not(IsEmpty()));
}

// trace_pipe.tc: trace_pipe consumes what it shows, trace does not. 300
// markers from one CPU: `trace` shows each once, in order, twice over;
// trace_pipe gives each once, in order, and then `trace` has none of them;
// a second read gives only the 50 written since.
TEST_F(Basics, TracePipeConsumesTraceDoesNot) {
  TRACEBED_COVERS("ftracetest: 00basic/trace_pipe.tc");
  const int cpu = inst().cpus().value().front();
  sh(marker_loop(inst(), "tbpipe-a", 300, cpu));
  EXPECT_THAT(marker_numbers(trace_lines(inst()), "tbpipe-a"), ElementsAreArray(upto(300)));
  EXPECT_THAT(marker_numbers(trace_lines(inst()), "tbpipe-a"), ElementsAreArray(upto(300))) << "read again";
  auto pipe = inst().read_trace_pipe();
  ASSERT_OK(pipe);
  EXPECT_THAT(marker_numbers(trace_lines(*pipe), "tbpipe-a"), ElementsAreArray(upto(300)));
  EXPECT_THAT(marker_numbers(trace_lines(inst()), "tbpipe-a"), IsEmpty()) << "trace_pipe did not consume";

  sh(marker_loop(inst(), "tbpipe-b", 50, cpu));
  auto again = inst().read_trace_pipe();
  ASSERT_OK(again);
  EXPECT_THAT(marker_numbers(trace_lines(*again), "tbpipe-a"), IsEmpty()) << "read twice";
  EXPECT_THAT(marker_numbers(trace_lines(*again), "tbpipe-b"), ElementsAreArray(upto(50)));
}

// poll(2) on trace_pipe (trace.c trace_poll, ring_buffer.c
// ring_buffer_poll_wait): ready exactly when records wait. With
// buffer_percent 0 a CPU's pipe wakes on any record (above it, on the
// watermark). Empty, both the instance's pipe and CPU a's time out; one
// marker on CPU a makes both ready at once, and CPU b's (still empty)
// not; read out, the instance's times out again; and a poll already
// waiting on CPU a's pipe wakes when a marker is written there later.
TEST_F(Basics, PollOnTracePipeIsReadyExactlyWhenRecordsWait) {
  TRACEBED_REQUIRE(tracefs::features::buffer_percent);
  const std::vector<int> cpus = inst().cpus().value();
  const int a = cpus.front();
  ASSERT_OK(inst().files().write("buffer_percent", "0"));
  const std::string all = inst().path("trace_pipe");
  auto cpu_pipe = [&](int cpu) { return inst().path(fmt::format("per_cpu/cpu{}/trace_pipe", cpu)); };
  auto ready = [&](const std::string& pipe, int timeout_ms) {
    return poll_file(*this, "in", pipe, timeout_ms, {.before = "", .unread = true}).revents & kPollIn;
  };
  EXPECT_FALSE(ready(all, 200)) << "the instance's empty trace_pipe polls ready";
  EXPECT_FALSE(ready(cpu_pipe(a), 200)) << "CPU " << a << "'s empty trace_pipe polls ready";

  sh(marker_loop(inst(), "tbpoll-a", 1, a));
  EXPECT_TRUE(ready(all, 0)) << "a marker waits, and the instance's trace_pipe does not poll ready";
  EXPECT_TRUE(ready(cpu_pipe(a), 0)) << "a marker waits on CPU " << a << ", and its trace_pipe does not poll ready";
  if (cpus.size() > 1) {
    EXPECT_FALSE(ready(cpu_pipe(cpus[1]), 100)) << "CPU " << cpus[1] << " has no record";
  }

  auto pipe = inst().read_trace_pipe();
  ASSERT_OK(pipe);
  EXPECT_THAT(marker_numbers(trace_lines(*pipe), "tbpoll-a"), ElementsAre(0));
  EXPECT_FALSE(ready(all, 200)) << "read out, the instance's trace_pipe still polls ready";

  Polled woken = poll_file(*this, "in", cpu_pipe(a), 8000,
                           {.before = "(sleep 1; " + marker_loop(inst(), "tbpoll-b", 1, a) + ") & ", .unread = true});
  EXPECT_EQ(woken.revents & kPollIn, kPollIn) << "a marker written while a poll waited did not wake it";
  EXPECT_GE(woken.elapsed_ms, 500) << "woken before the marker was written";
  EXPECT_LT(woken.elapsed_ms, 8000);
}

TEST_F(Basics, ClearingTraceEmptiesEveryCpu) {
  ASSERT_OK(inst().event("sched", "sched_switch").enable());
  sh("sleep 0.1");
  ASSERT_THAT(trace_lines(inst()), Not(IsEmpty()));
  ASSERT_OK(inst().set_tracing_on(false));
  ASSERT_OK(inst().clear_trace());
  EXPECT_THAT(trace_lines(inst()), IsEmpty());
}

// ringbuffer_size.tc: resize all CPUs, then one; the others keep theirs.
TEST_F(Basics, BufferResizeTakesEffectPerCpu) {
  TRACEBED_COVERS("ftracetest: 00basic/ringbuffer_size.tc");
  auto cpus = inst().cpus();
  ASSERT_OK(cpus);
  ASSERT_FALSE(cpus->empty());
  ASSERT_OK(inst().set_buffer_size_kb(256));
  uint64_t all = inst().buffer_size().value().kb.value_or(0);
  EXPECT_GE(all, 256u);
  ASSERT_OK(inst().set_buffer_size_kb(cpus->front(), 64));
  uint64_t one = inst().buffer_size(cpus->front()).value().kb.value_or(0);
  EXPECT_GE(one, 64u);
  EXPECT_LT(one, all);
  for (size_t i = 1; i < cpus->size(); ++i) {
    SCOPED_TRACE(::testing::Message() << "cpu" << (*cpus)[i]);
    EXPECT_EQ(inst().buffer_size((*cpus)[i]).value().kb, all);
  }
  if (cpus->size() > 1) {
    EXPECT_TRUE(inst().buffer_size().value().cpus_differ());
  }
  // The total is the sum over CPUs.
  uint64_t sum = 0;
  for (int cpu : *cpus) sum += inst().buffer_size(cpu).value().kb.value_or(0);
  EXPECT_EQ(inst().buffer_total_size_kb().value(), sum);
}

// A CPU's buffer resized from a task on that CPU (ring_buffer_resize
// updates its pages there, between migrate_disable() and migrate_enable())
// and from another CPU (a work item on it): neither leaves anything pinned
// to the CPU, so it goes offline within seconds and comes back with the
// size it was given, and records on it again. A resize that left the CPU
// pinned would make the offline wait for ever (balance_hotplug_wait).
TEST_F(Basics, CpuWhoseBufferWasResizedCanGoOfflineAndBack) {
  const std::string online = "/sys/devices/system/cpu/cpu1/online";
  if (sh("test -w " + online + " && cat " + online + " || echo none") != "1\n")
    GTEST_SKIP() << "needs CPU hotplug: no writable " << online << " with CPU 1 online (HOTPLUG_CPU)";
  ASSERT_OK(inst().set_buffer_size_kb(128));
  // From CPU 1: its own buffer directly, CPU 0's through a work item.
  sh(fmt::format("taskset 2 sh -c 'echo 64 > {} && echo 96 > {}'", inst().path("per_cpu/cpu1/buffer_size_kb"),
                 inst().path("per_cpu/cpu0/buffer_size_kb")));
  // From CPU 0: CPU 1's through a work item.
  sh(fmt::format("taskset 1 sh -c 'echo 80 > {}'", inst().path("per_cpu/cpu1/buffer_size_kb")));
  // Whole sub-buffers: a size reads back rounded up to them.
  const uint64_t cpu1_kb = inst().buffer_size(1).value().kb.value_or(0);
  const uint64_t cpu0_kb = inst().buffer_size(0).value().kb.value_or(0);
  ASSERT_GE(cpu1_kb, 80u);
  ASSERT_LT(cpu1_kb, 96u);
  ASSERT_GE(cpu0_kb, 96u);
  ASSERT_LT(cpu0_kb, 128u);
  // The write blocks in the kernel while the CPU cannot go: in the
  // background, and waited for here with a bound.
  auto wait_for = [&](const char* state) {
    return sh(fmt::format("i=0; while [ \"$(cat {0})\" != {1} ] && [ $i -lt 100 ]; do sleep 0.2; i=$((i+1)); done; cat {0}",
                          online, state));
  };
  sh("(echo 0 > " + online + ") > /dev/null 2>&1 &");
  ASSERT_EQ(wait_for("0"), "0\n") << "CPU 1 did not go offline within 20 s of its buffer's resize";
  sh("echo 1 > " + online);
  ASSERT_EQ(wait_for("1"), "1\n");
  EXPECT_EQ(inst().buffer_size(1).value().kb, cpu1_kb) << "CPU 1's buffer after it came back";
  sh(marker_loop(inst(), "tbhotplug", 20, 1));
  EXPECT_THAT(marker_numbers(trace_lines(inst()), "tbhotplug"), ElementsAreArray(upto(20)));
}

// Resizing a buffer that holds records keeps them (kernel/trace/
// ring_buffer.c: growing inserts empty pages before the head, shrinking
// takes pages after the tail, empty while the data is well short of the new
// size; trace.c resizes with recording stopped and resets nothing): 200
// markers written at 128 KiB are all there, in order, after every CPU grew
// to 512 KiB and after their CPU shrank to 64 KiB, with the 100 written
// afterwards behind them.
TEST_F(Basics, ResizingKeepsTheRecordsInTheBuffer) {
  const int cpu = inst().cpus().value().front();
  ASSERT_OK(inst().set_buffer_size_kb(128));
  sh(marker_loop(inst(), "tbresize-a", 200, cpu));
  ASSERT_THAT(marker_numbers(trace_lines(inst()), "tbresize-a"), ElementsAreArray(upto(200)));
  ASSERT_OK(inst().set_buffer_size_kb(512));
  EXPECT_GE(inst().buffer_size(cpu).value().kb.value_or(0), 512u);
  EXPECT_THAT(marker_numbers(trace_lines(inst()), "tbresize-a"), ElementsAreArray(upto(200))) << "after growing";
  ASSERT_OK(inst().set_buffer_size_kb(cpu, 64));
  const uint64_t shrunk = inst().buffer_size(cpu).value().kb.value_or(0);
  EXPECT_GE(shrunk, 64u);
  EXPECT_LT(shrunk, 512u);
  EXPECT_THAT(marker_numbers(trace_lines(inst()), "tbresize-a"), ElementsAreArray(upto(200))) << "after shrinking";
  sh(marker_loop(inst(), "tbresize-b", 100, cpu));
  std::vector<std::string> want = marker_bufs("tbresize-a", 200), after = marker_bufs("tbresize-b", 100);
  want.insert(want.end(), after.begin(), after.end());
  EXPECT_THAT(str_fields(decoded({"ftrace", "print"}, Order::page), "buf"), ElementsAreArray(want));
}

TEST_F(Basics, ZeroSizedBufferIsRejected) {
  // kernel/trace/trace.c tracing_entries_write: "must have at least 1 entry".
  auto err = inst().files().try_write("buffer_size_kb", "0");
  ASSERT_OK(err);
  EXPECT_EQ(*err, EINVAL);
}

// The hex option (trace.c print_hex_fmt): each record is its pid, CPU and
// time stamp in hex, then what its event's own hex printer adds
// (trace_output.c: the function tracer's ip and parent ip; for a marker,
// which has none, trace_nop_print's "type: <id>"). The function tracer on getpid's function and the probe
// target's 20 calls, and 10 markers, read from `trace` with hex on: every
// line is one decoded record's fields, digit for digit.
TEST_F(Basics, HexOptionPrintsEachRecordsFieldsInHex) {
  TRACEBED_REQUIRE(tracefs::features::function_tracer);
  TRACEBED_REQUIRE(tracefs::features::dynamic_ftrace);
  std::string fn;
  auto functions = fs().top().files().read("available_filter_functions");
  ASSERT_OK(functions);
  for (const char* c : {"__x64_sys_getpid", "__do_sys_getpid"})
    for (std::string_view line : tracefs::split_lines(*functions))
      if (fn.empty() && line == c) fn = c;
  ASSERT_FALSE(fn.empty()) << "available_filter_functions lists no getpid function";
  ASSERT_OK(inst().set_ftrace_filter(std::vector<std::string>{fn}));
  ASSERT_OK(inst().set_tracer("function"));
  const int target = run_target({"getpid", "20"}).pid;
  sh(marker_loop(inst(), "tbhex", 10, inst().cpus().value().front()));
  ASSERT_OK(inst().set_tracing_on(false));
  ASSERT_OK(inst().set_option("hex", true));
  std::multiset<std::vector<std::string>> printed;
  for (const std::string& l : trace_lines(inst())) {
    auto words = tracefs::split_words(l);
    printed.insert(std::vector<std::string>(words.begin(), words.end()));
  }
  ASSERT_OK(inst().set_option("hex", false));
  const std::string print_id = std::to_string(inst().event("ftrace", "print").id().value());
  std::multiset<std::vector<std::string>> want;
  size_t functions_seen = 0, markers = 0;
  for (const DecodedEvent& e : decoded({{"ftrace", "function"}, {"ftrace", "print"}})) {
    std::vector<std::string> w = {fmt::format("{:08x}", static_cast<uint32_t>(e.pid)),
                                  fmt::format("{:08x}", static_cast<uint32_t>(e.cpu)), fmt::format("{:016x}", e.ts)};
    if (e.name == "function") {
      functions_seen += e.pid == target;
      w.push_back(fmt::format("{:016x}", static_cast<uint64_t>(int_field(e, "ip"))));
      w.push_back(fmt::format("{:016x}", static_cast<uint64_t>(int_field(e, "parent_ip"))));
    } else {
      // trace_nop_print: "type: <the event's id>".
      markers += str_field(e, "buf").starts_with("tbhex-");
      w.push_back("type:");
      w.push_back(print_id);
    }
    want.insert(w);
  }
  ASSERT_OK(inst().set_tracer("nop"));
  EXPECT_EQ(functions_seen, 21u) << "the target's getpid calls: its pid line's and 20";
  EXPECT_EQ(markers, 10u);
  EXPECT_EQ(printed, want);
}

// getpid's function in available_filter_functions, for the output options' tests.
std::string getpid_function(const tracefs::Instance& top) {
  auto functions = top.files().read("available_filter_functions");
  EXPECT_TRUE(functions.ok());
  if (!functions) return "";
  for (const char* c : {"__x64_sys_getpid", "__do_sys_getpid"})
    for (std::string_view line : tracefs::split_lines(*functions))
      if (line == c) return c;
  ADD_FAILURE() << "available_filter_functions lists no getpid function";
  return "";
}

// The raw option (trace.c print_raw_fmt): pid, CPU and time stamp in
// decimal, then the event's raw printer (trace_output.c trace_fn_raw: ip and
// parent ip in %lx; trace_print_raw, a marker: "# ip buf"). Then the bin
// option (print_bin_fmt): the same fields as the machine's bytes, pid and
// CPU 4 bytes each, the time stamp and trace_fn_bin's two addresses 8: 32
// bytes a call after the header, which does not change with the option.
// The function tracer on getpid and the probe target's 20 calls (and 10
// markers for raw): every raw line is one decoded record, digit for digit,
// and the binary records are the raw lines' numbers, in the same order.
TEST_F(Basics, RawAndBinOptionsPrintEachRecordsFields) {
  TRACEBED_REQUIRE(tracefs::features::function_tracer);
  TRACEBED_REQUIRE(tracefs::features::dynamic_ftrace);
  const std::string fn = getpid_function(fs().top());
  ASSERT_FALSE(fn.empty());
  ASSERT_OK(inst().set_ftrace_filter(std::vector<std::string>{fn}));
  ASSERT_OK(inst().set_tracer("function"));
  int target = run_target({"getpid", "20"}).pid;
  sh(marker_loop(inst(), "tbraw", 10, inst().cpus().value().front()));
  ASSERT_OK(inst().set_tracing_on(false));
  ASSERT_OK(inst().set_option("raw", true));
  auto raw_text = inst().read_trace();
  ASSERT_OK(raw_text);
  ASSERT_OK(inst().set_option("raw", false));
  std::multiset<std::vector<std::string>> printed;
  for (const std::string& l : trace_lines(*raw_text)) {
    auto words = tracefs::split_words(l);
    printed.insert(std::vector<std::string>(words.begin(), words.end()));
  }
  std::multiset<std::vector<std::string>> want;
  size_t functions_seen = 0, markers = 0;
  for (const DecodedEvent& e : decoded({{"ftrace", "function"}, {"ftrace", "print"}})) {
    std::vector<std::string> w = {std::to_string(e.pid), std::to_string(e.cpu), std::to_string(e.ts)};
    if (e.name == "function") {
      functions_seen += e.pid == target;
      w.push_back(fmt::format("{:x}", static_cast<uint64_t>(int_field(e, "ip"))));
      w.push_back(fmt::format("{:x}", static_cast<uint64_t>(int_field(e, "parent_ip"))));
    } else {
      std::string buf(str_field(e, "buf"));
      markers += buf.starts_with("tbraw-");
      while (!buf.empty() && buf.back() == '\n') buf.pop_back();
      w.push_back("#");
      w.push_back(fmt::format("{:x}", static_cast<uint64_t>(int_field(e, "ip"))));
      w.push_back(buf);
    }
    want.insert(w);
  }
  EXPECT_EQ(functions_seen, 21u) << "the target's getpid calls: its pid line's and 20";
  EXPECT_EQ(markers, 10u);
  EXPECT_EQ(printed, want);

  // bin: functions alone (a marker has no binary printer: trace_nop_print's text).
  ASSERT_OK(inst().clear_trace());
  ASSERT_OK(inst().set_tracing_on(true));
  target = run_target({"getpid", "20"}).pid;
  ASSERT_OK(inst().set_tracing_on(false));
  ASSERT_OK(inst().set_option("raw", true));
  auto raw = inst().read_trace();
  ASSERT_OK(raw);
  ASSERT_OK(inst().set_option("raw", false));
  ASSERT_OK(inst().set_option("bin", true));
  auto bin = inst().read_trace();
  ASSERT_OK(inst().set_option("bin", false));
  ASSERT_OK(inst().set_tracer("nop"));
  ASSERT_OK(bin);
  const size_t header = raw->size() - [&] {
    size_t body = 0;
    for (const std::string& l : trace_lines(*raw)) body += l.size() + 1;
    return body;
  }();
  ASSERT_EQ(bin->substr(0, header), raw->substr(0, header)) << "the header changed with bin";
  std::string_view records = std::string_view(*bin).substr(header);
  constexpr size_t kRecord = 32;
  const std::vector<std::string> lines = trace_lines(*raw);
  ASSERT_EQ(records.size(), lines.size() * kRecord) << lines.size() << " raw lines";
  size_t of_target = 0;
  for (size_t i = 0; i < lines.size(); ++i) {
    SCOPED_TRACE(lines[i]);
    auto field = [&](size_t at, size_t n) {
      uint64_t v = 0;
      std::memcpy(&v, records.data() + i * kRecord + at, n);  // the guest's byte order is ours (x86)
      return v;
    };
    auto words = tracefs::split_words(lines[i]);
    ASSERT_EQ(words.size(), 5u);
    EXPECT_EQ(std::to_string(field(0, 4)), words[0]);
    EXPECT_EQ(std::to_string(field(4, 4)), words[1]);
    EXPECT_EQ(std::to_string(field(8, 8)), words[2]);
    EXPECT_EQ(fmt::format("{:x}", field(16, 8)), words[3]);
    EXPECT_EQ(fmt::format("{:x}", field(24, 8)), words[4]);
    of_target += field(0, 4) == static_cast<uint64_t>(target);
  }
  EXPECT_EQ(of_target, 21u);
}

// A size past the guest's memory (ring_buffer.c __rb_allocate_pages:
// refused when si_mem_available() is short of it, before any page is
// taken) fails with ENOMEM for every CPU and for one, and leaves the
// buffer as it was: the same size, the 100 markers written before still
// there, and the 100 written after recorded behind them.
TEST_F(Basics, BufferLargerThanTheGuestsMemoryIsRefusedAndNothingLost) {
  const int cpu = inst().cpus().value().front();
  ASSERT_OK(inst().set_buffer_size_kb(128));
  const auto before = inst().buffer_size(cpu).value().kb;
  sh(marker_loop(inst(), "tbnomem-a", 100, cpu));
  const std::string mem_kb = sh("awk '/^MemTotal:/ { print $2 }' /proc/meminfo");
  const uint64_t too_big = 2 * std::stoull(mem_kb);
  for (const std::string& file : {std::string("buffer_size_kb"), fmt::format("per_cpu/cpu{}/buffer_size_kb", cpu)}) {
    SCOPED_TRACE(file);
    auto err = inst().files().try_write(file, std::to_string(too_big));
    ASSERT_OK(err);
    EXPECT_EQ(*err, ENOMEM) << too_big << " KiB, twice the guest's memory";
    EXPECT_EQ(inst().buffer_size(cpu).value().kb, before);
  }
  sh(marker_loop(inst(), "tbnomem-b", 100, cpu));
  std::vector<std::string> want = marker_bufs("tbnomem-a", 100), after = marker_bufs("tbnomem-b", 100);
  want.insert(want.end(), after.begin(), after.end());
  EXPECT_THAT(str_fields(decoded({"ftrace", "print"}, Order::page), "buf"), ElementsAreArray(want));
}

// Truncating one CPU's trace file (trace.c tracing_open: O_TRUNC on
// per_cpu/cpuN/trace resets that CPU's buffer alone) empties that CPU and
// keeps every record of the others: 60 markers on each of two CPUs, CPU
// a's file truncated, and then a holds none and b all 60, in order; 20
// more on a afterwards are recorded from 0.
TEST_F(Basics, TruncatingOneCpusTraceEmptiesThatCpuAlone) {
  const std::vector<int> cpus = inst().cpus().value();
  const int a = cpus.front();
  sh(marker_loop(inst(), "tbtrunc-a", 60, a));
  if (cpus.size() > 1) sh(marker_loop(inst(), "tbtrunc-b", 60, cpus[1]));
  ASSERT_THAT(marker_numbers(trace_lines(inst()), "tbtrunc-a"), ElementsAreArray(upto(60)));
  sh(": > " + inst().path(fmt::format("per_cpu/cpu{}/trace", a)));
  const std::vector<std::string> lines = trace_lines(inst());
  EXPECT_THAT(marker_numbers(lines, "tbtrunc-a"), IsEmpty()) << "CPU " << a << "'s trace truncated";
  if (cpus.size() > 1) {
    EXPECT_THAT(marker_numbers(lines, "tbtrunc-b"), ElementsAreArray(upto(60))) << "CPU " << cpus[1] << " lost records";
  }
  sh(marker_loop(inst(), "tbtrunc-c", 20, a));
  auto own = inst().files().read(fmt::format("per_cpu/cpu{}/trace", a));
  ASSERT_OK(own);
  EXPECT_THAT(marker_numbers(trace_lines(*own), "tbtrunc-c"), ElementsAreArray(upto(20)));
  EXPECT_THAT(marker_numbers(trace_lines(*own), "tbtrunc-a"), IsEmpty());
}

// The memory-mapped reader of trace_pipe_raw (ring_buffer.c
// ring_buffer_map_get_reader): each TRACE_MMAP_IOCTL_GET_READER hands the
// mapper the next sub-buffer and takes the one before as read. 600 markers
// on one CPU (about six sub-buffers), read through the mapping alone: every
// one is there once, in order, and the meta page counts 600 entries, 600
// read and none overrun. A reader that stayed on a sub-buffer it had
// finished, or skipped one, would lose whole pages of them.
TEST_F(Basics, MemoryMappedReaderGetsEveryRecordOnceInOrder) {
  TRACEBED_REQUIRE(tracefs::features::mapped_buffer);
  const int cpu = inst().cpus().value().front();
  ASSERT_OK(inst().set_buffer_size_kb(128));
  sh(marker_loop(inst(), "tbmap", 600, cpu));
  ProbeRun run = run_probe_target(*this, {"map-read", inst().path(fmt::format("per_cpu/cpu{}/trace_pipe_raw", cpu))});
  ASSERT_THAT(run.lines_of("map"), IsEmpty()) << "mmap of trace_pipe_raw failed (the errno)";
  std::string bytes;
  const auto subbufs = run.lines_of("subbuf");
  for (const auto& words : subbufs) {
    ASSERT_GE(words.size(), 2u);
    if (words.size() < 3) continue;  // nothing new on that sub-buffer
    const std::string& hex = words[2];
    for (size_t i = 0; i + 1 < hex.size(); i += 2) bytes.push_back(static_cast<char>(std::stoi(hex.substr(i, 2), nullptr, 16)));
  }
  std::vector<int64_t> seen;
  const std::regex marker("tbmap-([0-9]+)\n");
  for (auto it = std::sregex_iterator(bytes.begin(), bytes.end(), marker); it != std::sregex_iterator(); ++it)
    seen.push_back(std::stoll((*it)[1]));
  EXPECT_THAT(seen, ElementsAreArray(upto(600))) << subbufs.size() << " hand-overs";
  EXPECT_GE(subbufs.size(), 4u) << "600 markers fill several sub-buffers";
  const auto meta = run.lines_of("meta");
  ASSERT_THAT(meta, SizeIs(1));
  ASSERT_THAT(meta[0], SizeIs(5));
  EXPECT_EQ(meta[0][0], "600") << "entries";
  EXPECT_EQ(meta[0][1], "0") << "overrun";
  EXPECT_EQ(meta[0][2], "600") << "read";
  EXPECT_THAT(marker_numbers(trace_lines(inst()), "tbmap"), IsEmpty()) << "the mapped reader consumes, as trace_pipe";
}

// ringbuffer_subbuf_size.tc: the sub-buffer size can be set from a page
// up, each size read back and used. At 4, 8 and 32 KiB, markers enough
// for three sub-buffers on one CPU come back whole, in order, and that
// CPU's raw pages (trace_pipe_raw) are whole sub-buffers of that size,
// three or more of them.
TEST_F(Basics, SubBufferSizeCanBeChanged) {
  TRACEBED_REQUIRE(features::subbuf_size);
  const int cpu = inst().cpus().value().front();
  ASSERT_OK(inst().set_buffer_size_kb(512));
  for (uint32_t kb : {4u, 8u, 32u}) {
    SCOPED_TRACE(::testing::Message() << kb << " KiB sub-buffers");
    ASSERT_OK(inst().set_subbuf_size_kb(kb));
    EXPECT_EQ(inst().subbuf_size_kb().value(), kb);
    EXPECT_EQ(inst().raw_page_size().value(), kb * 1024);
    ASSERT_OK(inst().clear_trace());
    // A marker "tbsub-N\n" is a 32-byte record or less.
    const int n = static_cast<int>(kb * 1024 * 3 / 32);
    sh(marker_loop(inst(), "tbsub", n, cpu));
    EXPECT_THAT(marker_numbers(trace_lines(inst()), "tbsub"), ElementsAreArray(upto(n)));
    auto pages = inst().read_raw_pages(cpu);
    ASSERT_OK(pages);
    EXPECT_EQ(pages->size() % (kb * 1024), 0u);
    EXPECT_GE(pages->size() / (kb * 1024), 3u);
  }
}

// snapshot.tc: a snapshot keeps what was in the buffer when it was taken.
// 100 markers, the snapshot, 60 more: the snapshot holds the 100, each once
// and in order, and none of the 60; the buffer it swapped with holds the 60
// and none of the 100.
TEST_F(Basics, SnapshotKeepsTheBufferAsItWas) {
  TRACEBED_REQUIRE(features::snapshot);
  const int cpu = inst().cpus().value().front();
  sh(marker_loop(inst(), "tbsnap-before", 100, cpu));
  ASSERT_OK(inst().take_snapshot());
  sh(marker_loop(inst(), "tbsnap-after", 60, cpu));
  auto snap = inst().read_snapshot();
  ASSERT_OK(snap);
  const std::vector<std::string> kept = trace_lines(*snap);
  EXPECT_THAT(marker_numbers(kept, "tbsnap-before"), ElementsAreArray(upto(100)));
  EXPECT_THAT(marker_numbers(kept, "tbsnap-after"), IsEmpty());
  const std::vector<std::string> live = trace_lines(inst());
  EXPECT_THAT(marker_numbers(live, "tbsnap-before"), IsEmpty());
  EXPECT_THAT(marker_numbers(live, "tbsnap-after"), ElementsAreArray(upto(60)));
  ASSERT_OK(inst().free_snapshot());
}

TEST_F(Basics, ReadmeIsThere) {
  auto readme = fs().readme();
  ASSERT_OK(readme);
  EXPECT_THAT(*readme, HasSubstr("tracing mini-HOWTO"));
}

// Every option trace_options lists has its file in options/ at the top
// level (trace.c create_trace_options_dir; an instance leaves out the
// top-level-only ones), reading as trace_options says, and each toggled
// through its file shows in trace_options and back; an instance's files
// agree with it too. (options/ also holds every tracer's own options,
// trace_options only the current tracer's.)
TEST_F(Basics, EveryOptionHasItsFileAndTogglesBothWays) {
  for (const tracefs::Instance* in : {&top(), &inst()}) {
    SCOPED_TRACE(in->is_top() ? "top level" : "instance");
    auto listed = in->options();
    ASSERT_OK(listed);
    ASSERT_THAT(*listed, SizeIs(Gt(10u)));
    auto files = fs().ops().list(in->path("options"));
    ASSERT_OK(files);
    std::set<std::string> have(files->begin(), files->end());
    for (const auto& [name, on] : *listed) {
      SCOPED_TRACE(name);
      if (!in->is_top() && !have.contains(name)) continue;
      auto file = in->option(name);
      ASSERT_OK(file);
      EXPECT_EQ(*file, on) << "options/" << name << " against trace_options";
    }
  }
  const tracefs::Instance& t = top();
  const auto listed = t.options().value();
  for (const char* name : {"sym-offset", "print-parent", "irq-info", "markers", "overwrite"}) {
    SCOPED_TRACE(name);
    if (!listed.contains(name)) continue;
    const bool was = listed.at(name);
    ASSERT_OK(t.set_option(name, !was));
    EXPECT_EQ(t.options().value().at(name), !was);
    ASSERT_OK(t.set_option(name, was));
    EXPECT_EQ(t.options().value().at(name), was);
  }
}

TEST_F(Basics, RawPagesAreWholeSubBuffers) {
  ASSERT_OK(inst().write_marker("tracebed-raw"));
  uint32_t page = inst().raw_page_size().value();
  std::string all;
  std::vector<int> cpus = inst().cpus().value();
  for (int cpu : cpus) {
    SCOPED_TRACE(::testing::Message() << "cpu" << cpu);
    auto pages = inst().read_raw_pages(cpu);
    ASSERT_OK(pages);
    EXPECT_EQ(pages->size() % page, 0u);
    all += *pages;
  }
  EXPECT_NE(all.find("tracebed-raw"), std::string::npos);
}

// tracing_cpumask (ftrace/func_cpumask.tc, in spirit): with only CPU 0
// in the mask, 100 markers written from CPU 0 are all there and 100 from
// CPU 1 none; with CPU 1 back in the mask, its next 100 are there too.
TEST_F(Basics, CpumaskLimitsRecordingToThoseCpus) {
  TRACEBED_COVERS("ftracetest: ftrace/func_cpumask.tc");
  TRACEBED_REQUIRE(tracefs::features::tracing_cpumask);
  std::vector<int> cpus = inst().cpus().value();
  if (cpus.size() < 2) GTEST_SKIP() << "needs 2 CPUs: the guest has " << cpus.size();
  const std::string marker = inst().files().path("trace_marker");
  // 100 markers from a shell pinned to `cpu`, each "TAG-N".
  auto write_from = [&](int cpu, const std::string& tag) {
    sh(fmt::format("taskset {0:x} sh -c 'i=0; while [ $i -lt 100 ]; do echo {1}-$i > {2}; i=$((i+1)); done'",
                   1u << cpu, tag, marker));
  };
  auto expected = [](const std::string& tag) {
    std::vector<std::string> out;
    for (int i = 0; i < 100; ++i) out.push_back(tag + "-" + std::to_string(i));
    return out;
  };
  ASSERT_OK(inst().set_tracing_cpumask("1"));
  write_from(0, "tb-cpu0");
  write_from(1, "tb-cpu1");
  ASSERT_OK(inst().set_tracing_cpumask("3"));
  write_from(1, "tb-cpu1-again");
  std::map<int, std::vector<std::string>> per_cpu;
  for (const DecodedEvent& e : decoded(EventRef{"ftrace", "print"}))
    per_cpu[e.cpu].push_back(std::string(tracefs::trim(str_field(e, "buf"))));
  EXPECT_THAT(per_cpu[0], ElementsAreArray(expected("tb-cpu0")));
  EXPECT_THAT(per_cpu[1], ElementsAreArray(expected("tb-cpu1-again"))) << "CPU 1's markers out of the mask";
}

// saved_cmdlines maps each traced pid to its comm: the probe target run
// under names of 1 to 17 characters, each pid is listed with its name as
// the kernel keeps it (TASK_COMM_LEN 16: at most 15 characters).
TEST_F(Basics, SavedCmdlinesNamesTracedTasks) {
  TRACEBED_REQUIRE(tracefs::features::saved_cmdlines);
  ASSERT_OK(inst().event("sched", "sched_process_exec").enable());
  std::string script;
  std::vector<std::string> names;
  for (size_t len : {1u, 2u, 14u, 15u, 16u, 17u}) {
    names.push_back(std::string(len, static_cast<char>('a' + names.size())));
    script += fmt::format("ln -sf {0} /tmp/{1} && /tmp/{1} pid && rm /tmp/{1}; ", kProbeTarget, names.back());
  }
  const std::string text = sh(script);
  std::istringstream out(text);
  std::vector<int> pids;
  int pid = 0;
  for (std::string word; out >> word;)
    if (word == "pid" && out >> pid) pids.push_back(pid);
  ASSERT_THAT(pids, SizeIs(names.size())) << "one pid line per run:\n" << text;
  ASSERT_OK(inst().set_tracing_on(false));
  auto cmdlines = fs().saved_cmdlines();
  ASSERT_OK(cmdlines);
  for (size_t i = 0; i < names.size(); ++i) {
    SCOPED_TRACE(names[i]);
    auto it = cmdlines->find(pids[i]);
    ASSERT_NE(it, cmdlines->end()) << "pid " << pids[i] << " is not in saved_cmdlines";
    EXPECT_EQ(it->second, names[i].substr(0, 15));
  }
}

// sysrq-z dumps the top-level buffer to the console (trace.c ftrace_dump,
// each line a printk of the trace_seq, ended where its text ends): ten
// markers, each shorter than the one before, come out in order between
// the dump's two lines of dashes, a line each, ending with its own text
// (no tail of the longer line before it), and the dump empties the buffer.
TEST_F(Basics, SysrqZDumpsTheTopLevelBufferLineByLine) {
  if (sh("test -w /proc/sysrq-trigger && echo yes || echo no") != "yes\n")
    GTEST_SKIP() << "needs /proc/sysrq-trigger (MAGIC_SYSRQ)";
  tracefs::Instance& t = top();
  ASSERT_OK(t.set_tracing_on(true));
  ASSERT_OK(t.clear_trace());
  std::vector<std::string> markers;
  for (int i = 0; i < 10; ++i) markers.push_back(fmt::format("tbdump-{}-{}", i, std::string(60 - 5 * i, 'x')));
  for (const std::string& m : markers) ASSERT_OK(t.write_marker(m));
  sh("dmesg -c > /dev/null; echo z > /proc/sysrq-trigger");
  const std::string log = sh("dmesg");
  // "Dumping ftrace buffer:", a line of dashes, a line per record, dashes;
  // each line after the log's time stamp where printk prints one.
  std::vector<std::string> lines, dumped;
  const std::regex stamp(R"(^\[ *[0-9]+\.[0-9]+\] )");
  for (const std::string& l : trace_lines(log)) lines.push_back(std::regex_replace(l, stamp, ""));
  auto begin = std::find(lines.begin(), lines.end(), "Dumping ftrace buffer:");
  ASSERT_NE(begin, lines.end()) << log;
  ASSERT_LT(begin + 1, lines.end());
  const std::string dashes = *(begin + 1);
  ASSERT_THAT(dashes, StartsWith("-----")) << log;
  auto end = std::find(begin + 2, lines.end(), dashes);
  ASSERT_NE(end, lines.end()) << log;
  for (auto it = begin + 2; it != end; ++it) {
    size_t at = it->find(": tracing_mark_write: ");
    dumped.push_back(at == std::string::npos ? *it : it->substr(at + 22));
  }
  EXPECT_THAT(dumped, ElementsAreArray(markers)) << log;
  EXPECT_THAT(trace_lines(t), IsEmpty()) << "the dump consumes what it prints";
  ASSERT_OK(t.set_tracing_on(true));
}

// ftracetest's initialize_system on the guest's top level: what a test
// left there is gone afterwards, triggers and function triggers included.
TEST_F(Basics, ResetUndoesTopLevelState) {
  tracefs::Instance& t = top();
  tracefs::Event sw = t.event("sched", "sched_switch");
  ASSERT_OK(sw.set_filter("prev_pid == 1"));
  ASSERT_OK(sw.add_trigger(tracefs::Trigger::stacktrace().count(2).filter("prev_pid == 2")));
  ASSERT_OK(t.event("sched", "sched_wakeup").enable());
  ASSERT_OK(t.set_event_pids(std::vector<int>{1}));
  if (features().has(tracefs::features::function_triggers))
    ASSERT_OK(t.add_function_trigger(tracefs::FunctionTrigger::traceon("vfs_write").count(3)));
  if (features().has(tracefs::features::kprobes))
    ASSERT_OK(t.files().append("kprobe_events", "p:tracebed/tbprobe vfs_read"));
  ASSERT_OK(t.set_tracing_on(false));

  Status s = tracefs::reset(t);
  ASSERT_OK(s);
  EXPECT_EQ(sw.filter().value(), "none");
  EXPECT_THAT(sw.triggers().value(), IsEmpty());
  EXPECT_THAT(t.set_event().value(), IsEmpty());
  EXPECT_THAT(t.event_pids().value(), IsEmpty());
  EXPECT_THAT(t.ftrace_filter().value().triggers, IsEmpty());
  if (features().has(tracefs::features::kprobes)) {
    EXPECT_EQ(t.files().read("kprobe_events").value(), "");
  }
  EXPECT_TRUE(t.tracing_on().value());
  EXPECT_EQ(t.current_tracer().value(), "nop");
}

}  // namespace
}  // namespace tracebed::suites
