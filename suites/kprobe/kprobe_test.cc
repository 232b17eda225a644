// ftracetest kprobe/ and dynevent/ in spirit: kprobes and kretprobes on the
// path openat(2) takes, created through our builders in the guest, their
// events decoded from a fresh instance and compared with what the probe
// target says it opened and got back, and with the kernel's own files
// (/proc/version, /proc/kallsyms, error_log).
//
// The probed function is do_sys_openat2 (5.6+), do_sys_open before: both
// take (int dfd, const char __user *filename, ...) and return the fd or
// -errno (fs/open.c), so $arg1, $arg2 and $retval mean the same on both.
#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <cstring>
#include <optional>
#include <string>
#include <tuple>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "framework/tracefs/dynevent.h"
#include "framework/tracefs/tracefs_text.h"
#include "framework/testing/tracefs_fixture.h"

namespace tracebed::suites {
namespace {

// include/uapi/linux/fcntl.h.
constexpr int64_t kAtFdcwd = -100;
// include/linux/sched.h TASK_COMM_LEN is 16: the name keeps 15 characters.
constexpr std::string_view kTargetComm = "tracebed-probe-";
// Files the probe target opens: two that every guest image has, one that
// no image has (-ENOENT). All longer than 8 bytes, for the u64 fetches.
const std::vector<std::string> kPaths = {"/etc/tracebed/release", "/nonexistent/tracebed-kprobe",
                                         "/etc/tracebed/modules"};

// The first bytes of a string as the little-endian integer x86-64 loads.
template <typename T>
T load_le(std::string_view s, size_t offset = 0) {
  T v{};
  std::memcpy(&v, s.data() + offset, sizeof v);
  return v;
}

int64_t to_int(const std::string& s) { return std::stoll(s); }

class Kprobe : public TracefsTest {
 public:
  Kprobe() : TracefsTest({features::kprobes, features::fetcharg_argn}) {}

 protected:
  // Off until the probe target runs: our own writes open files too.
  void SetUpTest() override { ASSERT_OK(inst().set_tracing_on(false)); }

  // The kernel function openat(2) goes through, from /proc/kallsyms.
  const std::string& open_function() {
    static std::string name = [this] {
      std::string out = sh("awk '$3 == \"do_sys_openat2\" || $3 == \"do_sys_open\" {print $3}' /proc/kallsyms");
      std::vector<std::string_view> names = tracefs::split_words(out);
      if (std::find(names.begin(), names.end(), "do_sys_openat2") != names.end()) return std::string("do_sys_openat2");
      if (std::find(names.begin(), names.end(), "do_sys_open") != names.end()) return std::string("do_sys_open");
      return std::string();
    }();
    EXPECT_FALSE(name.empty()) << "neither do_sys_openat2 nor do_sys_open in /proc/kallsyms";
    return name;
  }

  // p:EVENT OPEN_FUNCTION and r:EVENT OPEN_FUNCTION.
  KprobeDef on_open(std::string_view event) { return KprobeDef::at(event, open_function()); }
  KprobeDef on_open_return(std::string_view event) { return KprobeDef::on_return(event, open_function()); }

