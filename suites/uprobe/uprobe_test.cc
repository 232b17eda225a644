// ftracetest's uprobe cases in spirit: uprobes and uretprobes on the probe
// target's functions, at the file offsets its ELF symbol table gives on the
// host, their events decoded from a fresh instance and compared with what
// the program printed it did.
//
// Arguments come from registers (the x86-64 psABI: %di, %si, %dx, %cx, %r8
// carry the first five integer arguments, %ax the return value): uprobes
// have no $argN (Documentation/trace/uprobetracer.rst lists none).
#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <fmt/format.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "framework/tracefs/dynevent.h"
#include "framework/tracefs/elf_symbols.h"
#include "framework/tracefs/tracefs_text.h"
#include "framework/testing/edge_strings.h"
#include "framework/testing/tracefs_fixture.h"

namespace tracebed::suites {
namespace {

// include/linux/sched.h TASK_COMM_LEN is 16: the name keeps 15 characters.
constexpr std::string_view kTargetComm = "tracebed-probe-";

// "add A B -> SUM": {A, B, SUM}.
struct AddCall {
  int64_t a, b, sum;
  bool operator==(const AddCall&) const = default;
};
void PrintTo(const AddCall& c, std::ostream* os) { *os << "add(" << c.a << ", " << c.b << ") -> " << c.sum; }

std::vector<AddCall> add_calls(const ProbeRun& r) {
  std::vector<AddCall> out;
  for (const auto& l : r.lines_of("add"))
    out.push_back({std::stoll(l.at(0)), std::stoll(l.at(1)), std::stoll(l.at(3))});
  return out;
}

std::vector<int64_t> sums(const ProbeRun& r) {
  std::vector<int64_t> out;
  for (const AddCall& c : add_calls(r)) out.push_back(c.sum);
  return out;
}

class Uprobe : public TracefsTest {
 public:
  Uprobe() : TracefsTest({features::uprobes}) {}

 protected:
  // A function of the probe target, from the host copy of the binary the
  // guest image carries.
  static tracefs::ElfSymbol function(std::string_view name) {
    auto sym = tracefs::find_elf_function(vm::probe_target_path().string(), name);
    EXPECT_OK(sym);
    return sym.ok() ? *sym : tracefs::ElfSymbol{};
  }

  static UprobeDef at(std::string_view event, std::string_view fn) {
    return UprobeDef::at(event, kProbeTarget, function(fn).file_offset);
  }
  static UprobeDef on_return(std::string_view event, std::string_view fn) {
    return UprobeDef::on_return(event, kProbeTarget, function(fn).file_offset);
  }

