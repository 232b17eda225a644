// ftracetest dynevent/ fprobe and tprobe cases in spirit: f: probes on a
// function the probe target drives (its openat calls reach
// do_sys_openat2, fs/open.c, once each; its lseek and readlinkat calls
// lseek(2)'s function and do_readlinkat, for return values of 64 and 32 bits) and
// t: probes on sched_switch, every record checked against what the
// program printed or against the tracepoint's own event, decoded from the
// same pages.
#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <limits>
#include <map>
#include <regex>
#include <string>
#include <string_view>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "framework/decode/event_format.h"
#include "framework/tracefs/dynevent.h"
#include "framework/testing/tracefs_fixture.h"
#include "framework/tracefs/tracefs_text.h"

namespace tracebed::suites {
namespace {

using decode::parse_event_format;

// The function the probe target's openat calls go through.
constexpr const char* kOpenFunction = "do_sys_openat2";
// AT_FDCWD (include/uapi/linux/fcntl.h): the dfd the probe target passes.
constexpr int64_t kAtFdcwd = -100;

class ProbeTest : public TracefsTest {
 protected:
  using TracefsTest::TracefsTest;

  // Opens an existing file, a missing one and another existing one.
  ProbeRun open_files() { return run_target({"open", "/etc/tracebed/release", "/nonexistent", "/proc/self/stat"}); }
  static std::vector<std::string> paths(const ProbeRun& r) {
    std::vector<std::string> out;
    for (const auto& l : r.lines_of("open")) out.push_back(l.at(0));
    return out;
  }
  static std::vector<int64_t> fds(const ProbeRun& r) {
    std::vector<int64_t> out;
    for (const auto& l : r.lines_of("open")) out.push_back(std::stoll(l.at(1)));
    return out;
  }

