// ftracetest dynevent/ cases that hold for every kind of dynamic event:
// the 128-argument limit (dynevent_limitations.tc), names already taken
// (test_duplicates.tc), and for fprobes and tprobes their lifecycle:
// repeated creation (add_remove_fprobe_repeat.tc), entry and exit on one
// function sharing one ftrace_ops (add_remove_multiple_fprobe.tc), and
// disable/re-enable (enable_disable_tprobe.tc). Where a probe can fire,
// its decoded records are checked too.
#include <cerrno>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "framework/testing/probe_target.h"
#include "framework/testing/raw_definition.h"
#include "framework/tracefs/elf_symbols.h"
#include "framework/testing/tracefs_fixture.h"
#include "framework/tracefs/tracefs_text.h"

namespace tracebed::suites {
namespace {

// include/linux/trace_probe.h (kernel/trace/trace_probe.h) MAX_TRACE_ARGS.
constexpr int kMaxArgs = 128;

struct Kind {
  const char* name;
  DynEventKind kind;
  const char* prefix;  // "p", "f", "t"
  const char* group;
  const char* place;
  Feature needs;
  bool fires;  // the guest hits it on its own (vfs_read, kfree)
};

void PrintTo(const Kind& k, std::ostream* os) { *os << k.name; }

const Kind kKinds[] = {
    {"kprobe", DynEventKind::kprobe, "p", "kprobes", "vfs_read", features::kprobes, true},
    {"fprobe", DynEventKind::fprobe, "f", "fprobes", "vfs_read", features::fprobes, true},
    {"tprobe", DynEventKind::tprobe, "t", "tracepoints", "kfree", features::tprobes, true},
    // The .tc's uprobe: offset 10 of the shell, never enabled here.
    {"uprobe", DynEventKind::uprobe, "p", "uprobes", "/bin/sh:10", features::uprobes, false},
};

class DynEventLimit : public TracefsTest, public ::testing::WithParamInterface<Kind> {
 protected:
  DynEventLimit() : TracefsTest({features::dynamic_events, features::fetcharg_immediate}) {}