  ProbeRun target(std::vector<std::string> args) { return run_target_only(std::move(args)); }
};

// The entry probe reads both arguments from %di and %si, once per call,
// in call order.
TEST_F(Uprobe, AddArgumentsComeFromRegisters) {
  TRACEBED_COVERS("ftracetest: dynevent/add_remove_uprobe.tc");
  auto ev = create_enabled(at(unique("add"), "tracebed_target_add")
                               .arg(FetchArg::reg("di").name("a").type(FetchType::s64()))
                               .arg(FetchArg::reg("si").name("b").type(FetchType::s64())));
  ASSERT_OK(ev);
  ProbeRun r = target({"add", "-3", "7", "5"});
  std::vector<::testing::Matcher<const DecodedEvent&>> calls;
  for (const AddCall& c : add_calls(r)) calls.push_back(AllOf(FromPid(r.pid), FieldEq("a", c.a), FieldEq("b", c.b)));
  ASSERT_THAT(calls, SizeIs(5));
  EXPECT_THAT(decoded(*ev), ElementsAreArray(calls));
}

// A uretprobe sees the sum in %ax, and $retval is the same value, for 100
// sums at the bottom of a long's range: -2^62 + i plus -2^62 is LLONG_MIN
// + i (no overflow), whose low 32 bits, read as s32, are i.
TEST_F(Uprobe, UretprobeSeesTheReturnValue) {
  auto ev = create_enabled(on_return(unique("add_ret"), "tracebed_target_add")
                               .arg(FetchArg::reg("ax").name("ax").type(FetchType::s64()))
                               .arg(FetchArg::retval().name("ret").type(FetchType::s64()))
                               .arg(FetchArg::retval().name("low").type(FetchType::s32())));
  ASSERT_OK(ev);
  ProbeRun r = target({"add", "-4611686018427387904", "-4611686018427387904", "100"});
  std::vector<int64_t> want = sums(r);
  ASSERT_THAT(want, SizeIs(100));
  EXPECT_EQ(want.front(), std::numeric_limits<int64_t>::min());
  std::vector<int64_t> low;
  for (int64_t v : want) low.push_back(static_cast<int32_t>(static_cast<uint32_t>(static_cast<uint64_t>(v))));
  std::vector<DecodedEvent> events = decoded(*ev);
  EXPECT_THAT(events, Each(FromPid(r.pid)));
  EXPECT_THAT(int_fields(events, "ax"), ElementsAreArray(want));
  EXPECT_THAT(int_fields(events, "ret"), ElementsAreArray(want));
  EXPECT_THAT(int_fields(events, "low"), ElementsAreArray(low));
}

// "p:EVENT PATH:OFFSET%return" is a return probe: listed as r and seeing
// the return values.
TEST_F(Uprobe, PercentReturnMakesAReturnProbe) {
  TRACEBED_REQUIRE(features::uprobe_percent_return);
  auto ev = create_enabled(on_return(unique("pct_ret"), "tracebed_target_add")
                               .percent_return()
                               .arg(FetchArg::retval().name("ret").type(FetchType::s64())));
  ASSERT_OK(ev);
  EXPECT_THAT(ev->def().command, HasSubstr("%return"));
  auto entry = listed(*ev);
  ASSERT_TRUE(entry);
  EXPECT_EQ(entry->kind, DynEventKind::uretprobe) << entry->line;
  ProbeRun r = target({"add", "1", "1", "3"});
  EXPECT_THAT(int_fields(decoded(*ev), "ret"), ElementsAreArray(sums(r)));
}

// Entry and return probes fire exactly once per call each, entry first,
// for 300 calls in one run: one call lost or doubled in a hundred shows.
TEST_F(Uprobe, EventsCountExactlyTheCalls) {
  auto entry = create_enabled(
      at(unique("cnt_in"), "tracebed_target_add").arg(FetchArg::reg("di").name("a").type(FetchType::s64())));
  auto exit = create_enabled(
      on_return(unique("cnt_out"), "tracebed_target_add").arg(FetchArg::reg("ax").name("ret").type(FetchType::s64())));
  ASSERT_OK(entry);
  ASSERT_OK(exit);
  ProbeRun r = target({"add", "100", "5", "300"});
  size_t calls = add_calls(r).size();
  ASSERT_EQ(calls, 300u);
  std::vector<DecodedEvent> all = decoded({*entry, *exit});
  ASSERT_THAT(all, SizeIs(2 * calls));
  for (size_t i = 0; i < all.size(); i += 2) {
    SCOPED_TRACE(i / 2);
    EXPECT_THAT(all[i], IsEvent(entry->name()));
    EXPECT_THAT(all[i + 1], IsEvent(exit->name()));
    EXPECT_EQ(int_field(all[i + 1], "ret"), int_field(all[i], "a") + 5);
  }
}

// Five arguments of mixed widths: each register cut to its C type, and
// the string read from user memory through %r8.
TEST_F(Uprobe, MixedWidthArgumentsAndAUserString) {
  auto ev = create_enabled(at(unique("mix"), "tracebed_target_mix")
                               .arg(FetchArg::reg("di").name("i8").type(FetchType::s8()))
                               .arg(FetchArg::reg("di").name("u8").type(FetchType::u8()))
                               .arg(FetchArg::reg("si").name("u16").type(FetchType::u16()))
                               .arg(FetchArg::reg("si").name("x16").type(FetchType::x16()))
                               .arg(FetchArg::reg("dx").name("s32").type(FetchType::s32()))
                               .arg(FetchArg::reg("cx").name("u64").type(FetchType::u64()))
                               .arg(FetchArg::reg("r8").deref(0).name("str").type(FetchType::string()))
                               .arg(FetchArg::reg("r8").deref(3).name("tail").type(FetchType::string())));
  ASSERT_OK(ev);
  ProbeRun r = target({"mix", "-5", "65000", "-123456", "18446744073709551000", "tracebed"});
  auto lines = r.lines_of("mix");
  ASSERT_THAT(lines, SizeIs(1));
  const auto& l = lines[0];  // I8 U16 S32 U64 STR -> RET
  ASSERT_THAT(l, SizeIs(7));
  std::vector<DecodedEvent> events = decoded(*ev);
  ASSERT_THAT(events, SizeIs(1));
  const DecodedEvent& e = events[0];
  EXPECT_EQ(int_field(e, "i8"), std::stoll(l[0]));
  EXPECT_EQ(int_field(e, "u8"), static_cast<uint8_t>(std::stoll(l[0])));
  EXPECT_EQ(int_field(e, "u16"), std::stoll(l[1]));
  EXPECT_EQ(int_field(e, "x16"), std::stoll(l[1]));
  EXPECT_EQ(int_field(e, "s32"), std::stoll(l[2]));
  EXPECT_EQ(static_cast<uint64_t>(int_field(e, "u64")), std::stoull(l[3]));
  EXPECT_EQ(str_field(e, "str"), l[4]);
  EXPECT_EQ(str_field(e, "tail"), l[4].substr(3));
}

// The string through %r8, 110 calls of mix in one run: empty, 1 byte,
// around two words, around 64 and 256, 4000 bytes (near a page: the
// record is 16 bytes of head, a 4-byte data location and the string; the
// per-CPU copy uprobes make first holds a page, trace_uprobe.c), and 100
// more up to 299. Each recorded whole, once per call, in order; mix
// returns the length plus its first argument.
TEST_F(Uprobe, StringsOfEveryLengthAreRecordedWhole) {
  auto ev = create_enabled(
      at(unique("strs"), "tracebed_target_mix").arg(FetchArg::reg("r8").deref(0).name("str").type(FetchType::string())));
  ASSERT_OK(ev);
  const std::vector<std::string> strs = testlib::texts_of_every_length();
  std::vector<std::string> args = {"mix", "1", "2", "3", "4"};
  args.insert(args.end(), strs.begin(), strs.end());
  ProbeRun r = target(args);
  auto lines = r.lines_of("mix");
  ASSERT_THAT(lines, SizeIs(strs.size()));
  for (size_t i = 0; i < strs.size(); ++i) EXPECT_EQ(lines[i].back(), std::to_string(strs[i].size() + 1)) << i;
  std::vector<DecodedEvent> events = decoded(*ev);
  EXPECT_THAT(events, Each(FromPid(r.pid)));
  EXPECT_THAT(str_fields(events, "str"), ElementsAreArray(strs));
}

// The same strings as ustring, where the kernel has the type: every
// length, each recorded whole, once per call, in order.
TEST_F(Uprobe, UstringReadsTheSameUserString) {
  TRACEBED_REQUIRE(features::type_ustring);
  auto ev = create_enabled(at(unique("ustr"), "tracebed_target_mix")
                               .arg(FetchArg::reg("r8").deref(0).name("str").type(FetchType::ustring())));
  ASSERT_OK(ev);
  const std::vector<std::string> strs = testlib::texts_of_every_length();
  std::vector<std::string> args = {"mix", "1", "2", "3", "4"};
  args.insert(args.end(), strs.begin(), strs.end());
  ProbeRun r = target(args);
  ASSERT_THAT(r.lines_of("mix"), SizeIs(strs.size()));
  std::vector<DecodedEvent> events = decoded(*ev);
  EXPECT_THAT(events, Each(FromPid(r.pid)));
  EXPECT_THAT(str_fields(events, "str"), ElementsAreArray(strs));
}

// mix returns the string's length plus its first argument: the uretprobe
// sees what the program printed.
TEST_F(Uprobe, UretprobeOfMixSeesItsResult) {
  auto ev = create_enabled(
      on_return(unique("mix_ret"), "tracebed_target_mix").arg(FetchArg::reg("ax").name("ret").type(FetchType::s64())));
  ASSERT_OK(ev);
  ProbeRun r = target({"mix", "-20", "1", "2", "3", "abc"});
  auto lines = r.lines_of("mix");
  ASSERT_THAT(lines, SizeIs(1));
  EXPECT_THAT(decoded(*ev), ElementsAre(FieldEq("ret", std::stoll(lines[0].at(6)))));
}

// $comm is the program's name, on entry and on return.
TEST_F(Uprobe, CommIsTheProgramName) {
  TRACEBED_REQUIRE(features::fetcharg_comm);
  auto in = create_enabled(at(unique("comm_in"), "tracebed_target_add").arg(FetchArg::comm().name("who")));
  auto out = create_enabled(on_return(unique("comm_out"), "tracebed_target_add").arg(FetchArg::comm().name("who")));
  ASSERT_OK(in);
  ASSERT_OK(out);
  target({"add", "1", "2", "2"});
  std::vector<DecodedEvent> events = decoded({*in, *out});
  ASSERT_THAT(events, SizeIs(4));
  EXPECT_THAT(events, Each(FieldEq("who", kTargetComm)));
}

// At the entry, $stack0 is the return address: inside cmd_add, the only
// caller, by the ELF symbol table (the binary is static, not PIE, so its
// addresses are its symbols' values); __probe_ip is the function itself.
TEST_F(Uprobe, StackHoldsTheReturnAddressIntoTheCaller) {
  tracefs::ElfSymbol add = function("tracebed_target_add");
  tracefs::ElfSymbol caller = function("cmd_add");
  ASSERT_NE(caller.size, 0u);
  auto ev = create_enabled(
      at(unique("stack"), "tracebed_target_add").arg(FetchArg::stack(0).name("ret_addr").type(FetchType::x64())));
  ASSERT_OK(ev);
  target({"add", "1", "2", "3"});
  // User addresses are below 2^47: as int64 they keep their order.
  const auto in_caller =
      AllOf(Gt(static_cast<int64_t>(caller.value)), Lt(static_cast<int64_t>(caller.value + caller.size)));
  EXPECT_THAT(decoded(*ev),
              AllOf(SizeIs(3), Each(AllOf(FieldEq("__probe_ip", add.value), IntField("ret_addr", in_caller)))));
}

// An event filter on a register argument lets exactly one call in; a
// range on a signed 64-bit argument lets in exactly the calls inside it,
// over 300 calls from -150 to 149, at and across both bounds.
TEST_F(Uprobe, FilterOnAnArgumentMatchesOneCall) {
  auto ev = create(at(unique("filt"), "tracebed_target_add")
                       .arg(FetchArg::reg("di").name("a").type(FetchType::s64()))
                       .arg(FetchArg::reg("si").name("b").type(FetchType::s64())));
  ASSERT_OK(ev);
  ASSERT_OK(ev->event(inst()).set_filter("a == 12"));
  ASSERT_OK(ev->enable(inst()));
  ProbeRun r = target({"add", "10", "9", "5"});
  EXPECT_THAT(decoded(*ev), ElementsAre(AllOf(FieldEq("a", 12), FieldEq("b", 9))));
  EXPECT_THAT(add_calls(r), ::testing::Contains(AddCall{12, 9, 21}));

  ASSERT_OK(ev->disable(inst()));
  ASSERT_OK(ev->event(inst()).set_filter("a >= -2 && a < 100"));
  ASSERT_OK(inst().clear_trace());
  ASSERT_OK(inst().set_tracing_on(true));  // decoded() stopped it
  ASSERT_OK(ev->enable(inst()));
  ProbeRun range = target({"add", "-150", "4", "300"});
  std::vector<int64_t> inside;
  for (const AddCall& c : add_calls(range))
    if (c.a >= -2 && c.a < 100) inside.push_back(c.a);
  ASSERT_THAT(inside, SizeIs(102));
  EXPECT_THAT(int_fields(decoded(*ev), "a"), ElementsAreArray(inside));
}

// perf counts a uprobe event bound to one task (perf_event_open with a
// pid, as `perf stat -e` opens it): the event's mm filter lets exactly
// that task's calls in. Twice in a row, so the filter's open and close
// leave it usable for the next task; the trace buffer stays empty, as
// perf alone uses the event.
TEST_F(Uprobe, PerfCountsATaskBoundUprobeOncePerCall) {
  // perf_event_open is ENOSYS without CONFIG_PERF_EVENTS.
  if (!fs().ops().exists("/proc/sys/kernel/perf_event_paranoid"))
    GTEST_SKIP() << "needs perf events: no /proc/sys/kernel/perf_event_paranoid (CONFIG_PERF_EVENTS)";
  auto ev = create(at(unique("perf"), "tracebed_target_add").arg(FetchArg::reg("di").name("a")));
  ASSERT_OK(ev);
  auto id = ev->event(inst()).id();
  ASSERT_OK(id);
  for (int run : {1, 2}) {
    const long calls = run == 1 ? 300 : 301;
    ProbeRun r = target({"perf-add", std::to_string(*id), "7", "8", std::to_string(calls)});
    ASSERT_THAT(r.lines_of("add"), SizeIs(calls)) << "run " << run;
    auto counted = r.lines_of("perf-add");
    ASSERT_THAT(counted, SizeIs(1)) << "run " << run;
    EXPECT_EQ(counted[0].at(1), std::to_string(calls)) << "run " << run << ": perf's count (or -errno)";
  }
  EXPECT_THAT(decoded(*ev), IsEmpty()) << "the event was never enabled in the instance";
}

// Two uprobes at one offset each see every call.
TEST_F(Uprobe, TwoProbesAtOneOffsetBothFire) {
  auto a = create_enabled(
      at(unique("two_a"), "tracebed_target_add").arg(FetchArg::reg("di").name("a").type(FetchType::s64())));
  auto b = create_enabled(
      at(unique("two_b"), "tracebed_target_add").arg(FetchArg::reg("si").name("b").type(FetchType::s64())));
  ASSERT_OK(a);
  ASSERT_OK(b);
  ProbeRun r = target({"add", "3", "4", "6"});
  std::vector<DecodedEvent> all = decoded({*a, *b});
  std::vector<int64_t> want_a, want_b;
  for (const AddCall& c : add_calls(r)) {
    want_a.push_back(c.a);
    want_b.push_back(c.b);
  }
  EXPECT_THAT(int_fields(named(all, a->name()), "a"), ElementsAreArray(want_a));
  EXPECT_THAT(int_fields(named(all, b->name()), "b"), ElementsAreArray(want_b));
}

// Disabled, the probe records nothing; enabled again, it records again.
TEST_F(Uprobe, DisabledProbeRecordsNothing) {
  auto ev = create_enabled(
      at(unique("onoff"), "tracebed_target_add").arg(FetchArg::reg("di").name("a").type(FetchType::s64())));
  ASSERT_OK(ev);
  target({"add", "1", "0"});
  ASSERT_OK(ev->disable(inst()));
  target({"add", "2", "0"});
  ASSERT_OK(ev->enable(inst()));
  target({"add", "3", "0"});
  EXPECT_THAT(int_fields(decoded(*ev), "a"), ElementsAre(1, 3));
}

// An enabled uprobe is in use: removing it fails with EBUSY; disabled, it
// goes from the list and from events/.
TEST_F(Uprobe, EnabledProbeCannotBeRemoved) {
  auto ev = create_enabled(at(unique("busy"), "tracebed_target_add").arg(FetchArg::reg("di").name("a")));
  ASSERT_OK(ev);
  ExpectRemovedOnlyOnceDisabled(*ev);
}

// The uprobe_events file, as ftracetest's uprobe cases and perf probe use
// it (trace_uprobe.c create_or_delete_trace_uprobe, probes_seq_show): a
// probe written there is listed as the kernel spells it (the offset as 16
// hex digits), the `trace` text of its hits (print_uprobe_event: "NAME:
// (0xADDR) a=VALUE") has one line per call with the address and argument
// decoded from the same records, removing it while enabled is refused
// (EBUSY: trace_uprobe_is_busy), and disabled it leaves the list.
TEST_F(Uprobe, UprobeEventsFileListsPrintsAndRemovesAProbe) {
  const std::string name = unique("legacy");
  const uint64_t offset = function("tracebed_target_add").file_offset;
  const tracefs::Instance top = fs().top();
  ASSERT_OK(top.files().append("uprobe_events", fmt::format("p:uprobes/{} {}:0x{:x} a=%di:s64", name, kProbeTarget,
                                                            offset)));
  auto listed = top.files().read("uprobe_events");
  ASSERT_OK(listed);
  EXPECT_THAT(tracefs::split_lines(*listed),
              Contains(fmt::format("p:uprobes/{} {}:0x{:016x} a=%di:s64", name, kProbeTarget, offset)))
      << *listed;
  Event ev = inst().event("uprobes", name);
  ASSERT_OK(ev.enable());
  ProbeRun r = target({"add", "-3", "7", "5"});
  ASSERT_OK(inst().set_tracing_on(false));
  std::vector<std::string> printed;
  for (const std::string& line : trace_lines(inst()))
    if (auto at = line.find(" " + name + ": "); at != std::string::npos) printed.push_back(line.substr(at + 1));
  std::vector<std::string> want;
  for (const DecodedEvent& e : decoded({"uprobes", name}))
    if (e.pid == r.pid)
      want.push_back(fmt::format("{}: (0x{:x}) a={}", name, static_cast<uint64_t>(int_field(e, "__probe_ip")),
                                 int_field(e, "a")));
  const std::vector<AddCall> calls = add_calls(r);
  ASSERT_THAT(calls, SizeIs(5));
  ASSERT_THAT(want, SizeIs(calls.size()));
  for (size_t i = 0; i < calls.size(); ++i) EXPECT_THAT(want[i], EndsWith(fmt::format(" a={}", calls[i].a)));
  EXPECT_EQ(printed, want);
  auto busy = top.files().try_write("uprobe_events", "-:uprobes/" + name, /*append=*/true);
  ASSERT_OK(busy);
  EXPECT_EQ(*busy, EBUSY);
  ASSERT_OK(ev.disable());
  ASSERT_OK(top.files().append("uprobe_events", "-:uprobes/" + name));
  auto after = top.files().read("uprobe_events");
  ASSERT_OK(after);
  EXPECT_THAT(*after, Not(HasSubstr(name)));
}

// uprobe_profile (trace_uprobe.c probes_profile_seq_show): a line per
// probe, "FILE NAME HITS", where HITS counts the probe's hits: the five
// calls of one run, then ten after a second run of five more.
TEST_F(Uprobe, ProfileCountsEveryHit) {
  const std::string name = unique("profiled");
  auto ev = create_enabled(at(name, "tracebed_target_add").arg(FetchArg::reg("di").name("a").type(FetchType::s64())));
  ASSERT_OK(ev);
  auto hits = [&]() -> int64_t {
    auto text = fs().top().files().read("uprobe_profile");
    EXPECT_OK(text);
    if (!text) return -1;
    for (std::string_view line : tracefs::split_lines(*text)) {
      auto w = tracefs::split_words(line);
      if (w.size() == 3 && w[1] == name) {
        EXPECT_EQ(w[0], kProbeTarget) << line;
        return std::stoll(std::string(w[2]));
      }
    }
    ADD_FAILURE() << "no line of " << name << " in uprobe_profile:\n" << *text;
    return -1;
  };
  EXPECT_EQ(hits(), 0);
  ProbeRun first = target({"add", "1", "2", "5"});
  ASSERT_THAT(add_calls(first), SizeIs(5));
  EXPECT_EQ(hits(), 5);
  target({"add", "3", "4", "5"});
  EXPECT_EQ(hits(), 10);
  EXPECT_THAT(decoded(*ev), SizeIs(10)) << "the records agree with the count";
}

// A file that does not exist: the kernel points at the path.
TEST_F(Uprobe, MissingFileIsRefused) {
  TRACEBED_REQUIRE(features::error_log);
  UprobeDef u = UprobeDef::at(unique("nofile"), "/nonexistent/tracebed-uprobe", 0x1000);
  auto entry = ExpectRefused(u, StrEq("Failed to find the given file"), u.command().find("/nonexistent"));
  ASSERT_TRUE(entry);
  EXPECT_EQ(entry->location, "trace_uprobe");
}

// $retval belongs to return probes (uprobetracer.rst): on an entry probe
// the kernel refuses it and points at it.
TEST_F(Uprobe, RetvalOnAnEntryProbeIsRefused) {
  TRACEBED_REQUIRE(features::error_log);
  UprobeDef u = at(unique("entry_ret"), "tracebed_target_add").arg(FetchArg::retval().name("r"));
  auto entry = ExpectRefused(u, StrEq("$retval is not available on probe"), u.command().find("$retval"));
  ASSERT_TRUE(entry);
  EXPECT_EQ(entry->location, "trace_uprobe");
}

}  // namespace
}  // namespace tracebed::suites
