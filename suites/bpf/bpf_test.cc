// Tracepoints through BPF, the third consumer beside ftrace and perf: each
// test records an event in an instance with ftrace while a BPF program,
// generated for this kernel (framework/bpf) and loaded by the guest's BPF
// helper, sees the same calls; what the program saw must be what ftrace
// decoded, record for record, on every CPU.
#include <fmt/format.h>

#include <iostream>

#include "framework/tracefs/tracefs_text.h"
#include "suites/bpf/bpf_fixture.h"

namespace tracebed::suites {
namespace {

// x86-64's openat (arch/x86/entry/syscalls/syscall_64.tbl).
constexpr int kNrOpenat = 257;
const EventName kSchedSwitch{"sched", "sched_switch"};
const EventName kEnterOpenat{"syscalls", "sys_enter_openat"};
// FTRACE_SYSCALLS: the syscall events.
const tracefs::Feature kSyscallEvents = tracefs::Feature::event("syscalls", "sys_enter_openat");
const EventName kExitOpenat{"syscalls", "sys_exit_openat"};
// Before 5.18 each consumer of sched_switch read prev->state itself. A
// wakeup from another CPU between ftrace's read and the program's makes it
// TASK_WAKING, which prints as R (0): ftrace has the task sleeping, the
// program running. fa2c3254d7cf ("sched/tracing: Don't re-read p->state
// when emitting sched_switch event", 5.18) passes the one value __schedule
// read to every consumer.
const tracefs::Feature kPrevStateReadOnce = tracefs::Feature::since_release("sched_switch prev_state read once", 5, 18);

// The probe target's opens: files that exist and files that do not, so the
// return values range over fds and -ENOENT.
std::vector<std::string> open_command(int n) {
  std::vector<std::string> cmd = {std::string(kProbeTarget), "open"};
  for (int i = 0; i < n; ++i)
    cmd.push_back(i % 3 == 0 ? fmt::format("/nonexistent/tb-{}", i) : "/etc/tracebed/release");
  return cmd;
}
// Sleeps: two switches each, on whatever CPU the task wakes on.
std::vector<std::string> sleep_command(int n) { return {std::string(kProbeTarget), "sleep", "1", std::to_string(n)}; }

class Bpf : public BpfTest {
 protected:
  // The event enabled in the test's instance, with room for the window.
  void record(std::initializer_list<EventName> events) {
    ASSERT_OK(inst().set_buffer_size_kb(1024));
    for (const auto& e : events) ASSERT_OK(inst().event(e.system, e.name).enable());
  }
  // The helper ran the command with every program attached and lost nothing.
  static void ExpectRan(const BpfRun& run) {
    ASSERT_EQ(run.status, 0) << run.said();
    ASSERT_NE(run.child, 0) << run.said();
    EXPECT_EQ(run.child_exit, 0) << run.said();
    EXPECT_EQ(run.lost, 0u) << "records the BPF ring buffer had no room for";
  }
  // 60 openat(2)s with `event` recorded by ftrace and `program` attached:
  // each of the program's records equals the decoded event, call for call.
  void ExpectEachOpenatMatches(const EventName& event, bpf::Program program) {
    record({event});
    bpf::ObjectSource src;
    uint64_t id = src.add(std::move(program));
    BpfRun run = run_bpf(src, open_command(60));
    ExpectRan(run);
    Comparison c = compare_in_order(decoded(event), run, src, id, {});
    EXPECT_THAT(c.mismatches, IsEmpty()) << c.text();
    EXPECT_EQ(c.compared, 60u) << c.text();
  }
  // `program` attached while `command` runs and `event` recorded by ftrace:
  // per CPU, each of the program's records equals the decoded event, and
  // there are at least `at_least` of them.
  Comparison ExpectEachRecordMatchesPerCpu(const EventName& event, bpf::Program program,
                                           std::vector<std::string> command, size_t at_least,
                                           const std::vector<KnownDifference>& known = {}) {
    record({event});
    bpf::ObjectSource src;
    src.add(std::move(program));
    BpfRun run = run_bpf(src, std::move(command));
    ExpectRan(run);
    Comparison c = compare_per_cpu(decoded(event, Order::page), run, src, {}, known);
    EXPECT_THAT(c.mismatches, IsEmpty()) << c.text();
    EXPECT_GE(c.compared, at_least) << c.text();
    return c;
  }
  // The function every openat(2) goes through, where the kernel can trace it.
  std::string openat_function() {
    auto f = traceable_one({"do_sys_openat2"});
    if (!f) ADD_FAILURE() << "no do_sys_openat2 in available_filter_functions";
    return f.value_or("do_sys_openat2");
  }
};

// A tracepoint program reads sched_switch through the context generated
// from this kernel's format file: every field of every record ftrace
// decoded, on every CPU, from the command's first switch to its last.
TEST_F(Bpf, TracepointSchedSwitchSeesWhatFtraceDecodes) {
  // ftrace's probe runs first (its event was enabled first), so the race
  // can only turn a sleeping state into R for the program, never back.
  std::vector<KnownDifference> known;
  if (!features().has(kPrevStateReadOnce))
    known.push_back({"prev_state", [](int64_t ftrace, int64_t bpf) { return ftrace != 0 && bpf == 0; }});
  Comparison c = ExpectEachRecordMatchesPerCpu(kSchedSwitch, bpf::tracepoint_program(context(kSchedSwitch)),
                                               sleep_command(60), 120, known);
  if (!c.known.empty()) {
    RecordProperty("prev_state_reread", std::to_string(c.known.size()));
    std::cout << c.known.size() << " sched_switch records with prev_state re-read as R by the program "
              << "(a pre-5.18 kernel, fa2c3254d7cf), the first:\n  " << c.known.front() << "\n";
  }
}

// The same for a syscall event: its arguments are 8-byte fields after a
// 4-byte __syscall_nr, which the generated struct pads.
TEST_F(Bpf, TracepointOpenatSeesWhatFtraceDecodes) {
  TRACEBED_REQUIRE(kSyscallEvents);
  ExpectEachRecordMatchesPerCpu(kEnterOpenat, bpf::tracepoint_program(context(kEnterOpenat)), open_command(90), 90);
}

// The same program with a stale context, next_pid and next_prio swapped
// (what a struct copied from a kernel with another layout does): it loads
// and runs, and the comparison finds the wrong values.
TEST_F(Bpf, StaleContextIsAMismatch) {
  record({kSchedSwitch});
  bpf::Context ctx = context(kSchedSwitch);
  bpf::Member* pid = nullptr;
  bpf::Member* prio = nullptr;
  for (auto& m : ctx.members) {
    if (m.name == "next_pid") pid = &m;
    if (m.name == "next_prio") prio = &m;
  }
  ASSERT_TRUE(pid && prio && pid->size == prio->size) << bpf::c_struct(ctx);
  std::swap(pid->offset, prio->offset);
  std::swap(*pid, *prio);  // members stay in offset order
  bpf::ObjectSource src;
  src.add(bpf::tracepoint_program(ctx));
  BpfRun run = run_bpf(src, sleep_command(30));
  ExpectRan(run);
  Comparison c = compare_per_cpu(decoded(kSchedSwitch, Order::page), run, src);
  EXPECT_GE(c.compared, 60u) << c.text();
  ASSERT_THAT(c.mismatches, Not(IsEmpty())) << "a stale context went unnoticed: " << c.text();
  EXPECT_THAT(c.mismatches[0], HasSubstr("next_pid: ftrace")) << c.text();
}

// A raw tracepoint sees sys_enter's arguments before the event is built:
// the syscall number and the registers sys_enter_openat's fields are made of.
TEST_F(Bpf, RawSysEnterArgumentsAreTheOpenatFields) {
  TRACEBED_REQUIRE(kSyscallEvents);
  if (!has_ksym("bpf_get_raw_tracepoint")) GTEST_SKIP() << "needs raw tracepoints: no bpf_get_raw_tracepoint";
  ExpectEachRecordMatchesPerCpu(
      kEnterOpenat,
      bpf::raw_sys_enter_program(kNrOpenat, "__syscall_nr", {{"dfd"}, {"filename"}, {"flags"}, {"mode"}}),
      open_command(60), 60);
}

// A raw tracepoint on sched_switch gets the task_structs; the pids and
// comms read from them (CO-RE, with the kernel's BTF) are the fields
// TP_fast_assign copied.
TEST_F(Bpf, RawSchedSwitchTasksAreTheSwitchFields) {
  if (!has_ksym("bpf_get_raw_tracepoint")) GTEST_SKIP() << "needs raw tracepoints: no bpf_get_raw_tracepoint";
  if (!has_btf()) GTEST_SKIP() << "needs BTF: no /sys/kernel/btf/vmlinux";
  ExpectEachRecordMatchesPerCpu(kSchedSwitch, bpf::raw_sched_switch_program(), sleep_command(40), 80);
}

// A kprobe on the function openat(2) calls: its first two arguments are
// sys_enter_openat's dfd and filename, call for call. The record keeps the
// register the syscall got (glibc puts AT_FDCWD in edi: dfd=4294967196),
// the function's int dfd is its low half.
TEST_F(Bpf, KprobeArgumentsAreTheOpenatFields) {
  TRACEBED_REQUIRE(kSyscallEvents);
  const std::string fn = openat_function();
  ExpectEachOpenatMatches(kEnterOpenat, bpf::kprobe_program(fn, {{"dfd", 4, false}, {"filename"}}));
}

// Its kretprobe's return value is what sys_exit_openat recorded. Read as
// an int: 7.3's do_sys_openat2 returns one (-ENOENT is 0xfffffffe in rax,
// the upper half not its), earlier kernels' a long; an fd or -errno fits.
const bpf::Arg kOpenatRet{"ret", 4, true};
TEST_F(Bpf, KretprobeReturnIsTheOpenatResult) {
  TRACEBED_REQUIRE(kSyscallEvents);
  const std::string fn = openat_function();
  ExpectEachOpenatMatches(kExitOpenat, bpf::kretprobe_program(fn, kOpenatRet));
}

// fentry with BTF-typed arguments: the same as the kprobe's, without pt_regs.
TEST_F(Bpf, FentryArgumentsAreTheOpenatFields) {
  TRACEBED_REQUIRE(kSyscallEvents);
  if (!has_btf()) GTEST_SKIP() << "needs BTF: no /sys/kernel/btf/vmlinux";
  if (!has_ksym("arch_prepare_bpf_trampoline"))
    GTEST_SKIP() << "needs BPF trampolines (a JIT): no arch_prepare_bpf_trampoline in /proc/kallsyms";
  const std::string fn = openat_function();
  ExpectEachOpenatMatches(kEnterOpenat, bpf::fentry_program(fn, {{"dfd", 4, false}, {"filename"}}));
}

// fexit reads the return value after the arguments (do_sys_openat2 has 3).
TEST_F(Bpf, FexitReturnIsTheOpenatResult) {
  TRACEBED_REQUIRE(kSyscallEvents);
  if (!has_btf()) GTEST_SKIP() << "needs BTF: no /sys/kernel/btf/vmlinux";
  if (!has_ksym("arch_prepare_bpf_trampoline"))
    GTEST_SKIP() << "needs BPF trampolines (a JIT): no arch_prepare_bpf_trampoline in /proc/kallsyms";
  const std::string fn = openat_function();
  ExpectEachOpenatMatches(kExitOpenat, bpf::fexit_program(fn, 3, kOpenatRet));
}

// kprobe.multi (fprobe underneath) on every function a glob names counts,
// per CPU, the command's hits the function tracer counts in the same window.
TEST_F(Bpf, KprobeMultiCountsWhatTheFunctionTracerCounts) {
  for (auto sym : {"bpf_kprobe_multi_link_attach", "register_fprobe"})
    if (!has_ksym(sym)) GTEST_SKIP() << "needs kprobe.multi: no " << sym << " in /proc/kallsyms";
  const std::string glob = "do_sys_open*";
  std::string listed =
      sh("grep '^do_sys_open' " + fs().root() + "/available_filter_functions | cut -d' ' -f1 | sort -u");
  std::vector<std::string> functions;
  for (auto l : tracefs::split_lines(listed)) functions.emplace_back(tracefs::trim(l));
  ASSERT_THAT(functions, Not(IsEmpty())) << "nothing traceable matches " << glob;
  ASSERT_OK(inst().set_tracing_on(false));
  ASSERT_OK(inst().files().write("set_ftrace_filter", glob));
  ASSERT_OK(inst().set_tracer("function"));
  ASSERT_OK(inst().clear_trace());
  ASSERT_OK(inst().set_tracing_on(true));
  bpf::ObjectSource src;
  uint64_t id = src.add(bpf::kprobe_multi_program());
  BpfRun run = run_bpf(src, open_command(50), {fmt::format("on_multi={}", fmt::join(functions, ","))});
  ExpectRan(run);
  auto calls = of_pid(decoded(EventName{"ftrace", "function"}), run.child);
  EXPECT_OK(inst().set_tracer("nop"));
  std::map<int, size_t> ftrace_per_cpu, bpf_per_cpu;
  for (const auto& e : calls) ++ftrace_per_cpu[e.cpu];
  for (const auto& r : run.records)
    if (r.prog == id && static_cast<int>(r.pid) == run.child) ++bpf_per_cpu[static_cast<int>(r.cpu)];
  EXPECT_EQ(bpf_per_cpu, ftrace_per_cpu) << "functions " << fmt::format("{}", fmt::join(functions, " "));
  EXPECT_GE(calls.size(), 50u);
}

// A program for an event the kernel does not have loads (tracepoint
// programs are not bound to an event) and is refused at attach: ENOENT.
TEST_F(Bpf, MissingEventIsRefusedAtAttach) {
  bpf::Program p = bpf::tracepoint_program(context(kSchedSwitch));
  p.section = "tracepoint/sched/tb_no_such_event";
  bpf::ObjectSource src;
  src.add(p);
  BpfRun run = run_bpf(src, {"true"});
  EXPECT_EQ(run.status, 4) << run.said();
  EXPECT_THAT(run.error, HasSubstr("error attach on_tp: ENOENT")) << run.said();
  EXPECT_THAT(run.err, HasSubstr("tb_no_such_event")) << run.said();
  EXPECT_EQ(run.child, 0) << "the command ran without its program";
}

// Reading a common field: the first 8 bytes of a BPF tracepoint context
// are not the record's (perf_trace_run_bpf_submit stores the pt_regs
// pointer there) and the verifier refuses the access; its log says so.
TEST_F(Bpf, CommonFieldReadIsRefusedByTheVerifier) {
  bpf::Context ctx = context(kSchedSwitch);
  const bpf::Member* common_pid = ctx.member("common_pid");
  ASSERT_NE(common_pid, nullptr);
  bpf::Program p = bpf::tracepoint_program(ctx);
  p.body += "\tr->v[0] = ctx->common_pid;\n";
  bpf::ObjectSource src;
  src.add(p);
  BpfRun run = run_bpf(src, {"true"});
  EXPECT_EQ(run.status, 3) << run.said();
  EXPECT_THAT(run.error, HasSubstr("error load:")) << run.said();
  EXPECT_THAT(run.err,
              HasSubstr(fmt::format("invalid bpf_context access off={} size={}", common_pid->offset, common_pid->size)))
      << run.said();
}

// A context larger than the event's record (a field past its last one):
// the verifier lets the read through (it only knows the maximum, 2048),
// and attaching to the event is refused, EACCES (perf_event_set_bpf_prog:
// max_ctx_offset past the event's fields).
TEST_F(Bpf, ContextPastTheRecordIsRefusedAtAttach) {
  bpf::Context ctx = context(kSchedSwitch);
  const uint32_t end = (ctx.size + 7) / 8 * 8;
  if (end > ctx.size)
    ctx.members.push_back({.name = "__pad_end",
                           .format_type = "",
                           .kind = bpf::MemberKind::pad,
                           .offset = ctx.size,
                           .size = end - ctx.size});
  ctx.members.push_back({.name = "beyond", .format_type = "u64", .offset = end, .size = 8});
  ctx.size = end + 8;
  bpf::ObjectSource src;
  src.add(bpf::tracepoint_program(ctx));
  BpfRun run = run_bpf(src, {"true"});
  EXPECT_EQ(run.status, 4) << run.said();
  EXPECT_THAT(run.error, HasSubstr("error attach on_tp: EACCES")) << run.said();
}

}  // namespace
}  // namespace tracebed::suites