  // "<p>:<group>/<event> <place> \1 \2 ... \n"
  static RawDefinition with_args(const Kind& k, const std::string& event, int n) {
    std::string text = std::string(k.prefix) + ":" + k.group + "/" + event + " " + k.place;
    for (int i = 1; i <= n; ++i) text += " \\" + std::to_string(i);
    return {k.kind, text, k.group, event};
  }
};

// 128 immediates are taken, listed as arg1=\1 ... and, where the probe
// fires, recorded with those values; a 129th is refused (E2BIG) and
// nothing is made, or on older kernels dropped.
TEST_P(DynEventLimit, TakesAtMost128Arguments) {
  TRACEBED_COVERS("ftracetest: dynevent/dynevent_limitations.tc");
  const Kind& k = GetParam();
  TRACEBED_REQUIRE(k.needs);
  RawDefinition ok = with_args(k, unique("args128"), kMaxArgs);
  auto ev = create(ok);
  ASSERT_OK(ev);
  auto entry = listed(*ev);
  ASSERT_TRUE(entry);
  ASSERT_THAT(entry->args, SizeIs(kMaxArgs));
  for (int i = 1; i <= kMaxArgs; ++i) EXPECT_EQ(entry->args[i - 1], "arg" + std::to_string(i) + "=\\" + std::to_string(i));
  if (k.fires) {
    // A record of 128 arguments is over 1 KiB, and a tprobe on kfree fires
    // at every free of the guest: room for all of one command's.
    ASSERT_OK(inst().set_buffer_size_kb(8192));
    ASSERT_OK(ev->enable(inst()));
    sh("cat /etc/tracebed/release > /dev/null");
    std::vector<DecodedEvent> events = decoded(*ev);
    ASSERT_THAT(events, Not(IsEmpty()));
    for (int i = 1; i <= kMaxArgs; ++i) EXPECT_EQ(int_field(events[0], "arg" + std::to_string(i)), i);
  }

  RawDefinition bad = with_args(k, unique("args129"), kMaxArgs + 1);
  auto refused = create(bad);
  if (refused.ok()) {
    // 5.10 takes the line and keeps the first 128 (trace_kprobe.c then
    // parsed min(argc, MAX_TRACE_ARGS)): never a 129th.
    auto kept = listed(*refused);
    ASSERT_TRUE(kept);
    EXPECT_THAT(kept->args, SizeIs(kMaxArgs)) << kept->line;
    return;
  }
  auto err = fs().top().files().try_write("dynamic_events", bad.text, true);
  ASSERT_OK(err);
  EXPECT_EQ(*err, E2BIG);
  EXPECT_FALSE(fs().ops().exists(fs().root() + "/events/" + k.group + "/" + bad.event));
  // Where the kernel says why (not 6.12's kprobes), it points at the
  // first argument.
  if (!features().has(features::error_log)) return;
  auto log = fs().top().error_log();
  ASSERT_OK(log);
  if (log->empty()) return;
  const tracefs::ErrorLogEntry& why = log->back();
  EXPECT_EQ(why.error, "Too many arguments are specified");
  EXPECT_EQ(why.command, bad.text);
  EXPECT_EQ(why.caret, bad.text.find(" \\1") + 1) << "not at the first argument";
}

INSTANTIATE_TEST_SUITE_P(DynEvent, DynEventLimit, ::testing::ValuesIn(kKinds),
                         [](const ::testing::TestParamInfo<Kind>& p) { return std::string(p.param.name); });

const Feature kOpenatEvent = Feature::event("syscalls", "sys_enter_openat");

TRACEBED_SUITE_REQUIRES(DynEventNames, features::dynamic_events, features::eprobes, features::error_log,
                        kOpenatEvent);

// A group/event name is one event's: the same eprobe twice, an eprobe or
// kprobe on a name another kind or a static event holds, are refused with
// EEXIST, and the list keeps one line per name.
TEST_F(DynEventNames, TakenNamesAreRefusedForEveryKind) {
  TRACEBED_COVERS("ftracetest: dynevent/test_duplicates.tc");
  std::string egroup = unique("egroup"), kgroup = unique("kgroup");
  auto eprobe = [](std::string name) {
    return RawDefinition{DynEventKind::eprobe, "e:" + name + " syscalls/sys_enter_openat file=+0($filename):ustring"};
  };
  auto kprobe = [](std::string name) { return RawDefinition{DynEventKind::kprobe, "p:" + name + " vfs_open file=+0($arg2)"}; };
  const std::string eevent = egroup + "/eevent", kevent = kgroup + "/kevent";
  auto e = create(RawDefinition{DynEventKind::eprobe, eprobe(eevent).text, egroup, "eevent"}.def());
  ASSERT_OK(e);
  // Another event of that name (trace_probe.h EVENT_EXIST), or the very
  // same probe (SAME_PROBE): 6.12 and 7.2 word them so.
  auto taken = AnyOf(StrEq("Given group/event name is already used by another event"),
                     StrEq("There is already the exact same probe event"));
  ExpectRefused(eprobe(eevent), taken, std::nullopt, EEXIST);
  ExpectRefused(eprobe("syscalls/sys_enter_open"), taken, std::nullopt, EEXIST);
  if (features().has(features::kprobes)) {
    auto k = create(RawDefinition{DynEventKind::kprobe, kprobe(kevent).text, kgroup, "kevent"}.def());
    ASSERT_OK(k);
    ExpectRefused(eprobe(kevent), taken, std::nullopt, EEXIST);
    ExpectRefused(kprobe(kevent), taken, std::nullopt, EEXIST);
    ExpectRefused(kprobe(eevent), taken, std::nullopt, EEXIST);
    ExpectRefused(kprobe("syscalls/sys_enter_open"), taken, std::nullopt, EEXIST);
    EXPECT_TRUE(listed(*k));
  }
  auto text = fs().top().files().read("dynamic_events");
  ASSERT_OK(text);
  size_t lines_of_e = 0;
  for (std::string_view line : tracefs::split_lines(*text)) lines_of_e += line.find(eevent + " ") != std::string_view::npos;
  EXPECT_EQ(lines_of_e, 1u) << *text;
}

TRACEBED_SUITE_REQUIRES(DynEventClear, features::dynamic_events, features::kprobes);

// Truncating a probe list (`echo > dynamic_events`, trace_dynevent.c
// dyn_events_release_all) removes all of its events or none: while one is
// enabled, it asks every event before it whether it is busy (each kind's
// is_busy), fails with EBUSY and removes nothing. A kind's own file
// (kprobe_events, uprobe_events) removes that kind's alone. One event of
// each kind the kernel has, the enabled kprobe last.
TEST_F(DynEventClear, TruncatingAListRemovesAllOrNoneWhileOneIsEnabled) {
  const std::string group = unique("clear");
  struct Probe {
    std::string name, text;
    bool kprobe, uprobe;
  };
  std::vector<Probe> probes = {{"k", fmt::format("p:{}/k vfs_open", group), true, false}};
  if (features().has(features::uprobes)) {
    auto add = tracefs::find_elf_function(vm::probe_target_path().string(), "tracebed_target_add");
    ASSERT_OK(add);
    probes.push_back({"u", fmt::format("p:{}/u {}:0x{:x}", group, kProbeTarget, add->file_offset), false, true});
  }
  if (features().has(features::eprobes) && features().has(kOpenatEvent))
    probes.push_back({"e", fmt::format("e:{}/e syscalls/sys_enter_openat", group), false, false});
  if (features().has(features::fprobes))
    probes.push_back({"f", fmt::format("f:{}/f do_sys_openat2", group), false, false});
  if (features().has(features::tprobes) && features().has(features::sched_events))
    probes.push_back({"t", fmt::format("t:{}/t sched_switch", group), false, false});
  probes.push_back({"busy", fmt::format("p:{}/busy vfs_read", group), true, false});
  const tracefs::Files top = fs().top().files();
  for (const Probe& p : probes) ASSERT_OK(top.append("dynamic_events", p.text));
  auto listed = [&]() {
    std::vector<std::string> names;
    auto text = top.read("dynamic_events");
    EXPECT_OK(text);
    for (const Probe& p : probes)
      if (text && text->find(fmt::format("{}/{} ", group, p.name)) != std::string::npos) names.push_back(p.name);
    return names;
  };
  auto names_where = [&](auto keep) {
    std::vector<std::string> out;
    for (const Probe& p : probes)
      if (keep(p)) out.push_back(p.name);
    return out;
  };
  const std::vector<std::string> all = names_where([](const Probe&) { return true; });
  ASSERT_EQ(listed(), all);
  Event busy = inst().event(group, "busy");
  ASSERT_OK(busy.enable());
  for (const char* list : {"dynamic_events", "kprobe_events"}) {
    auto err = top.try_write(list, "");
    ASSERT_OK(err);
    EXPECT_EQ(*err, EBUSY) << list << " truncated with " << group << "/busy enabled";
    EXPECT_EQ(listed(), all) << list << ": a refused truncation removed events";
  }
  ASSERT_OK(busy.disable());
  ASSERT_OK(top.write("kprobe_events", ""));
  EXPECT_EQ(listed(), names_where([](const Probe& p) { return !p.kprobe; })) << "kprobe_events removes kprobes alone";
  if (features().has(features::uprobes)) {
    ASSERT_OK(top.write("uprobe_events", ""));
    EXPECT_EQ(listed(), names_where([](const Probe& p) { return !p.kprobe && !p.uprobe; }));
  }
  ASSERT_OK(top.write("dynamic_events", ""));
  EXPECT_THAT(listed(), IsEmpty());
  EXPECT_FALSE(fs().ops().exists(fs().root() + "/events/" + group));
}

TRACEBED_SUITE_REQUIRES(TprobeToggle, features::dynamic_events, features::tprobes, features::sched_events);

// A tprobe on sched_switch records every switch while enabled and none
// while disabled, twice over: each window's tprobe records equal its
// sched_switch records, or are none.
TEST_F(TprobeToggle, DisableAndReEnable) {
  TRACEBED_COVERS("ftracetest: dynevent/enable_disable_tprobe.tc");
  auto tp = create(TprobeDef::on(unique("myprobe"), "sched_switch"));
  ASSERT_OK(tp);
  Event sw = inst().event("sched", "sched_switch");
  ASSERT_OK(sw.enable());
  auto window = [&](bool probe_on) {
    SCOPED_TRACE(probe_on ? "enabled" : "disabled");
    EXPECT_OK(probe_on ? tp->enable(inst()) : tp->disable(inst()));
    EXPECT_OK(inst().clear_trace());
    EXPECT_OK(inst().set_tracing_on(true));
    run_target({"sleep", "10", "3"});
    size_t probes = 0, switches = 0;
    for (const DecodedEvent& e : decoded({*tp, sw})) (e.name == sw.name() ? switches : probes)++;
    EXPECT_GE(switches, 3u);
    EXPECT_EQ(probes, probe_on ? switches : 0u);
  };
  for (int round = 0; round < 2; ++round) {
    window(true);
    window(false);
  }
}

TRACEBED_SUITE_REQUIRES(FprobeLife, features::dynamic_events, features::fprobes);

// 64 times: created, listed, in events/, removed and gone. Then the last
// one is enabled and fires once for the one fork the probe target makes.
TEST_F(FprobeLife, RepeatedCreateAndRemove) {
  TRACEBED_COVERS("ftracetest: dynevent/add_remove_fprobe_repeat.tc");
  const std::string place = "kernel_clone", name = unique("myevent");
  for (int i = 0; i < 64; ++i) {
    SCOPED_TRACE(i);
    auto ev = create(FprobeDef::entry(name, place));
    ASSERT_OK(ev);
    ASSERT_TRUE(listed(*ev));
    ASSERT_TRUE(fs().ops().exists(fs().root() + "/events/" + ev->group() + "/" + name));
    ASSERT_OK(ev->destroy());
    ASSERT_FALSE(fs().ops().exists(fs().root() + "/events/" + ev->group() + "/" + name));
  }
  auto ev = create_enabled(FprobeDef::entry(name, place));
  ASSERT_OK(ev);
  ProbeRun run = run_target_only({"wake", "1"});
  EXPECT_THAT(of_pid(decoded(*ev), run.pid), SizeIs(1)) << "one fork, one " << place;
}

const Feature kEnabledFunctions = Feature::file("enabled_functions", "enabled_functions");

// The lines of enabled_functions for `function`: an fprobe's entry and
// exit on one function share one ftrace_ops, so one line.
size_t enabled_lines(TracefsTest& t, const std::string& function) {
  auto text = t.fs().top().files().read("enabled_functions");
  EXPECT_OK(text);
  size_t n = 0;
  if (text) {
    for (std::string_view line : tracefs::split_lines(*text)) {
      auto words = tracefs::split_words(line);
      n += !words.empty() && words[0] == function;
    }
  }
  return n;
}

// Entry and exit on lseek(2)'s function (testlib::lseek_probe), then either removed: the function stays
// enabled once while one is left (one line in enabled_functions), the
// entry records each of the probe target's 100 lseek(2) offsets and the
// exit each result, exactly, before and after the other is gone; once all
// are gone nothing is left in enabled_functions.
TEST_F(FprobeLife, EntryAndExitShareOneFunctionEntry) {
  TRACEBED_COVERS("ftracetest: dynevent/add_remove_multiple_fprobe.tc");
  TRACEBED_REQUIRE(features::fprobe_exit);
  TRACEBED_REQUIRE(features::fetcharg_argn);
  TRACEBED_REQUIRE(kEnabledFunctions);
  const testlib::LseekProbe lseek = testlib::lseek_probe();
  const std::string place = lseek.function;
  constexpr int kCalls = 100;
  std::vector<std::string> args = {"lseek", "/etc/tracebed/release"};
  std::vector<int64_t> offsets;  // SEEK_SET to each: lseek returns it
  for (int i = 0; i < kCalls; ++i) {
    args.push_back(std::to_string(i * 3));
    args.push_back("0");
    offsets.push_back(i * 3);
  }
  auto seek = [&] {
    ProbeRun run = run_target_only(args, {.start_tracing = true});
    EXPECT_THAT(run.lines_of("lseek"), SizeIs(kCalls));
    return run;
  };
  for (bool keep_entry : {true, false}) {
    SCOPED_TRACE(keep_entry ? "entry left" : "exit left");
    {
      auto entry = create_enabled(
          FprobeDef::entry(unique("event1"), place).arg(FetchArg(lseek.offset_arg).name("offset").type(FetchType::s64())));
      auto exit = create_enabled(
          FprobeDef::exit(unique("event2"), place).arg(FetchArg::retval().name("ret").type(FetchType::s64())));
      ASSERT_OK(entry);
      ASSERT_OK(exit);
      EXPECT_EQ(enabled_lines(*this, place), 1u);
      ProbeRun run = seek();
      std::vector<DecodedEvent> both = of_pid(decoded({*entry, *exit}), run.pid);
      EXPECT_THAT(int_fields(named(both, entry->name()), "offset"), ElementsAreArray(offsets));
      EXPECT_THAT(int_fields(named(both, exit->name()), "ret"), ElementsAreArray(offsets));
      DynamicEvent& left = keep_entry ? *entry : *exit;
      ASSERT_OK(keep_entry ? exit->destroy() : entry->destroy());
      EXPECT_EQ(enabled_lines(*this, place), 1u) << "the one left still needs it";
      run = seek();
      EXPECT_THAT(int_fields(of_pid(decoded(left), run.pid), keep_entry ? "offset" : "ret"), ElementsAreArray(offsets))
          << "the one left, alone";
    }
    EXPECT_EQ(enabled_lines(*this, place), 0u);
    {
      auto other = create_enabled(keep_entry ? FprobeDef::exit(unique("event3"), "do_sys_openat2")
                                             : FprobeDef::entry(unique("event3"), "do_sys_openat2"));
      ASSERT_OK(other);
      EXPECT_EQ(enabled_lines(*this, "do_sys_openat2"), 1u);
      EXPECT_EQ(enabled_lines(*this, place), 0u);
    }
    EXPECT_EQ(enabled_lines(*this, "do_sys_openat2"), 0u);
  }
}

const Feature kEntryArgsAtReturn = Feature::readme("entry arguments at %return", "kernel return probes support:");

// $arg1 at vfs_open%return is the argument the call was made with: each
// exit record carries the pointer its entry record had, in order.
TEST_F(FprobeLife, ExitRecordsTheEntryArgument) {
  TRACEBED_COVERS("ftracetest: dynevent/fprobe_entry_arg.tc");
  TRACEBED_REQUIRE(features::fprobe_exit);
  TRACEBED_REQUIRE(kEntryArgsAtReturn);
  std::string group = unique("tests");
  auto raw = [&](const std::string& event, const std::string& place) {
    return RawDefinition{DynEventKind::fprobe, "f:" + group + "/" + event + " " + place + " arg=$arg1", group, event}.def();
  };
  auto entry = create_enabled(raw("myevent1", "vfs_open"));
  auto exit = create_enabled(raw("myevent2", "vfs_open%return"));
  ASSERT_OK(entry);
  ASSERT_OK(exit);
  ProbeRun run = run_target_only({"open", "/etc/tracebed/release", "/proc/self/stat", "/dev/null"});
  std::vector<DecodedEvent> events = of_pid(decoded({*entry, *exit}), run.pid);
  std::vector<int64_t> at_entry = int_fields(named(events, "myevent1"), "arg");
  EXPECT_THAT(at_entry, SizeIs(Ge(3u))) << "three files opened (and the exec's own)";
  EXPECT_EQ(int_fields(named(events, "myevent2"), "arg"), at_entry);
}

}  // namespace
}  // namespace tracebed::suites
