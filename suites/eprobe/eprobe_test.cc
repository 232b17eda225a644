// ftracetest dynevent/ eprobe cases in spirit: event probes on existing
// events, created through dynamic_events, and every event they record
// checked against what the probe target did or against the attached
// event itself, decoded from the same pages.
//
// An eprobe records from inside its attached event's trigger
// (kernel/trace/trace_eprobe.c eprobe_trigger_func), on the same CPU and
// while the attached record is still open: with both enabled, each eprobe
// record comes right after its attached event's record on that CPU.
#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <fmt/format.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "framework/decode/event_format.h"
#include "framework/tracefs/dynevent.h"
#include "framework/tracefs/hist_file.h"
#include "framework/tracefs/synth.h"
#include "framework/testing/edge_strings.h"
#include "framework/testing/tracefs_fixture.h"

namespace tracebed::suites {
namespace {

using decode::Field;
using decode::kFieldSigned;
using decode::parse_event_format;

const tracefs::Feature openat_event = tracefs::Feature::event("syscalls", "sys_enter_openat");
const tracefs::Feature kOpenatExit = tracefs::Feature::event("syscalls", "sys_exit_openat");
// README's eprobe line ends in "[if <filter>]" once eprobes take a filter.
const tracefs::Feature eprobe_filter =
    tracefs::Feature::readme("eprobe filters", "<attached-group>.<attached-event> [<args>] [if <filter>]");

// Typecasts of an eprobe's field ("(struct)field->member", BTF):
// trace_probe.c handle_typecast is in 7.2, whose README does not say so;
// 7.3's names "[(structname". A release, as the first kernel's tracefs
// shows nothing of them but their error messages.
const tracefs::Feature eprobe_typecasts =
    tracefs::Feature::since_release("eprobe typecasts (7.2's README does not list them)", 7, 2);
const tracefs::Feature hrtimer_start_event = tracefs::Feature::event("timer", "hrtimer_start");

class Eprobe : public TracefsTest {
 public:
  Eprobe() : TracefsTest({features::dynamic_events, features::eprobes, features::sched_events}) {}

 protected:
  tracefs::Event sw() { return inst().event("sched", "sched_switch"); }

