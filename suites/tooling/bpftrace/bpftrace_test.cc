// bpftrace (Debian's build from the release that ships the kernel's series,
// run through its own loader and libraries) against ftrace and against the probe
// target, which prints what it did. Each test runs one bpftrace program
// with `-c`: bpftrace attaches its probes, then starts the target, and exits
// when the target has, while the test's ftrace instance records from before
// bpftrace starts until after it exits. Every event of the target's life is
// in both windows, so counts and fields must be equal, not close:
//   - tracepoint:syscalls:sys_enter_openat: the filename pointer ftrace
//     records, and the string behind it against the paths the target
//     opened, 6 to 198 bytes long (bpftrace's longest whole string);
//   - rawtracepoint:sys_enter: the count per syscall number against
//     raw_syscalls:sys_enter;
//   - kprobe/kretprobe on do_sys_openat2: one entry per openat, and the
//     return values against sys_exit_openat's and the fds the target got;
//   - uprobe/uretprobe on the target's tracebed_target_add: arguments and
//     results against a uprobe event at the same offset and the target's
//     own lines, for values across the 64-bit range;
//   - `bpftrace -l`: the sched tracepoints against tracefs's list.
// bpftrace prints events on per-CPU buffers read in turn, so a task that
// moves between CPUs can see its lines reordered: lines are compared in
// any order, which still catches any lost, extra or wrong one.
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "framework/testing/guest_environment.h"
#include "framework/testing/tool_fixture.h"
#include "framework/tracefs/elf_symbols.h"
#include "framework/tracefs/tracefs_text.h"
#include "framework/vm/images/debian_tool.h"

namespace tracebed::suites {
namespace {

using namespace std::chrono_literals;
using ::testing::UnorderedElementsAreArray;

// The package `tracebed_guest_suite(... DEBIAN_TOOLS bpftrace:bpftrace)` fetches.
constexpr const char* kPackage = "bpftrace";
// include/linux/sched.h TASK_COMM_LEN is 16: the name keeps 15 characters.
constexpr std::string_view kTargetComm = "tracebed-probe-";
// bpftrace's string length (BPFTRACE_STRLEN, BPFTRACE_MAX_STRLEN; 0.11
// caps it at 200, the terminating NUL included). A string that fills it is
// shown cut (".." appended), so the longest read whole has kMaxStrlen - 2 bytes.
constexpr int kMaxStrlen = 200;
// x86-64's getpid.
constexpr int64_t kGetpidNr = 39;
// The instance records the target's exec (after_exec) and one of these.
const tracefs::EventName kExec{"sched", "sched_process_exec"};
const tracefs::EventName kEnterOpenat{"syscalls", "sys_enter_openat"};
const tracefs::EventName kExitOpenat{"syscalls", "sys_exit_openat"};
const tracefs::EventName kSysEnter{"raw_syscalls", "sys_enter"};


// "bpftrace v0.23.2" -> {0, 23}.
std::pair<int, int> version_of(std::string_view text) {
  size_t v = text.find(" v");
  if (v == std::string_view::npos) return {0, 0};
  int major = 0, minor = 0;
  if (std::sscanf(std::string(text.substr(v + 2)).c_str(), "%d.%d", &major, &minor) != 2) return {0, 0};
  return {major, minor};
}

// Paths from 6 to kMaxStrlen - 2 bytes long, at the edges that
// matter (a word, a 16 or 64 byte chunk, bpftrace's limit), each byte
// depending on its position, so a shifted or cut string shows.
std::vector<std::string> paths_across_lengths() {
  std::vector<std::string> out;
  for (size_t len : {6, 15, 16, 17, 31, 32, 33, 63, 64, 65, 100, 127, 128, 129, 190, kMaxStrlen - 2}) {
    std::string p = fmt::format("/tmp/tb{}-", len);
    for (size_t i = p.size(); i < len; ++i) p += "abcdefghijklmnopqrstuvwxyz0123456789"[i % 36];
    out.push_back(p.substr(0, len));
  }
  out.push_back("/proc/version");  // one that opens
  return out;
}

class Bpftrace : public testlib::ToolTest {
 protected:
  void SetUpTest() override {
    const auto& package = testlib::debian_tool(kPackage);
    if (!package) GTEST_SKIP() << "needs Debian's " << kPackage << ": " << package.error().message;
    // Only with CONFIG_BPF_SYSCALL (kernel/bpf/syscall.c lists it).
    if (!fs().ops().exists("/proc/sys/kernel/unprivileged_bpf_disabled"))
      GTEST_SKIP() << "needs BPF_SYSCALL: the guest has no /proc/sys/kernel/unprivileged_bpf_disabled";
    // String length: the environment variable of the version at hand.
    std::vector<std::string> command = {"env", fmt::format("BPFTRACE_STRLEN={}", kMaxStrlen),
                                        fmt::format("BPFTRACE_MAX_STRLEN={}", kMaxStrlen)};
    for (auto& word : vm::guest_command(*package)) command.push_back(word);
    static const std::string version = testlib::guest_tool_version(command, "bpftrace", package->describe());
    version_ = version_of(version);
    // Before 0.12, tracepoint arguments come from kernel headers unless
    // BTF is asked for; the guest has no headers, the kernels have BTF.
    static const bool btf = fs().ops().exists("/sys/kernel/btf/vmlinux");
    if (version_ < std::pair{0, 12} && btf) flags_ = {"--btf"};
    use_tool(command, version);
    RecordProperty("bpftrace_package", package->describe());
  }