  // The probe target opens the paths; only its events are recorded:
  // tracing starts when the shell has limited the instance to its own pid
  // and is about to exec the program, so neither the shell's opens of
  // those files nor other tasks' calls are in the buffer.
  ProbeRun open(const std::vector<std::string>& paths) {
    std::vector<std::string> args = {"open"};
    args.insert(args.end(), paths.begin(), paths.end());
    ProbeRun r = run_target_only(args, {.start_tracing = true});
    EXPECT_THAT(r.lines_of("open"), SizeIs(paths.size()));
    return r;
  }
  static std::vector<std::string> opened_paths(const ProbeRun& r) {
    std::vector<std::string> out;
    for (const auto& l : r.lines_of("open")) out.push_back(l.at(0));
    return out;
  }
  static std::vector<int64_t> opened_fds(const ProbeRun& r) {
    std::vector<int64_t> out;
    for (const auto& l : r.lines_of("open")) out.push_back(to_int(l.at(1)));
    return out;
  }
};

// The probe decodes exactly the names the program opened, in order, each
// relative to AT_FDCWD, and nothing else the program did.
TEST_F(Kprobe, OpenProbeDecodesExactlyTheFilesOpened) {
  TRACEBED_COVERS("ftracetest: kprobe/add_and_remove.tc", "ftracetest: kprobe/kprobe_args_string.tc");
  TRACEBED_REQUIRE(features::type_ustring);
  std::string name = unique("open");
  auto ev = create_enabled(on_open(name)
                               .arg(FetchArg::arg(1).name("dfd").type(FetchType::s32()))
                               .arg(FetchArg::arg(2).deref(0).name("path").type(FetchType::ustring())));
  ASSERT_OK(ev);
  ProbeRun r = open(kPaths);
  std::vector<DecodedEvent> events = decoded(*ev);
  EXPECT_THAT(events, Each(AllOf(FromPid(r.pid), FieldEq("dfd", kAtFdcwd))));
  std::vector<std::string> paths = str_fields(events, "path");
  EXPECT_THAT(paths, ElementsAreArray(opened_paths(r)));
  EXPECT_THAT(paths, ElementsAreArray(kPaths));
}

// A kretprobe's $retval is the fd (or -errno) the program got back, for
// 150 opens in one run: a dropped, doubled or reordered return shows. Read
// as s32, the fd's C type: on 7.3 the upper half of %rax is not the sign
// of -ENOENT (s64 reads 4294967294), as the x86-64 psABI allows for a
// function returning int.
TEST_F(Kprobe, KretprobeRetvalIsTheFdTheProgramGot) {
  TRACEBED_COVERS("ftracetest: kprobe/kretprobe_args.tc");
  std::string name = unique("open_ret");
  auto ev = create_enabled(on_open_return(name).arg(FetchArg::retval().name("ret").type(FetchType::s32())));
  ASSERT_OK(ev);
  std::vector<std::string> paths;
  for (int i = 0; i < 50; ++i) paths.insert(paths.end(), kPaths.begin(), kPaths.end());
  ProbeRun r = open(paths);
  std::vector<DecodedEvent> events = decoded(*ev);
  EXPECT_THAT(events, Each(FromPid(r.pid)));
  std::vector<int64_t> rets = int_fields(events, "ret");
  EXPECT_THAT(rets, ElementsAreArray(opened_fds(r)));
  EXPECT_THAT(rets, AllOf(Contains(-ENOENT), Contains(Ge(0))));
}

// "p:EVENT SYM%return" is a return probe: listed as one (r) and seeing the
// return values.
TEST_F(Kprobe, PercentReturnMakesAReturnProbe) {
  TRACEBED_COVERS("ftracetest: kprobe/kretprobe_return_suffix.tc");
  TRACEBED_REQUIRE(features::kprobe_percent_return);
  std::string name = unique("pct_ret");
  auto ev =
      create_enabled(on_open_return(name).percent_return().arg(FetchArg::retval().name("ret").type(FetchType::s32())));
  ASSERT_OK(ev);
  EXPECT_THAT(ev->def().command, HasSubstr("%return"));
  auto entry = listed(*ev);
  ASSERT_TRUE(entry);
  EXPECT_EQ(entry->kind, DynEventKind::kretprobe) << entry->line;
  ProbeRun r = open(kPaths);
  EXPECT_THAT(int_fields(decoded(*ev), "ret"), ElementsAreArray(opened_fds(r)));
}

// r10: the kernel keeps MAXACTIVE and lists it back; the probe still fires
// once per return.
TEST_F(Kprobe, MaxactiveIsKeptAndTheProbeFires) {
  TRACEBED_COVERS("ftracetest: kprobe/kretprobe_maxactive.tc");
  TRACEBED_REQUIRE(features::kretprobe_maxactive);
  std::string name = unique("maxact");
  auto ev =
      create_enabled(on_open_return(name).maxactive(10).arg(FetchArg::retval().name("ret").type(FetchType::s32())));
  ASSERT_OK(ev);
  auto entry = listed(*ev);
  ASSERT_TRUE(entry);
  EXPECT_EQ(entry->kind, DynEventKind::kretprobe) << entry->line;
  EXPECT_EQ(entry->maxactive, 10u) << entry->line;
  ProbeRun r = open(kPaths);
  EXPECT_THAT(int_fields(decoded(*ev), "ret"), ElementsAreArray(opened_fds(r)));
}

// $comm is the name of the task that hit the probe.
TEST_F(Kprobe, CommIsTheProgramName) {
  TRACEBED_COVERS("ftracetest: kprobe/kprobe_args_comm.tc");
  TRACEBED_REQUIRE(features::fetcharg_comm);
  std::string name = unique("comm");
  auto ev = create_enabled(on_open(name).arg(FetchArg::comm().name("who")));
  ASSERT_OK(ev);
  ProbeRun r = open(kPaths);
  std::vector<DecodedEvent> events = decoded(*ev);
  ASSERT_THAT(events, SizeIs(kPaths.size()));
  EXPECT_THAT(events, Each(AllOf(FromPid(r.pid), FieldEq("who", kTargetComm))));
}

// $stackN is the Nth word of the stack and $stack its address: +0($stack)
// and +8($stack) read the same words. At the function's entry $stack0 is
// the return address, in kernel text (Documentation/arch/x86/x86_64/mm.rst:
// kernel text mapping from 0xffffffff80000000).
TEST_F(Kprobe, StackWordsAndStackAddressAgree) {
  std::string name = unique("stack");
  auto ev = create_enabled(on_open(name)
                               .arg(FetchArg::stack(0).name("s0").type(FetchType::x64()))
                               .arg(FetchArg::stack(1).name("s1").type(FetchType::x64()))
                               .arg(FetchArg::stack().deref(0).name("d0").type(FetchType::x64()))
                               .arg(FetchArg::stack().deref(8).name("d1").type(FetchType::x64())));
  ASSERT_OK(ev);
  open(kPaths);
  std::vector<DecodedEvent> events = decoded(*ev);
  ASSERT_THAT(events, SizeIs(kPaths.size()));
  for (const DecodedEvent& e : events) {
    EXPECT_EQ(int_field(e, "s0"), int_field(e, "d0"));
    EXPECT_EQ(int_field(e, "s1"), int_field(e, "d1"));
    EXPECT_GE(static_cast<uint64_t>(int_field(e, "s0")), 0xffffffff80000000ull);
  }
}

// The symbol type prints an address as SYM+0xOFF/0xSIZE: that symbol's
// address in /proc/kallsyms plus OFF is the raw value.
TEST_F(Kprobe, SymbolTypeNamesTheReturnAddress) {
  TRACEBED_COVERS("ftracetest: kprobe/kprobe_args_symbol.tc");
  TRACEBED_REQUIRE(features::type_symbol);
  std::string name = unique("sym");
  auto ev = create_enabled(on_open(name)
                               .arg(FetchArg::stack(0).name("caller").type(FetchType::symbol()))
                               .arg(FetchArg::stack(0).name("raw").type(FetchType::x64())));
  ASSERT_OK(ev);
  open(kPaths);
  ASSERT_OK(inst().set_tracing_on(false));
  int seen = 0;
  for (const std::string& line : trace_lines(inst())) {
    if (line.find(" " + name + ": ") == std::string::npos) continue;
    SCOPED_TRACE(line);
    ++seen;
    size_t c = line.find(" caller=");
    size_t r = line.find(" raw=0x");
    ASSERT_NE(c, std::string::npos);
    ASSERT_NE(r, std::string::npos);
    std::string caller = line.substr(c + 8, line.find(' ', c + 1) - c - 8);
    uint64_t raw = std::stoull(line.substr(r + 7, line.find(' ', r + 1) - r - 7), nullptr, 16);
    size_t plus = caller.find('+');
    size_t slash = caller.find('/');
    ASSERT_NE(plus, std::string::npos);
    ASSERT_NE(slash, std::string::npos);
    std::string sym = caller.substr(0, plus);
    uint64_t off = std::stoull(caller.substr(plus + 1, slash - plus - 1), nullptr, 16);
    std::string addr = sh("awk '$3 == \"" + sym + "\" {print $1}' /proc/kallsyms");
    std::vector<uint64_t> addrs;
    for (std::string_view a : tracefs::split_words(addr)) addrs.push_back(std::stoull(std::string(a), nullptr, 16));
    ASSERT_THAT(addrs, Not(IsEmpty())) << sym << " is not in /proc/kallsyms";
    EXPECT_THAT(addrs, Contains(raw - off)) << sym << "+" << off << " is not " << raw;
  }
  EXPECT_EQ(seen, static_cast<int>(kPaths.size()));
}

// symstr (README "symstr") records at probe time the text the symbol
// type prints when `trace` is read.
TEST_F(Kprobe, SymstrRecordsWhatSymbolPrints) {
  TRACEBED_REQUIRE(features::type_symstr);
  std::string name = unique("symstr");
  auto ev = create_enabled(on_open(name)
                               .arg(FetchArg::stack(0).name("printed").type(FetchType::symbol()))
                               .arg(FetchArg::stack(0).name("recorded").type(FetchType::symstr())));
  ASSERT_OK(ev);
  ProbeRun r = open(kPaths);
  ASSERT_OK(inst().set_tracing_on(false));
  std::vector<std::string> printed;
  for (const std::string& line : trace_lines(inst())) {
    size_t at = line.find(" printed=");
    if (line.find(" " + name + ": ") == std::string::npos || at == std::string::npos) continue;
    printed.push_back(line.substr(at + 9, line.find(' ', at + 1) - at - 9));
  }
  ASSERT_THAT(printed, SizeIs(kPaths.size()));
  std::vector<DecodedEvent> events = decoded(*ev);
  EXPECT_THAT(events, Each(FromPid(r.pid)));
  EXPECT_THAT(str_fields(events, "recorded"), ElementsAreArray(printed));
}

// char (README "char") is one byte printed as a character: +u1 is the
// second byte of each path (the first is always '/').
TEST_F(Kprobe, CharTypeIsAByteOfThePath) {
  TRACEBED_COVERS("ftracetest: kprobe/kprobe_args_char.tc");
  TRACEBED_REQUIRE(features::type_char);
  TRACEBED_REQUIRE(features::fetcharg_user_deref);
  std::string name = unique("char");
  auto ev = create_enabled(on_open(name).arg(FetchArg::arg(2).user_deref(1).name("c").type(FetchType::character())));
  ASSERT_OK(ev);
  ProbeRun r = open(kPaths);
  ASSERT_OK(inst().set_tracing_on(false));
  std::vector<std::string> paths = opened_paths(r);
  std::vector<std::string> want_text, got_text;
  for (const std::string& p : paths) want_text.push_back(std::string(" c='") + p[1] + "'");
  for (const std::string& line : trace_lines(inst())) {
    size_t at = line.find(" c='");
    if (line.find(" " + name + ": ") == std::string::npos || at == std::string::npos) continue;
    got_text.push_back(line.substr(at, 6));
  }
  EXPECT_THAT(got_text, ElementsAreArray(want_text));
  std::vector<int64_t> want;
  for (const std::string& p : paths) want.push_back(p[1]);
  EXPECT_THAT(int_fields(decoded(*ev), "c"), ElementsAreArray(want));
}

// @SYM reads kernel memory at a symbol: linux_banner is the text
// /proc/version prints (init/version.c), and @linux_banner+6 skips "Linux ".
TEST_F(Kprobe, SymbolMemoryFetchReadsTheBanner) {
  std::string version = sh("cat /proc/version");
  ASSERT_TRUE(version.starts_with("Linux version ")) << version;
  std::string name = unique("banner");
  auto ev = create_enabled(on_open(name)
                               .arg(FetchArg::symbol("linux_banner").name("banner").type(FetchType::string()))
                               .arg(FetchArg::symbol("linux_banner", 6).name("tail").type(FetchType::string())));
  ASSERT_OK(ev);
  open({kPaths[0]});
  EXPECT_THAT(decoded(*ev), ElementsAre(AllOf(FieldEq("banner", version), FieldEq("tail", version.substr(6)))));
}

// Every integer type on a known value: dfd is AT_FDCWD in the low 32 bits
// of the first argument register (the x86-64 psABI), and the first bytes of
// the user's path are little-endian integers.
TEST_F(Kprobe, IntegerTypesCutAndSignExtendKnownValues) {
  TRACEBED_COVERS("ftracetest: kprobe/kprobe_args_type.tc");
  TRACEBED_REQUIRE(features::fetcharg_user_deref);
  std::string name = unique("types");
  KprobeDef k = on_open(name);
  struct Want {
    const char* field;
    FetchType type;
    bool from_path;
  };
  const std::vector<Want> wants = {
      {"s8", FetchType::s8(), false},   {"s16", FetchType::s16(), false}, {"s32", FetchType::s32(), false},
      {"u8", FetchType::u8(), false},   {"u16", FetchType::u16(), false}, {"u32", FetchType::u32(), false},
      {"x8", FetchType::x8(), false},   {"x16", FetchType::x16(), false}, {"x32", FetchType::x32(), false},
      {"pu64", FetchType::u64(), true}, {"ps64", FetchType::s64(), true}, {"px64", FetchType::x64(), true},
      {"pu32", FetchType::u32(), true}, {"pu16", FetchType::u16(), true}, {"pu8", FetchType::u8(), true},
  };
  for (const Want& w : wants) {
    FetchArg a = w.from_path ? FetchArg::arg(2).user_deref(0) : FetchArg::arg(1);
    k.arg(a.name(w.field).type(w.type));
  }
  auto ev = create_enabled(k);
  ASSERT_OK(ev);
  ProbeRun r = open(kPaths);
  // x types print in hex, s types signed (kernel/trace/trace_probe.c
  // DEFINE_BASIC_PRINT_TYPE_FUNC); `trace` is read before the pages are.
  ASSERT_OK(inst().set_tracing_on(false));
  int printed = 0;
  for (const std::string& line : trace_lines(inst())) {
    if (line.find(" " + name + ": ") == std::string::npos) continue;
    ++printed;
    EXPECT_THAT(line, HasSubstr(" s8=-100 s16=-100 s32=-100 u8=156 u16=65436 u32=4294967196"));
    EXPECT_THAT(line, HasSubstr(" x8=0x9c x16=0xff9c x32=0xffffff9c "));
  }
  EXPECT_EQ(printed, static_cast<int>(kPaths.size()));
  std::vector<DecodedEvent> events = decoded(*ev);
  ASSERT_THAT(events, SizeIs(kPaths.size()));
  std::vector<std::string> paths = opened_paths(r);
  for (size_t i = 0; i < events.size(); ++i) {
    const DecodedEvent& e = events[i];
    const std::string& p = paths.at(i);
    SCOPED_TRACE(p);
    EXPECT_EQ(int_field(e, "s8"), -100);
    EXPECT_EQ(int_field(e, "s16"), -100);
    EXPECT_EQ(int_field(e, "s32"), -100);
    EXPECT_EQ(int_field(e, "u8"), 0x9c);
    EXPECT_EQ(int_field(e, "u16"), 0xff9c);
    EXPECT_EQ(int_field(e, "u32"), 0xffffff9c);
    EXPECT_EQ(int_field(e, "x8"), 0x9c);
    EXPECT_EQ(int_field(e, "x16"), 0xff9c);
    EXPECT_EQ(int_field(e, "x32"), 0xffffff9c);
    EXPECT_EQ(static_cast<uint64_t>(int_field(e, "pu64")), load_le<uint64_t>(p));
    EXPECT_EQ(int_field(e, "ps64"), load_le<int64_t>(p));
    EXPECT_EQ(static_cast<uint64_t>(int_field(e, "px64")), load_le<uint64_t>(p));
    EXPECT_EQ(int_field(e, "pu32"), load_le<uint32_t>(p));
    EXPECT_EQ(int_field(e, "pu16"), load_le<uint16_t>(p));
    EXPECT_EQ(int_field(e, "pu8"), static_cast<uint8_t>(p[0]));
  }
}

// b<width>@<offset>/<container>: bits [offset, offset+width) of the
// container, counted from the least significant bit.
TEST_F(Kprobe, BitfieldsExtractTheBitsOfUserBytes) {
  TRACEBED_REQUIRE(features::type_bitfield);
  TRACEBED_REQUIRE(features::fetcharg_user_deref);
  std::string name = unique("bits");
  auto ev = create_enabled(on_open(name)
                               .arg(FetchArg::arg(2).user_deref(0).name("hi4").type(FetchType::bitfield(4, 4, 8)))
                               .arg(FetchArg::arg(2).user_deref(0).name("lo4").type(FetchType::bitfield(4, 0, 8)))
                               .arg(FetchArg::arg(2).user_deref(0).name("mid5").type(FetchType::bitfield(5, 3, 32)))
                               .arg(FetchArg::arg(2).user_deref(0).name("top7").type(FetchType::bitfield(7, 57, 64))));
  ASSERT_OK(ev);
  ProbeRun r = open(kPaths);
  std::vector<DecodedEvent> events = decoded(*ev);
  ASSERT_THAT(events, SizeIs(kPaths.size()));
  std::vector<std::string> paths = opened_paths(r);
  for (size_t i = 0; i < events.size(); ++i) {
    const std::string& p = paths.at(i);
    SCOPED_TRACE(p);
    uint8_t b = static_cast<uint8_t>(p[0]);
    EXPECT_EQ(int_field(events[i], "hi4"), (b >> 4) & 0xf);
    EXPECT_EQ(int_field(events[i], "lo4"), b & 0xf);
    EXPECT_EQ(int_field(events[i], "mid5"), (load_le<uint32_t>(p) >> 3) & 0x1f);
    EXPECT_EQ(static_cast<uint64_t>(int_field(events[i], "top7")), (load_le<uint64_t>(p) >> 57) & 0x7f);
  }
}

// NAME= names the field; an argument without one is named argN by its
// position (Documentation/trace/kprobetrace.rst), in the format file and
// in dynamic_events. (An unnamed $argN would take its BTF name where the
// kernel has BTF args: an immediate has none.)
TEST_F(Kprobe, ArgumentsAreNamedOrNumbered) {
  TRACEBED_COVERS("ftracetest: kprobe/kprobe_args.tc");
  std::string name = unique("names");
  auto ev = create_enabled(on_open(name)
                               .arg(FetchArg::arg(1).name("dirfd").type(FetchType::s32()))
                               .arg(FetchArg::immediate(int64_t{7}).type(FetchType::s32())));
  ASSERT_OK(ev);
  auto format = ev->event(inst()).format();
  ASSERT_OK(format);
  EXPECT_THAT(*format, HasSubstr("field:s32 dirfd;"));
  EXPECT_THAT(*format, HasSubstr("field:s32 arg2;"));
  auto entry = listed(*ev);
  ASSERT_TRUE(entry);
  EXPECT_THAT(entry->args, ElementsAre("dirfd=$arg1:s32", "arg2=\\7:s32"));
  open({kPaths[0]});
  EXPECT_THAT(decoded(*ev), ElementsAre(AllOf(FieldEq("dirfd", kAtFdcwd), FieldEq("arg2", 7))));
}

// +|-OFFS(FETCHARG) dereferences at an offset: +5 skips into the path,
// and -5 reads back into the string before it. execve(2) lays argv out
// back to back, so 5 bytes before each path are the last 4 characters of
// the argument before it ("open" for the first).
TEST_F(Kprobe, OffsetDereferencesReadAroundThePath) {
  TRACEBED_REQUIRE(features::type_ustring);
  std::string name = unique("offs");
  auto ev = create_enabled(on_open(name)
                               .arg(FetchArg::arg(2).deref(5).name("after5").type(FetchType::ustring()))
                               .arg(FetchArg::arg(2).deref(-5).name("before5").type(FetchType::ustring())));
  ASSERT_OK(ev);
  ProbeRun r = open(kPaths);
  std::vector<DecodedEvent> events = decoded(*ev);
  ASSERT_THAT(events, SizeIs(kPaths.size()));
  std::vector<std::string> args = {"open"};
  for (const std::string& p : opened_paths(r)) args.push_back(p);
  for (size_t i = 0; i < events.size(); ++i) {
    SCOPED_TRACE(args[i + 1]);
    EXPECT_EQ(str_field(events[i], "after5"), args[i + 1].substr(5));
    EXPECT_EQ(str_field(events[i], "before5"), args[i].substr(args[i].size() - 4));
  }
}

// \IMM and \"STR" record constants.
TEST_F(Kprobe, ImmediatesRecordTheirValues) {
  TRACEBED_REQUIRE(features::fetcharg_immediate);
  std::string name = unique("imm");
  KprobeDef k = on_open(name)
                      .arg(FetchArg::immediate(int64_t{1234}).name("num"))
                      .arg(FetchArg::immediate(int64_t{-5}).name("neg").type(FetchType::s32()));
  bool with_string = features().has(features::fetcharg_immediate_string);
  if (with_string) k.arg(FetchArg::immediate(std::string_view("tracebed")).name("text").type(FetchType::string()));
  auto ev = create_enabled(k);
  ASSERT_OK(ev);
  open(kPaths);
  std::vector<DecodedEvent> events = decoded(*ev);
  ASSERT_THAT(events, SizeIs(kPaths.size()));
  EXPECT_THAT(events, Each(AllOf(FieldEq("num", 1234), FieldEq("neg", -5))));
  if (with_string) {
    EXPECT_THAT(events, Each(FieldEq("text", "tracebed")));
  }
}

// Disabled, the probe records nothing; enabled again, it records again.
TEST_F(Kprobe, DisabledProbeRecordsNothing) {
  TRACEBED_REQUIRE(features::type_ustring);
  std::string name = unique("onoff");
  auto ev = create_enabled(on_open(name).arg(FetchArg::arg(2).deref(0).name("path").type(FetchType::ustring())));
  ASSERT_OK(ev);
  open({kPaths[0]});
  ASSERT_OK(ev->disable(inst()));
  auto state = ev->event(inst()).enable_state();
  ASSERT_OK(state);
  EXPECT_EQ(*state, "0");
  open({kPaths[1]});
  ASSERT_OK(ev->enable(inst()));
  open({kPaths[2]});
  EXPECT_THAT(str_fields(decoded(*ev), "path"), ElementsAre(kPaths[0], kPaths[2]));
}

// An event filter on a probe's field lets exactly the matching call in.
TEST_F(Kprobe, FilterOnAProbeFieldMatchesOneCall) {
  TRACEBED_REQUIRE(features::type_ustring);
  std::string name = unique("filt");
  auto ev = create(on_open(name)
                       .arg(FetchArg::arg(1).name("dfd").type(FetchType::s32()))
                       .arg(FetchArg::arg(2).deref(0).name("path").type(FetchType::ustring())));
  ASSERT_OK(ev);
  ASSERT_OK(ev->event(inst()).set_filter("path == \"" + kPaths[1] + "\" && dfd == -100"));
  ASSERT_OK(ev->enable(inst()));
  open(kPaths);
  EXPECT_THAT(decoded(*ev), ElementsAre(FieldEq("path", kPaths[1])));
}

// A traceoff trigger whose filter matches the second open stops the
// instance's tracing there: the third open is never recorded.
TEST_F(Kprobe, TraceoffTriggerStopsTracingAtTheMatchingCall) {
  TRACEBED_REQUIRE(features::event_triggers);
  TRACEBED_REQUIRE(features::type_ustring);
  std::string name = unique("toff");
  auto ev = create(on_open(name).arg(FetchArg::arg(2).deref(0).name("path").type(FetchType::ustring())));
  ASSERT_OK(ev);
  Trigger t = Trigger::traceoff().filter("path == \"" + kPaths[1] + "\"");
  ASSERT_OK(ev->event(inst()).add_trigger(t));
  ASSERT_OK(ev->enable(inst()));
  open(kPaths);
  auto on = inst().tracing_on();
  ASSERT_OK(on);
  EXPECT_FALSE(*on) << "the traceoff trigger did not fire";
  std::vector<std::string> paths = str_fields(decoded(*ev), "path");
  // The trigger has a filter, so it runs after the event is committed
  // (kernel/trace/trace_events_trigger.c event_triggers_post_call).
  EXPECT_THAT(paths, ElementsAre(kPaths[0], kPaths[1]));
  EXPECT_OK(ev->event(inst()).remove_trigger(t));
}

// A stacktrace trigger on one call adds exactly one kernel stack, after
// that call's event, going back to the system call entry.
TEST_F(Kprobe, StacktraceTriggerRecordsOneStack) {
  TRACEBED_REQUIRE(features::event_triggers);
  TRACEBED_REQUIRE(features::type_ustring);
  std::string name = unique("stk");
  auto ev = create(on_open(name).arg(FetchArg::arg(2).deref(0).name("path").type(FetchType::ustring())));
  ASSERT_OK(ev);
  Trigger t = Trigger::stacktrace().filter("path == \"" + kPaths[2] + "\"");
  ASSERT_OK(ev->event(inst()).add_trigger(t));
  ASSERT_OK(ev->enable(inst()));
  open(kPaths);
  ASSERT_OK(inst().set_tracing_on(false));
  std::vector<std::string> lines = trace_lines(inst());
  int stacks = 0;
  size_t last_event = 0, stack_at = 0;
  for (size_t i = 0; i < lines.size(); ++i) {
    if (lines[i].find("<stack trace>") != std::string::npos) {
      ++stacks;
      stack_at = i;
    }
    if (lines[i].find(kPaths[2]) != std::string::npos) last_event = i;
  }
  EXPECT_EQ(stacks, 1) << ::testing::PrintToString(lines);
  EXPECT_GT(stack_at, last_event);
  std::string stack;
  for (size_t i = stack_at; i < lines.size(); ++i) stack += lines[i] + "\n";
  EXPECT_THAT(stack, HasSubstr("do_syscall_64"));
  EXPECT_OK(ev->event(inst()).remove_trigger(t));
}

// Several probes on one function each fire once per call: two entry
// probes with different arguments and a return probe.
TEST_F(Kprobe, SeveralProbesOnOneFunctionAllFire) {
  TRACEBED_COVERS("ftracetest: dynevent/add_remove_kprobe.tc");
  TRACEBED_REQUIRE(features::type_ustring);
  auto a =
      create_enabled(on_open(unique("multi_a")).arg(FetchArg::arg(2).deref(0).name("path").type(FetchType::ustring())));
  auto b = create_enabled(on_open(unique("multi_b")).arg(FetchArg::arg(1).name("dfd").type(FetchType::s32())));
  auto c = create_enabled(on_open_return(unique("multi_c")).arg(FetchArg::retval().name("ret").type(FetchType::s32())));
  ASSERT_OK(a);
  ASSERT_OK(b);
  ASSERT_OK(c);
  ProbeRun r = open(kPaths);
  std::vector<DecodedEvent> all = decoded({*a, *b, *c});
  EXPECT_THAT(str_fields(named(all, a->name()), "path"), ElementsAreArray(kPaths));
  EXPECT_THAT(named(all, b->name()), SizeIs(kPaths.size()));
  EXPECT_THAT(int_fields(named(all, c->name()), "ret"), ElementsAreArray(opened_fds(r)));
  // Each call: both entry probes before its return probe.
  ASSERT_THAT(all, SizeIs(3 * kPaths.size()));
  for (size_t i = 0; i < all.size(); i += 3) EXPECT_THAT(all[i + 2], IsEvent(c->name()));
}

// A second definition under an existing name, with the same argument
// names and types, adds a probe point to that event: the syscall's entry
// and the function it calls both record into it, in call order, and one
// removal takes both.
TEST_F(Kprobe, SameNameAppendsAProbePoint) {
  TRACEBED_COVERS("ftracetest: kprobe/kprobe_multiprobe.tc");
  TRACEBED_REQUIRE(features::probe_append);
  std::string syscall = sh("awk '$3 == \"__x64_sys_openat\" {print $3}' /proc/kallsyms");
  ASSERT_EQ(tracefs::trim(syscall), "__x64_sys_openat") << "no __x64_sys_openat in /proc/kallsyms";
  std::string name = unique("append");
  auto ev = create(KprobeDef::at(name, "__x64_sys_openat")
                       .arg(FetchArg::immediate(int64_t{1}).name("point").type(FetchType::u8())));
  ASSERT_OK(ev);
  auto second = DynamicEvent::create(
      fs(), on_open(name).arg(FetchArg::immediate(int64_t{2}).name("point").type(FetchType::u8())));
  ASSERT_OK(second);
  second->release();  // the event is ev's: its removal takes both points
  auto all = tracefs::read_dynamic_events(fs());
  ASSERT_OK(all);
  std::vector<std::string> targets;
  for (const DynEventEntry& e : *all)
    if (e.event == name) targets.push_back(e.target);
  EXPECT_THAT(targets, ElementsAre("__x64_sys_openat", open_function()));
  ASSERT_OK(ev->enable(inst()));
  open(kPaths);
  EXPECT_THAT(int_fields(decoded(*ev), "point"), ElementsAre(1, 2, 1, 2, 1, 2));
  ASSERT_OK(ev->destroy());
  all = tracefs::read_dynamic_events(fs());
  ASSERT_OK(all);
  for (const DynEventEntry& e : *all) EXPECT_NE(e.event, name) << e.line;
}

// An enabled probe is in use: removing it fails with EBUSY and it stays;
// disabled, it goes, from dynamic_events and from every events/ directory.
TEST_F(Kprobe, EnabledProbeCannotBeRemoved) {
  TRACEBED_COVERS("ftracetest: kprobe/busy_check.tc");
  std::string name = unique("busy");
  auto ev = create_enabled(on_open(name).arg(FetchArg::arg(1).name("dfd")));
  ASSERT_OK(ev);
  ASSERT_NO_FATAL_FAILURE(ExpectRemovedOnlyOnceDisabled(*ev));
  EXPECT_FALSE(ev->event(fs().top()).exists());
  // Removing it again: there is nothing to remove.
  auto err = fs().top().files().try_write(ev->file(), ev->def().remove_command(), true);
  ASSERT_OK(err);
  EXPECT_EQ(*err, ENOENT);
}

// An unknown symbol: the kernel points at it.
TEST_F(Kprobe, UnknownSymbolIsRefused) {
  TRACEBED_REQUIRE(features::error_log);
  KprobeDef k = KprobeDef::at(unique("nosym"), "tracebed_no_such_function");
  // 5.10 fails the registration (ENOENT), later kernels the parse (EINVAL).
  auto entry =
      ExpectRefused(k, StrEq("Invalid probed address or symbol"), k.command().find("tracebed_no_such_function"));
  ASSERT_TRUE(entry);
  EXPECT_EQ(entry->location, "trace_kprobe");
}

// A fetch argument the kernel cannot parse: a variable that does not
// exist, and a register that does not.
TEST_F(Kprobe, BadFetchArgumentsAreRefused) {
  TRACEBED_REQUIRE(features::error_log);
  KprobeDef var = on_open(unique("badvar")).arg(FetchArg::raw("x=$tracebed"));
  // 5.10 spells it "valiable" (kernel/trace/trace_probe.h ERRORS).
  auto entry = ExpectRefused(var, AnyOf("Invalid $-valiable specified", "Invalid $-variable specified"),
                             var.command().find("$tracebed"), EINVAL);
  ASSERT_TRUE(entry);
  EXPECT_EQ(entry->location, "trace_kprobe");

  KprobeDef reg = on_open(unique("badreg")).arg(FetchArg::reg("tracebed").name("x"));
  ExpectRefused(reg, StrEq("Invalid register name"), reg.command().find("%tracebed"), EINVAL);
}

// MAX_TRACE_ARGS is 128 (kernel/trace/trace_probe.h): 128 arguments are
// kept, a 129th never is. Kernels differ in how they say no: 5.10 and 6.1
// accept the definition and drop the extra argument; later ones refuse it
// (E2BIG), and where they log it, error_log points at the arguments.
TEST_F(Kprobe, NoProbeKeepsMoreThan128Arguments) {
  KprobeDef ok = on_open(unique("args128"));
  KprobeDef bad = on_open(unique("args129"));
  for (int i = 0; i < 129; ++i) {
    FetchArg a = FetchArg::immediate(int64_t{i}).name("a" + std::to_string(i));
    if (i < 128) ok.arg(a);
    bad.arg(a);
  }
  {
    auto ev = create(ok);
    ASSERT_OK(ev);
    auto entry = listed(*ev);
    ASSERT_TRUE(entry);
    EXPECT_THAT(entry->args, SizeIs(128));
  }
  auto ev = DynamicEvent::create(fs(), bad);
  if (ev.ok()) {
    auto entry = listed(*ev);
    ASSERT_TRUE(entry);
    EXPECT_THAT(entry->args, SizeIs(128)) << "the kernel kept a 129th argument";
    EXPECT_THAT(entry->line, Not(HasSubstr("a128=")));
    return;
  }
  std::string file = fs().top().files().has("dynamic_events") ? "dynamic_events" : "kprobe_events";
  auto err = fs().top().files().try_write(file, bad.command(), true);
  ASSERT_OK(err);
  EXPECT_EQ(*err, E2BIG);
  auto log = fs().top().error_log();
  ASSERT_OK(log);
  if (log->empty()) return;  // refused without a word (6.12)
  const ErrorLogEntry& entry = log->back();
  EXPECT_THAT(ev.error().message, HasSubstr(entry.error));
  EXPECT_EQ(entry.location, "trace_kprobe");
  EXPECT_EQ(entry.error, "Too many arguments are specified");
  EXPECT_EQ(entry.command, bad.command());
  EXPECT_EQ(entry.caret, bad.command().find(" a0=") + 1);
}

// Where return probes take entry arguments ($arg<N> in README's "kernel
// return probes support"), a kretprobe sees the path it was called with
// beside the fd it returned. The entry handler saves each argument once
// (trace_probe.c __store_entry_arg): $arg2 named twice is one slot read
// twice, $arg1 a second slot, AT_FDCWD (-100) a 32-bit negative in it,
// and $arg3 a third, after the second: each new slot follows the last
// one, so that a third argument cannot land on the second's.
TEST_F(Kprobe, KretprobeSeesTheEntryArgumentsToo) {
  TRACEBED_COVERS("ftracetest: kprobe/kretprobe_entry_arg.tc");
  TRACEBED_REQUIRE(features::kretprobe_argn);
  TRACEBED_REQUIRE(features::type_ustring);
  std::string name = unique("ret_args");
  auto ev = create_enabled(on_open_return(name)
                               .arg(FetchArg::arg(2).deref(0).name("path").type(FetchType::ustring()))
                               .arg(FetchArg::retval().name("ret").type(FetchType::s32()))
                               .arg(FetchArg::arg(2).deref(0).name("again").type(FetchType::ustring()))
                               .arg(FetchArg::arg(1).name("dfd").type(FetchType::s32()))
                               .arg(FetchArg::arg(3).name("third").type(FetchType::x64())));
  ASSERT_OK(ev);
  ProbeRun r = open(kPaths);
  using Seen = std::tuple<std::string, int64_t, std::string, int64_t>;
  std::vector<Seen> got, want;
  for (const DecodedEvent& e : decoded(*ev))
    got.emplace_back(str_field(e, "path"), int_field(e, "ret"), str_field(e, "again"), int_field(e, "dfd"));
  for (const auto& l : r.lines_of("open")) want.emplace_back(l.at(0), to_int(l.at(1)), l.at(0), -100);  // AT_FDCWD
  EXPECT_EQ(got, want);
}

// An argument's expression may be MAX_ARGSTR_LEN characters long
// (trace_probe.h: 63, 255 since the typecasts), not one more
// (traceprobe_parse_probe_arg_body): a dereference whose offset is padded
// with zeros to exactly that length is taken, and one more zero is
// refused with "Argument expression is too long" and E2BIG.
TEST_F(Kprobe, ArgumentExpressionMayBeAsLongAsTheLimitNotLonger) {
  TRACEBED_REQUIRE(features::error_log);
  const size_t max = features().has(features::probe_typecast) ? 255 : 63;
  auto body = [](size_t len) { return "+" + std::string(len - 8, '0') + "(@1234)"; };
  ASSERT_EQ(body(max).size(), max);
  const std::string name = unique("longarg");
  auto ok = create(DynEventDef{DynEventKind::kprobe, "kprobes", name, "p:kprobes/" + name + " vfs_read a=" + body(max)});
  ASSERT_OK(ok);  // an expression of exactly the limit
  const std::string too = unique("toolong");
  const std::string line = "p:kprobes/" + too + " vfs_read a=" + body(max + 1);
  std::string file = fs().top().files().has("dynamic_events") ? "dynamic_events" : "kprobe_events";
  ASSERT_OK(fs().top().clear_error_log());
  auto err = fs().top().files().try_write(file, line, true);
  ASSERT_OK(err);
  // 6.1 answers every refused kprobe with EINVAL.
  if (features().release_version() < std::pair{6, 12}) EXPECT_THAT(*err, AnyOf(E2BIG, EINVAL));
  else EXPECT_EQ(*err, E2BIG);
  auto log = fs().top().error_log();
  ASSERT_OK(log);
  ASSERT_THAT(*log, SizeIs(1));
  EXPECT_EQ(log->back().error, "Argument expression is too long");
  EXPECT_EQ(log->back().caret, line.find("a=") + 2);
}

// One name, one probe: the exact same definition twice is refused, and so
// is a return probe under an entry probe's name.
TEST_F(Kprobe, DuplicateEventNamesAreRefused) {
  TRACEBED_REQUIRE(features::error_log);
  std::string name = unique("dup");
  KprobeDef k = on_open(name).arg(FetchArg::arg(1).name("dfd"));
  auto ev = create(k);
  ASSERT_OK(ev);
  auto same = ExpectRefused(k, StrEq("There is already the exact same probe event"), 0, EEXIST);
  ASSERT_TRUE(same);
  EXPECT_EQ(same->location, "trace_kprobe");

  KprobeDef ret = on_open_return(name).arg(FetchArg::retval().name("dfd"));
  ExpectRefused(ret, StrEq("Probe type is different from existing probe"), 0, EEXIST);
  auto entry = listed(*ev);
  ASSERT_TRUE(entry);
  EXPECT_EQ(entry->line, "p:" + ev->group() + "/" + name + " " + open_function() + " dfd=$arg1");
}

}  // namespace
}  // namespace tracebed::suites