  // The eprobe on sched_switch most tests use: fields as four types.
  EprobeDef switch_probe(const std::string& name) {
    return EprobeDef::on(name, "sched", "sched_switch")
        .arg(FetchArg::field("prev_pid").name("prev").type(FetchType::s32()))
        .arg(FetchArg::field("next_pid").name("next").type(FetchType::u32()))
        .arg(FetchArg::field("next_pid").name("nexthex").type(FetchType::x32()))
        .arg(FetchArg::field("prev_comm").name("comm").type(FetchType::string()));
  }
};

// The talk's eprobe, written as the talk writes it: the user string behind
// sys_enter_openat's filename pointer, for exactly the files the probe
// target opened, in order, missing ones too.
TEST_F(Eprobe, TalkOpenDecodesTheFilesTheTargetOpened) {
  TRACEBED_REQUIRE(openat_event);
  TRACEBED_REQUIRE(features::type_ustring);
  std::string name = unique("open");
  DynEventDef def{DynEventKind::eprobe, "eprobes", name,
                  "e:" + name + " syscalls/sys_enter_openat file=+0($filename):ustring"};
  auto ep = create_enabled(def);
  ASSERT_OK(ep);
  ProbeRun probe = run_target({"open", "/etc/tracebed/release", "/nonexistent", "/proc/self/stat"});
  ASSERT_OK(inst().set_tracing_on(false));

  std::vector<std::string> opened;
  for (const auto& l : probe.lines_of("open")) opened.push_back(l.at(0));
  ASSERT_THAT(opened, SizeIs(3));
  EXPECT_THAT(str_fields(of_pid(decoded(*ep), probe.pid), "file"), ElementsAreArray(opened));
}

// The talk's eprobe on 110 openat(2) calls in one run, the filename empty,
// 1 byte, around two words, around 64 and 256, 4000 bytes (near a page:
// an eprobe record is 8 bytes of common fields, the 4-byte data location
// and the string), and 100 more up to 299: each recorded whole, in order,
// once per openat the target made.
TEST_F(Eprobe, UstringOfEveryLengthIsRecordedWhole) {
  TRACEBED_REQUIRE(openat_event);
  TRACEBED_REQUIRE(features::type_ustring);
  std::string name = unique("ustr");
  DynEventDef def{DynEventKind::eprobe, "eprobes", name,
                  "e:" + name + " syscalls/sys_enter_openat file=+0($filename):ustring"};
  auto ep = create_enabled(def);
  ASSERT_OK(ep);
  const std::vector<std::string> paths = testlib::texts_of_every_length();
  std::vector<std::string> args = {"open"};
  args.insert(args.end(), paths.begin(), paths.end());
  ProbeRun probe = run_target_only(args, {.start_tracing = true});
  EXPECT_THAT(probe.lines_of("open"), SizeIs(paths.size()));
  EXPECT_THAT(str_fields(of_pid(decoded(*ep), probe.pid), "file"), ElementsAreArray(paths));
}

// Fields of sched_switch fetched as s32, u32, x32 and string: each eprobe
// record equals the sched_switch record just before it on its CPU.
TEST_F(Eprobe, SchedSwitchFieldsEqualTheAttachedEvent) {
  std::string name = unique("sw");
  auto ep = create(switch_probe(name));
  ASSERT_OK(ep);
  ASSERT_OK(sw().enable());
  ASSERT_OK(ep->enable(inst()));
  // The window starts with both on: no sched_switch before the probe was.
  ASSERT_OK(inst().clear_trace());
  ProbeRun probe = run_target({"sleep", "2", "3"});
  ASSERT_OK(inst().set_tracing_on(false));

  std::vector<DecodedEvent> events = decoded({{"sched", "sched_switch"}, *ep}, Order::page);
  std::vector<Probed> probed = probed_from(events, "sched_switch", name);
  EXPECT_THAT(probed, Not(IsEmpty()));
  size_t of_target = 0;
  for (const auto& [src, e] : probed) {
    SCOPED_TRACE(::testing::PrintToString(*e));
    ASSERT_NE(src, nullptr) << "no sched_switch before the eprobe record on cpu " << e->cpu;
    EXPECT_THAT(*e, AllOf(FieldEq("prev", int_field(*src, "prev_pid")), FieldEq("next", int_field(*src, "next_pid")),
                          FieldEq("nexthex", int_field(*src, "next_pid")),
                          FieldEq("comm", str_field(*src, "prev_comm"))));
    of_target += int_field(*e, "prev") == probe.pid;
  }
  // The target slept three times: it was switched out at least that often.
  EXPECT_GE(of_target, 3u);
  EXPECT_THAT(unprobed_sources(events, "sched_switch", name), IsEmpty()) << "sched_switch records the eprobe missed";
}

// A typecast field: hrtimer_start's `hrtimer` pointer read as a struct
// hrtimer through BTF, its `function` and `_softexpires` members fetched,
// equal the event's own `function` and `softexpires` fields on every
// record. The target's 50 nanosleeps each start one timer.
TEST_F(Eprobe, TypecastReadsTheMembersBehindAFieldsPointer) {
  TRACEBED_REQUIRE(eprobe_typecasts);
  // handle_typecast is CONFIG_PROBE_EVENTS_BTF_ARGS's, as "<argname>" is.
  TRACEBED_REQUIRE(features::btf_args);
  TRACEBED_REQUIRE(hrtimer_start_event);
  std::string name = unique("cast");
  DynEventDef def{DynEventKind::eprobe, "eprobes", name,
                  "e:" + name + " timer/hrtimer_start fn=(hrtimer)hrtimer->function:x64" +
                      " soft=(hrtimer)hrtimer->_softexpires:s64"};
  auto ep = create(def);
  ASSERT_OK(ep);
  // Both on before the window opens: no hrtimer_start before the probe was.
  ASSERT_OK(inst().set_tracing_on(false));
  ASSERT_OK(inst().event("timer", "hrtimer_start").enable());
  ASSERT_OK(ep->enable(inst()));
  ASSERT_OK(inst().set_tracing_on(true));
  ProbeRun probe = run_target({"sleep", "1", "50"});
  ASSERT_OK(inst().set_tracing_on(false));

  std::vector<DecodedEvent> events = decoded({{"timer", "hrtimer_start"}, *ep}, Order::page);
  const std::vector<Probed> probed = probed_from(events, "hrtimer_start", name);
  size_t of_target = 0;
  for (const auto& [src, e] : probed) {
    SCOPED_TRACE(::testing::PrintToString(*e));
    ASSERT_NE(src, nullptr) << "no hrtimer_start before the eprobe record on cpu " << e->cpu;
    EXPECT_EQ(static_cast<uint64_t>(int_field(*e, "fn")), static_cast<uint64_t>(int_field(*src, "function")));
    EXPECT_EQ(int_field(*e, "soft"), int_field(*src, "softexpires"));
    of_target += e->pid == probe.pid;
  }
  EXPECT_GE(of_target, 50u);
  // Counted for the target alone: another task's timer can start between
  // the two enables, or between the source's record and the eprobe's as
  // tracing stops, and the target's all start well inside.
  const auto starts = std::count_if(events.begin(), events.end(), [&](const DecodedEvent& e) {
    return e.name == "hrtimer_start" && e.pid == probe.pid;
  });
  EXPECT_EQ(static_cast<size_t>(starts), of_target) << "an eprobe record for each of the target's hrtimer_starts";
}

// The types show in the eprobe's format (sizes, signedness) and x32 prints
// as hex in `trace` (kernel/trace/trace_probe.c print_type_x32: "0x%x").
TEST_F(Eprobe, TypesShapeTheFormatAndTheText) {
  std::string name = unique("types");
  auto ep = create(switch_probe(name));
  ASSERT_OK(ep);
  auto text = ep->event(inst()).format();
  ASSERT_OK(text);
  auto format = parse_event_format(*text, "eprobes", "events/eprobes/" + name + "/format");
  ASSERT_OK(format);
  struct Want {
    const char* field;
    uint32_t size;
    bool is_signed;
  };
  for (const Want& w : {Want{"prev", 4, true}, Want{"next", 4, false}, Want{"nexthex", 4, false}}) {
    const Field* f = (*format)->field(w.field);
    ASSERT_NE(f, nullptr) << w.field << " missing in\n" << *text;
    EXPECT_EQ(f->size, w.size) << w.field;
    EXPECT_EQ(f->has(kFieldSigned), w.is_signed) << w.field;
  }
  EXPECT_THAT(*text, HasSubstr("__data_loc char[] comm;"));

  ASSERT_OK(ep->enable(inst()));
  ProbeRun probe = run_target({"sleep", "2", "2"});
  ASSERT_OK(inst().set_tracing_on(false));
  // Each line's nexthex is next in hex, and the target's switches away
  // while sleeping say its pid and comm (cut to 15 characters,
  // TASK_COMM_LEN - 1) as a quoted string.
  int lines = 0, of_target = 0;
  for (const std::string& line : trace_lines(inst())) {
    if (line.find(name + ":") == std::string::npos) continue;
    ++lines;
    auto num = [&](const std::string& key) -> std::string {
      size_t at = line.find(" " + key + "=");
      if (at == std::string::npos) return "";
      size_t from = at + key.size() + 2;
      return line.substr(from, line.find(' ', from) - from);
    };
    std::string next = num("next"), hex = num("nexthex");
    ASSERT_FALSE(next.empty()) << line;
    ASSERT_TRUE(hex.starts_with("0x")) << line;
    EXPECT_EQ(std::stoul(hex, nullptr, 16), std::stoul(next)) << line;
    // Before its exec the target is the agent's child and has its name.
    if (num("prev") == std::to_string(probe.pid))
      of_target += line.find("comm=\"tracebed-probe-\"") != std::string::npos;
  }
  EXPECT_GT(lines, 0);
  EXPECT_GE(of_target, 2);
}

// Types across the sign: sys_exit_openat's ret (a long) fetched as s64,
// s32, u32 and x64 (trace_probe.c's fetch types cut and print it): the
// probe target's three opens return 3, -ENOENT and 3, and each record of
// the target is its open's result in every type, -2 as -2, -2,
// 4294967294 and 0xfffffffffffffffe.
TEST_F(Eprobe, TypesCutAndSignANegativeReturn) {
  TRACEBED_REQUIRE(kOpenatExit);
  std::string name = unique("neg");
  DynEventDef def{DynEventKind::eprobe, "eprobes", name,
                  "e:" + name + " syscalls/sys_exit_openat s=$ret:s64 s32=$ret:s32 u32=$ret:u32 x=$ret:x64"};
  auto ep = create(def);
  ASSERT_OK(ep);
  ASSERT_OK(ep->enable(inst()));
  ProbeRun probe = run_target({"open", "/etc/tracebed/release", "/nonexistent", "/proc/self/stat"});
  ASSERT_OK(inst().set_tracing_on(false));
  std::vector<int64_t> results;
  for (const auto& words : probe.lines_of("open")) results.push_back(std::stoll(words.at(1)));
  ASSERT_EQ(results, (std::vector<int64_t>{results[0], -ENOENT, results[2]}));
  // `trace` first: decoding consumes the pages. A line's task is
  // "comm-pid".
  std::vector<std::string> want_text, got_text;
  for (const std::string& line : trace_lines(inst()))
    if (line.find(name + ":") != std::string::npos && line.find("-" + std::to_string(probe.pid) + " ") != std::string::npos)
      got_text.push_back(line.substr(line.find(" s=") + 1));
  std::vector<DecodedEvent> records = of_pid(decoded(*ep), probe.pid);
  ASSERT_THAT(records, SizeIs(3));
  for (size_t i = 0; i < 3; ++i) {
    SCOPED_TRACE(::testing::PrintToString(records[i]));
    const int64_t r = results[i];
    EXPECT_EQ(int_field(records[i], "s"), r);
    EXPECT_EQ(int_field(records[i], "s32"), static_cast<int32_t>(r));
    EXPECT_EQ(static_cast<uint64_t>(int_field(records[i], "u32")), static_cast<uint32_t>(r));
    EXPECT_EQ(static_cast<uint64_t>(int_field(records[i], "x")), static_cast<uint64_t>(r));
    want_text.push_back(fmt::format("s={} s32={} u32={} x=0x{:x}", r, static_cast<int32_t>(r),
                                    static_cast<uint32_t>(r), static_cast<uint64_t>(r)));
  }
  EXPECT_THAT(got_text, ElementsAreArray(want_text));
}

// "if <filter>" on the attached event's fields: only the probe target's
// switches are recorded, as many as sched_switch recorded for it. (The
// kernel keeps the filter but dynamic_events does not show it: 6.12's
// eprobe_dyn_event_show prints the arguments only.)
TEST_F(Eprobe, FilterKeepsOnlyMatchingRecords) {
  TRACEBED_REQUIRE(eprobe_filter);
  std::string name = unique("filt");
  auto ep = create(switch_probe(name).filter("prev_comm == \"tracebed-probe-\""));
  ASSERT_OK(ep);
  ASSERT_OK(sw().enable());
  ASSERT_OK(ep->enable(inst()));
  ProbeRun probe = run_target({"sleep", "2", "3"});
  ASSERT_OK(inst().set_tracing_on(false));
  size_t switches_of_target = 0, probed = 0;
  for (const DecodedEvent& e : decoded({{"sched", "sched_switch"}, *ep}, Order::page)) {
    if (e.name == "sched_switch") switches_of_target += str_field(e, "prev_comm") == "tracebed-probe-";
    if (e.name != name) continue;
    ++probed;
    EXPECT_EQ(str_field(e, "comm"), "tracebed-probe-") << ::testing::PrintToString(e);
    EXPECT_EQ(int_field(e, "prev"), probe.pid) << ::testing::PrintToString(e);
  }
  EXPECT_GE(switches_of_target, 3u);
  EXPECT_EQ(probed, switches_of_target);
}

// A hist trigger on the eprobe event: the target's hitcount is the number
// of its decoded eprobe records (the target exits inside the window).
TEST_F(Eprobe, HistOnTheEprobeCountsItsRecords) {
  TRACEBED_REQUIRE(features::hist_triggers);
  std::string name = unique("hist");
  auto ep = create(switch_probe(name));
  ASSERT_OK(ep);
  tracefs::Event ev = ep->event(inst());
  tracefs::HistTrigger h;
  h.key("prev");
  ASSERT_OK(ev.add_trigger(h.trigger()));
  ASSERT_OK(ep->enable(inst()));
  ProbeRun probe = run_target({"sleep", "2", "4"});
  ASSERT_OK(inst().set_tracing_on(false));
  auto hist = tracefs::read_hist(ev);
  ASSERT_OK(hist);
  EXPECT_OK(ev.remove_trigger(h.trigger()));
  ASSERT_THAT(hist->sections, SizeIs(1));
  std::vector<int64_t> prevs = int_fields(decoded(*ep), "prev");
  uint64_t of_target = std::count(prevs.begin(), prevs.end(), probe.pid);
  EXPECT_GE(of_target, 4u);
  EXPECT_THAT(hist->sections[0].entries, Contains(AllOf(HistKeyEq("prev", probe.pid), HitCount(of_target))));
}

// dynamic_events lists it as written (group added); enabled it records,
// cannot be removed (EBUSY); disabled it records nothing; removed, it is
// gone from dynamic_events and events/.
TEST_F(Eprobe, EnableDisableAndRemoval) {
  TRACEBED_COVERS("ftracetest: dynevent/add_remove_eprobe.tc");
  std::string name = unique("life");
  auto ep = create(switch_probe(name));
  ASSERT_OK(ep);
  auto listed = tracefs::read_dynamic_events(fs());
  ASSERT_OK(listed);
  auto it = std::find_if(listed->begin(), listed->end(), [&](const auto& l) { return l.event == name; });
  ASSERT_NE(it, listed->end());
  EXPECT_EQ(it->kind, DynEventKind::eprobe);
  EXPECT_EQ(it->group, "eprobes");
  EXPECT_EQ(it->target, "sched.sched_switch");
  EXPECT_THAT(it->args, ElementsAreArray({"prev=$prev_pid:s32", "next=$next_pid:u32", "nexthex=$next_pid:x32",
                                          "comm=$prev_comm:string"}));
  EXPECT_TRUE(ep->event(inst()).exists());

  ASSERT_OK(ep->enable(inst()));
  auto busy = fs().top().files().try_write("dynamic_events", ep->def().remove_command(), true);
  ASSERT_OK(busy);
  EXPECT_EQ(*busy, EBUSY) << "removing an enabled eprobe";
  run_target({"sleep", "2", "1"});
  ASSERT_OK(ep->disable(inst()));
  auto enabled = ep->event(inst()).enabled();
  ASSERT_OK(enabled);
  EXPECT_FALSE(*enabled);
  EXPECT_THAT(decoded(*ep), Not(IsEmpty())) << "while enabled";
  ASSERT_OK(inst().set_tracing_on(true));  // decoded() stopped it

  run_target({"sleep", "2", "2"});
  EXPECT_THAT(decoded(*ep), IsEmpty()) << "while disabled";

  ASSERT_OK(ep->destroy());
  listed = tracefs::read_dynamic_events(fs());
  ASSERT_OK(listed);
  for (const auto& l : *listed) EXPECT_NE(l.event, name) << l.line;
  EXPECT_FALSE(fs().ops().exists(fs().root() + "/events/eprobes/" + name));
}

// An eprobe on a synthetic event (ftracetest's inter-event eprobe case):
// myopen, made by hist triggers from sys_enter/exit_openat, carries the
// fd; an eprobe on it fetches that field, for every open of the target.
TEST_F(Eprobe, OnASyntheticEvent) {
  TRACEBED_COVERS("ftracetest: trigger/inter-event/trigger-synthetic-eprobe.tc");
  TRACEBED_REQUIRE(features::synthetic_events);
  TRACEBED_REQUIRE(features::hist_triggers);
  TRACEBED_REQUIRE(features::hist_trace_action);
  TRACEBED_REQUIRE(openat_event);
  std::string synth_name = unique("myopen");
  auto synth = tracefs::Synth::create(fs().top(), tracefs::SynthDef(synth_name).field("long", "ret"));
  ASSERT_OK(synth);
  ASSERT_OK(synth->add_trigger(inst().event("syscalls", "sys_enter_openat"),
                               tracefs::HistTrigger().key("common_pid").var("ts0", "common_timestamp").trigger()));
  ASSERT_OK(synth->add_trigger(
      inst().event("syscalls", "sys_exit_openat"),
      tracefs::HistTrigger()
          .key("common_pid")
          .var("t", "common_timestamp-$ts0")
          .action(tracefs::HistAction::onmatch("syscalls", "sys_enter_openat").trace(synth_name, {"ret"}))
          .trigger()));
  // Declared after the Synth: removed first (it holds a trigger on it).
  std::string name = unique("onsynth");
  auto ep = create_enabled(
      EprobeDef::on(name, "synthetic", synth_name).arg(FetchArg::field("ret").name("fd").type(FetchType::s32())));
  ASSERT_OK(ep);
  ProbeRun probe = run_target({"open", "/etc/tracebed/release", "/nonexistent", "/proc/self/stat"});
  ASSERT_OK(inst().set_tracing_on(false));
  std::vector<int64_t> printed;
  for (const auto& l : probe.lines_of("open")) printed.push_back(std::stoll(l.at(1)));
  ASSERT_THAT(printed, SizeIs(3));
  EXPECT_THAT(int_fields(of_pid(decoded(*ep), probe.pid), "fd"), ElementsAreArray(printed));
}

// An attached event that does not exist is refused, in the kernel's words
// (kernel/trace/trace_probe.h ERRORS: BAD_ATTACH_EVENT).
TEST_F(Eprobe, UnknownAttachedEventIsExplained) {
  TRACEBED_REQUIRE(features::error_log);
  ExpectRefused(EprobeDef::on(unique("bad"), "sched", "no_such_event"), "Attached event does not exist");
}

// A field the attached event does not have is refused, the caret in the
// argument. The words differ: 6.1 says BAD_ATTACH_ARG (ENOENT) from the
// eprobe's own lookup, 6.12+ BAD_VAR (EINVAL) from the common fetcharg
// parser.
TEST_F(Eprobe, UnknownFieldIsExplained) {
  TRACEBED_REQUIRE(features::error_log);
  auto def = EprobeDef::on(unique("bad"), "sched", "sched_switch").arg(FetchArg::field("no_such_field").name("x"));
  auto entry = ExpectRefused(def, ::testing::AnyOf(HasSubstr("Attached event does not have this field"),
                                                   HasSubstr("Invalid $-variable specified")));
  ASSERT_TRUE(entry);
  EXPECT_GE(entry->caret, def.command().find("x=")) << entry->str();
}

}  // namespace
}  // namespace tracebed::suites