  // `args.NAME` from 0.20 on, `args->NAME` before.
  std::string arg(std::string_view name) const {
    return fmt::format("{}{}", version_ >= std::pair{0, 20} ? "args." : "args->", name);
  }

  // bpftrace ARGS (after the version's own flags), not yet judged.
  testlib::ToolRun bpftrace(std::vector<std::string> args) {
    args.insert(args.begin(), flags_.begin(), flags_.end());
    return try_tool(args);
  }

  // Runs `program` with the probe target (ARGS) as its command; the
  // target's lines and bpftrace's (printed "BT ...", or "@map[...]: N")
  // come back parsed together. A program a kernel without a BPF JIT
  // refuses leaves refused_ set (the test then skips) instead of failing.
  testlib::ProbeRun trace_target(const std::string& program, const std::vector<std::string>& args) {
    std::string command(kProbeTarget);
    for (const auto& a : args) command += " " + a;
    testlib::ToolRun r = bpftrace({"-e", program, "-c", command});
    last_cmdline_ = r.cmdline;
    if (!r.started) return {};
    // ENOTSUPP: bpf_prog_select_runtime() refuses what only a JIT runs.
    static const bool jit = fs().ops().exists("/proc/sys/net/core/bpf_jit_enable");
    if (!r.ok && !jit && r.err.find("Error code: -524") != std::string::npos) {
      refused_ = fmt::format("needs BPF_JIT: {} has none, and the kernel refused {}'s program with ENOTSUPP (524)",
                             testlib::environment().options().kernel, tool_version());
      return {};
    }
    expect_ran(r);
    testlib::ProbeRun run = testlib::parse_probe_output(r.out);
    EXPECT_NE(run.pid, 0) << where(r.cmdline) << ": the probe target did not say its pid\n" << r.out << r.err;
    return run;
  }

  // The instance's events of `pid` after it exec'd the target (before, the
  // process was bpftrace's child, not yet the target).
  std::vector<testlib::DecodedEvent> after_exec(const std::vector<testlib::DecodedEvent>& events, int pid) {
    std::vector<testlib::DecodedEvent> out;
    bool exec_seen = false;
    for (const auto& e : events) {
      if (e.pid != pid) continue;
      if (e.name == kExec.name) {
        exec_seen = true;
        continue;
      }
      if (exec_seen) out.push_back(e);
    }
    EXPECT_TRUE(exec_seen) << "the instance has no sched_process_exec of the target (pid " << pid << ")";
    return out;
  }