  // Creates, enables in the instance, runs the open work, stops tracing.
  template <typename Builder>
  Result<DynamicEvent> probe_opens(const Builder& b, ProbeRun* run) {
    auto ev = create_enabled(b);
    if (!ev) return ev;
    *run = open_files();
    EXPECT_OK(inst().set_tracing_on(false));
    EXPECT_THAT(run->lines_of("open"), SizeIs(3));
    return ev;
  }
};

class Fprobe : public ProbeTest {
 public:
  Fprobe() : ProbeTest({features::dynamic_events, features::fprobes}) {}
};

// The last word of each `what` line of the probe target: what the call
// returned.
std::vector<int64_t> results(const ProbeRun& r, std::string_view what) {
  std::vector<int64_t> out;
  for (const auto& l : r.lines_of(what)) out.push_back(std::stoll(l.back()));
  return out;
}

// What an s32 makes of a value: its low 32 bits, signed.
std::vector<int64_t> low_halves(const std::vector<int64_t>& values) {
  std::vector<int64_t> out;
  for (int64_t v : values) out.push_back(static_cast<int32_t>(static_cast<uint32_t>(static_cast<uint64_t>(v))));
  return out;
}

class Tprobe : public ProbeTest {
 public:
  Tprobe() : ProbeTest({features::dynamic_events, features::tprobes, features::sched_events}) {}
};

// One entry record per openat the target made, with its dfd and path
// ($arg1, +0($arg2):ustring) and $comm, in order.
TEST_F(Fprobe, EntryFiresOncePerCallWithItsArguments) {
  TRACEBED_REQUIRE(features::fetcharg_argn);
  TRACEBED_REQUIRE(features::fetcharg_comm);
  TRACEBED_REQUIRE(features::type_ustring);
  ProbeRun run;
  auto ev = probe_opens(FprobeDef::entry(unique("open"), kOpenFunction)
                            .arg(FetchArg::arg(1).name("dfd").type(FetchType::s32()))
                            .arg(FetchArg::arg(2).deref(0).name("path").type(FetchType::ustring()))
                            .arg(FetchArg::comm().name("comm")),
                        &run);
  ASSERT_OK(ev);
  std::vector<DecodedEvent> events = of_pid(decoded(*ev), run.pid);
  // The program's name, cut to TASK_COMM_LEN - 1.
  EXPECT_THAT(events, Each(AllOf(FieldEq("dfd", kAtFdcwd), FieldEq("comm", "tracebed-probe-"))));
  EXPECT_THAT(str_fields(events, "path"), ElementsAreArray(paths(run)));
}

// %return: $retval is the fd the program got, or -errno. As s32: 7.3's
// do_sys_openat2 returns an int (6.12's a long), and the upper half of
// the register is then not the sign.
TEST_F(Fprobe, ExitRetvalIsTheFd) {
  TRACEBED_REQUIRE(features::fprobe_exit);
  ProbeRun run;
  auto ev = probe_opens(FprobeDef::exit(unique("openret"), kOpenFunction)
                            .arg(FetchArg::retval().name("ret").type(FetchType::s32())),
                        &run);
  ASSERT_OK(ev);
  EXPECT_THAT(int_fields(of_pid(decoded(*ev), run.pid), "ret"), ElementsAreArray(fds(run)));
}

// %return of lseek(2)'s function (testlib::lseek_probe: ksys_lseek, off_t,
// or the syscall's wrapper it is inlined into): $retval is the whole 64-bit
// offset, or -errno sign-extended, for 120 lseek(2) calls across off_t's range; u64 is the
// same bits and s32 only the low half (2^31 reads as INT32_MIN).
TEST_F(Fprobe, ExitRetvalOfAnOffTFunctionIsAll64Bits) {
  TRACEBED_REQUIRE(features::fprobe_exit);
  auto ev = create_enabled(FprobeDef::exit(unique("lseekret"), testlib::lseek_probe().function)
                               .arg(FetchArg::retval().name("ret").type(FetchType::s64()))
                               .arg(FetchArg::retval().name("uret").type(FetchType::u64()))
                               .arg(FetchArg::retval().name("low").type(FetchType::s32())));
  ASSERT_OK(ev);
  ProbeRun run = run_target_only(testlib::lseek_edge_args(10), {.start_tracing = true});
  std::vector<int64_t> want = results(run, "lseek");
  ASSERT_THAT(want, SizeIs(10 * testlib::kLseekEdgeCalls));
  ASSERT_THAT(want, AllOf(Contains(-EINVAL), Contains(int64_t{4294967296}),
                          Contains(std::numeric_limits<int64_t>::max())));
  std::vector<DecodedEvent> events = of_pid(decoded(*ev), run.pid);
  EXPECT_THAT(int_fields(events, "ret"), ElementsAreArray(want));
  EXPECT_THAT(int_fields(events, "uret"), ElementsAreArray(want));
  EXPECT_THAT(int_fields(events, "low"), ElementsAreArray(low_halves(want)));
}

// %return of do_readlinkat (fs/stat.c, an int; called by
// __x64_sys_readlinkat on 6.12): $retval as s32 is the length or -errno,
// as u32 the same 32 bits unsigned (-ENOENT is 4294967294), for 100
// readlinkat(2) calls: a symlink, a regular file (-EINVAL), a missing
// path (-ENOENT), a path through a file (-ENOTDIR), a name over NAME_MAX.
TEST_F(Fprobe, ExitRetvalOfAnIntFunctionIsS32) {
  TRACEBED_REQUIRE(features::fprobe_exit);
  auto ev = create_enabled(FprobeDef::exit(unique("rdlinkret"), "do_readlinkat")
                               .arg(FetchArg::retval().name("ret").type(FetchType::s32()))
                               .arg(FetchArg::retval().name("uret").type(FetchType::u32())));
  ASSERT_OK(ev);
  const std::vector<std::string> paths = {"/proc/self/exe", "/etc/tracebed/release", "/nonexistent/tracebed",
                                          "/etc/tracebed/release/x", "/" + std::string(300, 'n')};
  std::vector<std::string> args = {"readlink"};
  for (int round = 0; round < 20; ++round) args.insert(args.end(), paths.begin(), paths.end());
  ProbeRun run = run_target_only(args, {.start_tracing = true});
  std::vector<int64_t> want = results(run, "readlink");
  ASSERT_THAT(want, SizeIs(100));
  ASSERT_THAT(want, AllOf(Contains(-ENOENT), Contains(-EINVAL), Contains(-ENOTDIR), Contains(Gt(0))));
  // Before main, the static C library reads /proc/self/exe once: its own
  // path's length comes first.
  want.insert(want.begin(), static_cast<int64_t>(kProbeTarget.size()));
  std::vector<int64_t> bits;
  for (int64_t v : want) bits.push_back(static_cast<uint32_t>(v));
  std::vector<DecodedEvent> events = of_pid(decoded(*ev), run.pid);
  EXPECT_THAT(int_fields(events, "ret"), ElementsAreArray(want));
  EXPECT_THAT(int_fields(events, "uret"), ElementsAreArray(bits));
}

// Arguments by their BTF names (fs/open.c: do_sys_openat2(int dfd, const
// char __user *filename, struct open_how *how)).
TEST_F(Fprobe, BtfArgumentNames) {
  TRACEBED_COVERS("ftracetest: dynevent/add_remove_btfarg.tc");
  TRACEBED_REQUIRE(features::btf_args);
  TRACEBED_REQUIRE(features::type_ustring);
  ProbeRun run;
  auto ev = probe_opens(FprobeDef::entry(unique("openbtf"), kOpenFunction)
                            .arg(FetchArg::btf("dfd"))
                            .arg(FetchArg::btf("filename").type(FetchType::ustring())),
                        &run);
  ASSERT_OK(ev);
  std::vector<DecodedEvent> events = of_pid(decoded(*ev), run.pid);
  EXPECT_THAT(events, Each(FieldEq("dfd", kAtFdcwd)));
  EXPECT_THAT(str_fields(events, "filename"), ElementsAreArray(paths(run)));
}

// $arg*: every argument, each named as in BTF.
TEST_F(Fprobe, AllArgumentsByBtf) {
  TRACEBED_REQUIRE(features::btf_args);
  ProbeRun run;
  auto ev = probe_opens(FprobeDef::entry(unique("openall"), kOpenFunction).arg(FetchArg::all_args()), &run);
  ASSERT_OK(ev);
  auto text = ev->event(inst()).format();
  ASSERT_OK(text);
  auto format = parse_event_format(*text, ev->group(), "format");
  ASSERT_OK(format);
  for (const char* f : {"dfd", "filename", "how"}) EXPECT_NE((*format)->field(f), nullptr) << f << " in\n" << *text;
  EXPECT_THAT(of_pid(decoded(*ev), run.pid), AllOf(SizeIs(3), Each(FieldEq("dfd", kAtFdcwd))));
}

// BTF fields through two pointers: path_openat()'s nameidata holds the
// struct filename whose ->name is the path the target passed (fs/namei.c).
// Its callers change (do_filp_open became do_file_open in 7.x; getname()
// has no BTF entry on 7.3, getname_flags() is inlined into openat on
// 6.12); path_openat stays.
TEST_F(Fprobe, BtfFieldOfAnArgument) {
  TRACEBED_REQUIRE(features::btf_fields);
  ProbeRun run;
  auto ev = probe_opens(FprobeDef::entry(unique("pathopen"), "path_openat")
                            .arg(FetchArg::btf("nd->name->name").name("name").type(FetchType::string())),
                        &run);
  ASSERT_OK(ev);
  // Exec opens files this way too, and a lookup may be retried: the
  // opened paths must come in order among the target's names.
  std::vector<std::string> names = str_fields(of_pid(decoded(*ev), run.pid), "name");
  std::vector<std::string> want = paths(run);
  auto pos = names.begin();
  for (const std::string& p : want) {
    pos = std::find(pos, names.end(), p);
    ASSERT_NE(pos, names.end()) << p << " not among the looked-up names " << ::testing::PrintToString(names);
    ++pos;
  }
}

// dynamic_events lists the probe with its group; an enabled probe cannot
// be removed (EBUSY); removed, it is gone from dynamic_events and events/.
// The `trace` text of fprobe events (trace_fprobe.c print_fentry_event,
// print_fexit_event): an entry line is "NAME: (FUNC+0x0/0xSIZE) ARGS", an
// exit line "NAME: (CALLER+0xOFF/0xSIZE <- FUNC) ARGS", one per call in
// the records' order. The arguments are the decoded records', the exit's
// return values the fds the program got, and CALLER+OFF is the decoded
// return address by the guest's /proc/kallsyms.
TEST_F(Fprobe, TraceTextOfEntryAndExitNamesTheFunctionAndCaller) {
  TRACEBED_REQUIRE(features::fprobe_exit);
  TRACEBED_REQUIRE(features::fetcharg_argn);
  const std::string in = unique("text_in"), out = unique("text_out");
  auto entry = create_enabled(FprobeDef::entry(in, kOpenFunction).arg(FetchArg::arg(1).name("dfd").type(FetchType::s32())));
  ASSERT_OK(entry);
  ProbeRun run;
  auto exit = probe_opens(FprobeDef::exit(out, kOpenFunction).arg(FetchArg::retval().name("ret").type(FetchType::s32())),
                          &run);
  ASSERT_OK(exit);
  std::vector<std::string> in_lines, out_lines;
  for (const std::string& line : trace_lines(inst())) {
    if (line.find(" " + std::to_string(run.pid) + " ") == std::string::npos &&
        line.find("-" + std::to_string(run.pid) + " ") == std::string::npos)
      continue;
    if (auto at = line.find(" " + in + ": "); at != std::string::npos) in_lines.push_back(line.substr(at + 1));
    if (auto at = line.find(" " + out + ": "); at != std::string::npos) out_lines.push_back(line.substr(at + 1));
  }
  // One read: decoding consumes the pages.
  const std::vector<DecodedEvent> both = of_pid(decoded({*entry, *exit}), run.pid);
  const std::vector<DecodedEvent> ins = named(both, in), outs = named(both, out);
  ASSERT_THAT(ins, SizeIs(3));
  ASSERT_THAT(outs, SizeIs(3));
  EXPECT_THAT(int_fields(outs, "ret"), ElementsAreArray(fds(run)));
  ASSERT_THAT(in_lines, SizeIs(3));
  ASSERT_THAT(out_lines, SizeIs(3));
  const std::string kallsyms = sh("cat /proc/kallsyms");
  auto address_of = [&](const std::string& sym) -> uint64_t {
    for (std::string_view line : tracefs::split_lines(kallsyms)) {
      auto w = tracefs::split_words(line);
      if (w.size() >= 3 && w[2] == sym) return std::stoull(std::string(w[0]), nullptr, 16);
    }
    return 0;
  };
  const std::regex in_re(in + R"(: \()" + kOpenFunction + R"(\+0x0/0x[0-9a-f]+\) dfd=(-?[0-9]+))");
  const std::regex out_re(out + R"(: \(([A-Za-z0-9_.]+)\+0x([0-9a-f]+)/0x[0-9a-f]+ <- )" + kOpenFunction +
                          R"(\) ret=(-?[0-9]+))");
  for (size_t i = 0; i < 3; ++i) {
    SCOPED_TRACE(in_lines[i] + " / " + out_lines[i]);
    std::smatch m;
    ASSERT_TRUE(std::regex_match(in_lines[i], m, in_re));
    EXPECT_EQ(std::stoll(m[1]), int_field(ins[i], "dfd"));
    ASSERT_TRUE(std::regex_match(out_lines[i], m, out_re));
    const uint64_t caller = address_of(m[1]);
    ASSERT_NE(caller, 0u) << m[1] << " is not in /proc/kallsyms";
    EXPECT_EQ(caller + std::stoull(m[2], nullptr, 16), static_cast<uint64_t>(int_field(outs[i], "__probe_ret_ip")));
    EXPECT_EQ(std::stoll(m[3]), int_field(outs[i], "ret"));
  }
}

TEST_F(Fprobe, ListedBusyAndRemoved) {
  TRACEBED_COVERS("ftracetest: dynevent/add_remove_fprobe.tc");
  TRACEBED_REQUIRE(features::fprobe_exit);
  std::string name = unique("life");
  auto ev = create(FprobeDef::exit(name, kOpenFunction)
                                           .arg(FetchArg::retval().name("ret").type(FetchType::s64())));
  ASSERT_OK(ev);
  auto listed = tracefs::read_dynamic_events(fs());
  ASSERT_OK(listed);
  auto it = std::find_if(listed->begin(), listed->end(), [&](const auto& l) { return l.event == name; });
  ASSERT_NE(it, listed->end());
  EXPECT_EQ(it->kind, DynEventKind::fexit) << it->line;
  EXPECT_EQ(it->group, "fprobes") << it->line;
  EXPECT_EQ(it->target, std::string(kOpenFunction) + "%return") << it->line;
  EXPECT_THAT(it->args, ElementsAreArray({"ret=$retval:s64"})) << it->line;

  ASSERT_OK(ev->enable(inst()));
  auto busy = fs().top().files().try_write("dynamic_events", ev->def().remove_command(), true);
  ASSERT_OK(busy);
  EXPECT_EQ(*busy, EBUSY) << "removing an enabled fprobe";
  ASSERT_OK(ev->destroy());
  listed = tracefs::read_dynamic_events(fs());
  ASSERT_OK(listed);
  for (const auto& l : *listed) EXPECT_NE(l.event, name) << l.line;
  EXPECT_FALSE(fs().ops().exists(fs().root() + "/events/fprobes/" + name));
}

// A function that does not exist, and a BTF argument the function does
// not have, are refused in the kernel's words (kernel/trace/trace_probe.h
// ERRORS).
TEST_F(Fprobe, UnknownFunctionIsExplained) {
  TRACEBED_REQUIRE(features::error_log);
  auto def = FprobeDef::entry(unique("bad"), "tracebed_no_such_function");
  // 6.12 finds out only when registering (FAIL_REG_PROBE), 7.3 when
  // parsing the symbol (BAD_PROBE_ADDR); the caret is under the symbol.
  ExpectRefused(def, AnyOf(HasSubstr("Failed to register probe event"), HasSubstr("Invalid probed address or symbol")),
                def.command().find("tracebed_no_such_function"));
}

TEST_F(Fprobe, UnknownBtfArgumentIsExplained) {
  TRACEBED_REQUIRE(features::error_log);
  TRACEBED_REQUIRE(features::btf_args);
  ExpectRefused(FprobeDef::entry(unique("bad"), kOpenFunction).arg(FetchArg::btf("nosucharg")),
                "This variable is not found at this probe point");
}

// t: on sched_switch with BTF fields of its arguments (pids, and the comm
// array as a string): each record equals the sched_switch record next to
// it on its CPU.
TEST_F(Tprobe, SchedSwitchFieldsEqualTheEvent) {
  TRACEBED_REQUIRE(features::btf_fields);
  std::string name = unique("sw");
  auto ev = create(TprobeDef::on(name, "sched_switch")
                       .arg(FetchArg::btf("prev->pid").name("prev_pid"))
                       .arg(FetchArg::btf("next->pid").name("next_pid"))
                       .arg(FetchArg::btf("next->comm").name("next_comm").type(FetchType::string())));
  ASSERT_OK(ev);
  ASSERT_OK(inst().event("sched", "sched_switch").enable());
  ASSERT_OK(ev->enable(inst()));
  ASSERT_OK(inst().clear_trace());  // both on from the window's start
  ProbeRun run = run_target({"sleep", "2", "3"});
  std::vector<DecodedEvent> events = decoded({{"sched", "sched_switch"}, *ev}, Order::page);
  EXPECT_THAT(unprobed_sources(events, "sched_switch", name), IsEmpty()) << "sched_switch records the tprobe missed";
  // Both are probes on one tracepoint, called in the order they were
  // registered: per CPU the tprobe record follows its sched_switch record.
  std::vector<Probed> probed = probed_from(events, "sched_switch", name);
  EXPECT_THAT(probed, Not(IsEmpty()));
  size_t of_target = 0;
  for (const auto& [src, e] : probed) {
    SCOPED_TRACE(::testing::PrintToString(*e));
    ASSERT_NE(src, nullptr) << "no sched_switch before the tprobe record on cpu " << e->cpu;
    EXPECT_THAT(*e, AllOf(FieldEq("prev_pid", int_field(*src, "prev_pid")),
                          FieldEq("next_pid", int_field(*src, "next_pid")),
                          FieldEq("next_comm", str_field(*src, "next_comm"))));
    of_target += int_field(*e, "prev_pid") == run.pid;
  }
  EXPECT_GE(of_target, 3u);
}

// dynamic_events lists the tprobe in its default group; an enabled one
// cannot be removed (EBUSY); removed, it is gone from dynamic_events and
// events/.
TEST_F(Tprobe, ListedBusyAndRemoved) {
  TRACEBED_COVERS("ftracetest: dynevent/add_remove_tprobe.tc");
  std::string name = unique("life");
  auto ev = create(TprobeDef::on(name, "sched_switch"));
  ASSERT_OK(ev);
  auto listed = tracefs::read_dynamic_events(fs());
  ASSERT_OK(listed);
  auto it = std::find_if(listed->begin(), listed->end(), [&](const auto& l) { return l.event == name; });
  ASSERT_NE(it, listed->end());
  EXPECT_EQ(it->kind, DynEventKind::tprobe) << it->line;
  EXPECT_EQ(it->group, "tracepoints") << it->line;
  EXPECT_EQ(it->target, "sched_switch") << it->line;
  EXPECT_TRUE(ev->event(inst()).exists());

  ASSERT_OK(ev->enable(inst()));
  run_target({"sleep", "2", "1"});
  auto busy = fs().top().files().try_write("dynamic_events", ev->def().remove_command(), true);
  ASSERT_OK(busy);
  EXPECT_EQ(*busy, EBUSY) << "removing an enabled tprobe";
  EXPECT_THAT(decoded(*ev), Not(IsEmpty())) << "the target slept: at least one sched_switch";

  ASSERT_OK(ev->destroy());
  listed = tracefs::read_dynamic_events(fs());
  ASSERT_OK(listed);
  for (const auto& l : *listed) EXPECT_NE(l.event, name) << l.line;
  EXPECT_FALSE(fs().ops().exists(fs().root() + "/events/tracepoints/" + name));
}

// A field its argument's type does not have is refused in the kernel's
// words, the caret under the field. (A tracepoint that does not exist is
// accepted on 6.12: it may belong to a module not loaded yet.)
TEST_F(Tprobe, UnknownFieldIsExplained) {
  TRACEBED_REQUIRE(features::error_log);
  TRACEBED_REQUIRE(features::btf_fields);
  ExpectRefused(
      TprobeDef::on(unique("bad"), "sched_switch").arg(FetchArg::btf("prev->tracebed_no_such_field").name("x")),
      "This field is not found");
}

}  // namespace
}  // namespace tracebed::suites