  // Why this bpftrace has no `type` probes (0.11 has no rawtracepoint),
  // in its own words; nullopt when it has them.
  std::optional<std::string> lacks_probe_type(std::string_view type) {
    testlib::ToolRun r = bpftrace({"-e", fmt::format("{}:sys_enter {{ exit(); }}", type)});
    // 0.11: "Unrecognized probe type"; 0.17 aborts: "Invalid probe type made it to attachpoint parser".
    for (const char* refusal : {"Unrecognized probe type", "Invalid probe type"}) {
      if (r.err.find(refusal) != std::string::npos) return std::string(tracefs::trim(r.err));
    }
    return std::nullopt;
  }

  std::vector<std::string> flags_;  // before every bpftrace argument
  std::string refused_;
  std::pair<int, int> version_{0, 0};
  std::string last_cmdline_;
};

// Each sys_enter_openat of the target: the pointer bpftrace reads from the
// context equals the one ftrace recorded, and the string behind it is the
// path the target opened, whatever its length.
TEST_F(Bpftrace, TracepointOpenatFieldsEqualFtracesAndThePaths) {
  for (const auto& e : {kExec, kEnterOpenat}) TRACEBED_REQUIRE(tracefs::Feature::event(e.system, e.name));
  for (const auto& e : {kExec, kEnterOpenat}) ASSERT_OK(inst().event(e.system, e.name).enable());
  const std::string filename = arg("filename");
  const std::string program = fmt::format(
      "tracepoint:syscalls:sys_enter_openat /comm == \"{}\"/ {{ printf(\"BT %lu %s\\n\", (uint64){}, str({})); }}",
      kTargetComm, filename, filename);
  std::vector<std::string> args = {"open"};
  for (const auto& p : paths_across_lengths()) args.push_back(p);
  testlib::ProbeRun run = trace_target(program, args);
  if (!refused_.empty()) GTEST_SKIP() << refused_;
  auto events = after_exec(decoded({kExec, kEnterOpenat}), run.pid);
  std::vector<std::string> ours, theirs_ptr, theirs_str, opened;
  for (const auto& e : events) ours.push_back(std::to_string(static_cast<uint64_t>(testlib::int_field(e, "filename"))));
  for (const auto& l : run.lines_of("BT")) {
    ASSERT_GE(l.size(), 2u) << where(last_cmdline_) << ": a line without a path";
    theirs_ptr.push_back(l[0]);
    theirs_str.push_back(l[1]);
  }
  for (const auto& l : run.lines_of("open")) opened.push_back(l.at(0));
  RecordProperty("openat_events", static_cast<int>(ours.size()));
  EXPECT_EQ(opened.size(), paths_across_lengths().size()) << "the target did not open every path";
  EXPECT_THAT(theirs_ptr, UnorderedElementsAreArray(ours))
      << where(last_cmdline_) << ": the filename pointers bpftrace read vs those ftrace recorded";
  EXPECT_THAT(theirs_str, UnorderedElementsAreArray(opened))
      << where(last_cmdline_) << ": the strings bpftrace read vs the paths the target opened";
}

// Every syscall the target made, counted by number: bpftrace's raw
// tracepoint on sys_enter against raw_syscalls:sys_enter's id field.
TEST_F(Bpftrace, RawTracepointCountsEachSyscallAsFtraceDoes) {
  for (const auto& e : {kExec, kSysEnter}) TRACEBED_REQUIRE(tracefs::Feature::event(e.system, e.name));
  for (const auto& e : {kExec, kSysEnter}) ASSERT_OK(inst().event(e.system, e.name).enable());
  if (auto why = lacks_probe_type("rawtracepoint")) GTEST_SKIP() << tool_version() << ": " << *why;
  // From 0.24 on, with BTF, raw tracepoint arguments have their names.
  const bool named = version_ >= std::pair{0, 24};
  const std::string program = fmt::format("rawtracepoint:sys_enter /comm == \"{}\"/ {{ @ids[{}] = count(); }}",
                                          kTargetComm, named ? "args.id" : "arg1");
  testlib::ProbeRun run = trace_target(program, {"getpid", "37"});
  if (!refused_.empty()) GTEST_SKIP() << refused_;
  std::map<int64_t, int64_t> ours, theirs;
  for (const auto& e : after_exec(decoded({kExec, kSysEnter}), run.pid))
    ++ours[testlib::int_field(e, "id")];
  for (const auto& l : run.lines) {
    // "@ids[39]: 37"
    if (l.size() != 2 || !l[0].starts_with("@ids[")) continue;
    theirs[std::stoll(l[0].substr(5))] = std::stoll(l[1]);
  }
  RecordProperty("syscalls", fmt::format("{}", ours));
  EXPECT_GE(ours[kGetpidNr], 37) << "the instance saw fewer getpid calls than the target made";
  EXPECT_EQ(theirs, ours) << where(last_cmdline_) << ": calls per syscall number, bpftrace vs ftrace";
}

// kprobe and kretprobe on the function behind openat(2): one entry per
// openat ftrace saw, and the return values are sys_exit_openat's and the
// fds (or -errno) the target printed.
TEST_F(Bpftrace, KprobeAndKretprobeSeeEachOpenatAndItsResult) {
  const std::string function = "do_sys_openat2";
  if (traceable({function}).empty()) GTEST_SKIP() << "needs " << function << " in available_filter_functions";
  for (const auto& e : {kExec, kExitOpenat}) TRACEBED_REQUIRE(tracefs::Feature::event(e.system, e.name));
  for (const auto& e : {kExec, kExitOpenat}) ASSERT_OK(inst().event(e.system, e.name).enable());
  const std::string program = fmt::format(
      "kprobe:{0} /comm == \"{1}\"/ {{ @entries = count(); }} "
      "kretprobe:{0} /comm == \"{1}\"/ {{ printf(\"BT %d\\n\", (int32)retval); }}",
      function, kTargetComm);
  std::vector<std::string> args = {"open", "/proc/version", "/tmp/tb-none", "/proc/self/stat", "/", "/tmp/tb-none2"};
  testlib::ProbeRun run = trace_target(program, args);
  if (!refused_.empty()) GTEST_SKIP() << refused_;
  std::vector<std::string> ours, theirs, printed;
  for (const auto& e : after_exec(decoded({kExec, kExitOpenat}), run.pid))
    ours.push_back(std::to_string(testlib::int_field(e, "ret")));
  for (const auto& l : run.lines_of("BT")) theirs.push_back(l.at(0));
  for (const auto& l : run.lines_of("open")) printed.push_back(l.at(1));
  std::optional<int64_t> entries;
  for (const auto& l : run.lines)
    if (l.size() == 2 && l[0] == "@entries:") entries = std::stoll(l[1]);
  EXPECT_THAT(printed, ::testing::SizeIs(args.size() - 1)) << "the target did not open every path";
  EXPECT_THAT(theirs, UnorderedElementsAreArray(ours))
      << where(last_cmdline_) << ": " << function << "'s return values vs sys_exit_openat's";
  EXPECT_THAT(theirs, UnorderedElementsAreArray(printed))
      << where(last_cmdline_) << ": " << function << "'s return values vs what the target got";
  ASSERT_TRUE(entries) << where(last_cmdline_) << ": no @entries count in\n" << fmt::format("{}", run.lines);
  EXPECT_EQ(*entries, static_cast<int64_t>(ours.size())) << where(last_cmdline_) << ": kprobe hits vs openat calls";
}

// uprobe and uretprobe on the target's add: each call's arguments and sum
// as the target printed them and as a uprobe event at the same offset
// recorded them, for values from INT64_MIN to INT64_MAX.
TEST_F(Bpftrace, UprobeArgumentsAndResultsEqualFtracesUprobe) {
  if (!features().has(features::uprobes)) GTEST_SKIP() << "needs uprobes: no uprobe_events";
  auto sym = tracefs::find_elf_function(vm::probe_target_path().string(), "tracebed_target_add");
  ASSERT_OK(sym);
  auto in = create_enabled(UprobeDef::at(unique("bt_add"), kProbeTarget, sym->file_offset)
                               .arg(FetchArg::reg("di").name("a").type(FetchType::s64()))
                               .arg(FetchArg::reg("si").name("b").type(FetchType::s64())));
  ASSERT_OK(in);
  auto out = create_enabled(UprobeDef::on_return(unique("bt_add_ret"), kProbeTarget, sym->file_offset)
                                .arg(FetchArg::reg("ax").name("sum").type(FetchType::s64())));
  ASSERT_OK(out);
  const std::string fn = fmt::format("{}:tracebed_target_add", kProbeTarget);
  const std::string program = fmt::format(
      "uprobe:{0} {{ printf(\"BT in %ld %ld\\n\", (int64)arg0, (int64)arg1); }} "
      "uretprobe:{0} {{ printf(\"BT out %ld\\n\", (int64)retval); }}",
      fn);
  // bpftrace -c puts uprobes on its child only: one run per pair, the
  // target adding the pair 3 times (A, A+1, A+2).
  const std::vector<std::pair<std::string, std::string>> pairs = {
      {"0", "0"}, {"1", "-1"}, {"-5", "7"}, {"4294967296", "1"}, {"-9223372036854775807", "-1"},
      {"9223372036854775806", "1"}, {"123456789", "-987654321"}};
  std::vector<std::string> theirs_in, theirs_out, printed_in, printed_out, ours_in, ours_out;
  for (const auto& [a, b] : pairs) {
    testlib::ProbeRun run = trace_target(program, {"add", a, b, "3"});
    if (!refused_.empty()) GTEST_SKIP() << refused_;
    for (const auto& l : run.lines_of("BT")) {
      if (l.size() == 3 && l[0] == "in") theirs_in.push_back(l[1] + " " + l[2]);
      else if (l.size() == 2 && l[0] == "out") theirs_out.push_back(l[1]);
      else ADD_FAILURE() << where(last_cmdline_) << ": a line of neither probe: BT " << fmt::format("{}", l);
    }
    // "add A B -> SUM"
    for (const auto& l : run.lines_of("add")) {
      printed_in.push_back(l.at(0) + " " + l.at(1));
      printed_out.push_back(l.at(3));
    }
  }
  for (const auto& e : decoded({*in, *out})) {
    if (e.name == in->name()) ours_in.push_back(fmt::format("{} {}", testlib::int_field(e, "a"), testlib::int_field(e, "b")));
    else ours_out.push_back(std::to_string(testlib::int_field(e, "sum")));
  }
  EXPECT_EQ(printed_in.size(), pairs.size() * 3) << "the target made fewer calls than asked";
  EXPECT_THAT(theirs_in, UnorderedElementsAreArray(printed_in))
      << where(last_cmdline_) << ": uprobe arguments vs the target's calls";
  EXPECT_THAT(theirs_in, UnorderedElementsAreArray(ours_in))
      << where(last_cmdline_) << ": uprobe arguments vs ftrace's uprobe event";
  EXPECT_THAT(theirs_out, UnorderedElementsAreArray(printed_out))
      << where(last_cmdline_) << ": uretprobe results vs the target's sums";
  EXPECT_THAT(theirs_out, UnorderedElementsAreArray(ours_out))
      << where(last_cmdline_) << ": uretprobe results vs ftrace's uretprobe event";
}

// `bpftrace -l 'tracepoint:sched:*'` lists what tracefs's available_events
// lists for sched.
TEST_F(Bpftrace, ListShowsTheSchedTracepointsOfTracefs) {
  auto available = fs().available_events();
  ASSERT_OK(available);
  testlib::ToolRun r = tool({"-l", "tracepoint:sched:*"});
  ASSERT_TRUE(r.ok);
  std::set<std::string> ours, theirs;
  for (const auto& e : *available)
    if (e.system == "sched") ours.insert("tracepoint:sched:" + e.name);
  for (auto line : tracefs::split_lines(r.out))
    if (!tracefs::trim(line).empty()) theirs.emplace(tracefs::trim(line));
  EXPECT_FALSE(ours.empty()) << "tracefs lists no sched events";
  EXPECT_EQ(theirs, ours) << where(r.cmdline) << ": sched tracepoints, available_events vs bpftrace\n"
                          << testlib::set_diff(ours, theirs);
}

}  // namespace
}  // namespace tracebed::suites
