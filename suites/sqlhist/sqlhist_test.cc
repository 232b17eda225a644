// The sqlhist compiler (framework/tracefs/sql.h) against a live kernel:
// statements compiled with the guest's own available_events and formats,
// created as the compiler emits them (the synthetic event at the top
// level, the hist triggers in this test's instance), and the synthetic
// events they generate checked against the source events decoded from the
// same pages and against what the probe target printed.
//
// The talk's three examples: wakeup_lat, the blocking-syscall pair
// sysname/offcpu, and myopen.
#include <algorithm>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "framework/decode/event_format.h"
#include "framework/tracefs/hist_file.h"
#include "framework/tracefs/sql.h"
#include "framework/tracefs/synth.h"
#include "framework/testing/tracefs_fixture.h"

namespace tracebed::suites {
namespace {

using decode::EventFormat;
using decode::Field;
using decode::kFieldSigned;
using decode::parse_event_format;
using tracefs::SqlHistDef;

const tracefs::Feature openat_events = tracefs::Feature::event("syscalls", "sys_exit_openat");
const tracefs::Feature sys_enter_event = tracefs::Feature::event("raw_syscalls", "sys_enter");
const tracefs::Feature synth_in_dynamic_events =
    tracefs::Feature::readme("s: in dynamic_events", "s:[synthetic/]<event> <field> [<field>]");

// The statements as the talk writes them; NAME is the synthetic event.
constexpr const char* kWakeupLat =
    "SELECT end.next_comm AS name, start.pid, (end.TIMESTAMP_USECS - start.TIMESTAMP_USECS) AS latency "
    "FROM sched_waking AS start JOIN sched_switch AS end ON start.pid = end.next_pid";
constexpr const char* kMyOpen =
    "SELECT start.filename, end.ret FROM sys_enter_openat AS start JOIN sys_exit_openat AS end "
    "ON start.common_pid = end.common_pid";
constexpr const char* kSysname =
    "SELECT start.id AS syscall, end.prev_pid AS pid FROM sys_enter AS start JOIN sched_switch AS end "
    "ON start.common_pid = end.prev_pid WHERE end.prev_state & 3";
// FROM the event the statement above makes.
std::string offcpu_sql(const std::string& sysname) {
  return "SELECT start.syscall, (end.TIMESTAMP_USECS - start.TIMESTAMP_USECS) AS delta FROM " + sysname +
         " AS start JOIN sched_switch AS end ON start.pid = end.next_pid";
}

// common_timestamp.usecs is ns2usecs (kernel/trace/trace.c): each stamp
// rounded to the nearest microsecond on its own.
int64_t usecs(uint64_t ns) { return static_cast<int64_t>((ns + 500) / 1000); }

// The last event before index i on the same CPU with this name.
const DecodedEvent* last_before(const std::vector<DecodedEvent>& events, size_t i, const std::string& name) {
  for (size_t j = i; j-- > 0;)
    if (events[j].cpu == events[i].cpu && events[j].name == name) return &events[j];
  return nullptr;
}

class Sqlhist : public TracefsTest {
 public:
  Sqlhist() : TracefsTest({features::synthetic_events, features::hist_triggers}) {}

 protected:
  // Compiled against this kernel's events and formats; the older action
  // form where README lacks trace().
  std::optional<SqlHistDef> compile(const std::string& sql, const std::string& name) {
    auto r = tracefs::compile_sql(sql, name, tracefs::tracefs_resolver(fs()),
                                  {.old_action_form = !features().has(features::hist_trace_action)});
    EXPECT_OK(r);
    if (!r) return std::nullopt;
    return std::move(*r);
  }

  // Compiles and creates: the synthetic event at the top level, the
  // triggers in this test's instance. The fixture removes it after the
  // test, newest first (a later statement may read an earlier one's event).
  Synth* create(const std::string& sql, const std::string& name, Synth::Via via = Synth::Via::synthetic_events) {
    auto compiled = compile(sql, name);
    if (!compiled) return nullptr;
    auto s = compiled->create(fs().top(), &inst(), via);
    EXPECT_OK(s);
    if (!s) return nullptr;
    made_.push_back(std::make_unique<Synth>(std::move(*s)));
    return made_.back().get();
  }

  // The kernel keeps a synthetic event enabled in any instance (EBUSY):
  // disable it here first, then remove triggers and event.
  Status remove(Synth& s) {
    if (Event ev = inst().event("synthetic", s.spec().name()); ev.exists()) TRACEBED_TRY(ev.disable());
    return s.destroy();
  }

  void TearDown() override {
    for (auto it = made_.rbegin(); it != made_.rend(); ++it) EXPECT_OK(remove(**it));
    made_.clear();
    TracefsTest::TearDown();
  }

  Status enable(const std::vector<tracefs::EventName>& events) {
    for (const auto& e : events) TRACEBED_TRY(inst().event(e.system, e.name).enable());
    return {};
  }

 private:
  std::vector<std::unique_ptr<Synth>> made_;
};

// The probe target's opens, `rounds` times over: files that open and
// files that do not, so fds and -ENOENT alternate.
std::vector<std::string> open_args(const std::vector<std::string>& paths, int rounds) {
  std::vector<std::string> args = {"open"};
  for (int r = 0; r < rounds; ++r) args.insert(args.end(), paths.begin(), paths.end());
  return args;
}

// myopen: one event per openat of the target, carrying the filename
// pointer its sys_enter_openat had and the fd (or -errno) it printed: 90
// opens, none missing, none extra, in order.
TEST_F(Sqlhist, MyOpenCarriesTheFilenameAndTheFd) {
  TRACEBED_REQUIRE(openat_events);
  std::string name = unique("myopen");
  auto synth = create(kMyOpen, name);
  ASSERT_NE(synth, nullptr);
  ASSERT_OK(enable({{"syscalls", "sys_enter_openat"}, {"syscalls", "sys_exit_openat"}, {"synthetic", name}}));
  ProbeRun probe = run_target(open_args({"/etc/tracebed/release", "/nonexistent", "/proc/self/stat"}, 30));
  ASSERT_OK(inst().set_tracing_on(false));
  std::vector<int64_t> printed;
  for (const auto& l : probe.lines_of("open")) printed.push_back(std::stoll(l.at(1)));
  ASSERT_THAT(printed, SizeIs(90));

  std::vector<int64_t> entered, rets;
  std::vector<DecodedEvent> mine;
  for (const DecodedEvent& e :
       decoded({{"syscalls", "sys_enter_openat"}, {"syscalls", "sys_exit_openat"}, {"synthetic", name}})) {
    if (e.pid != probe.pid) continue;
    if (e.name == "sys_enter_openat") entered.push_back(int_field(e, "filename"));
    if (e.name == "sys_exit_openat") rets.push_back(int_field(e, "ret"));
    if (e.name == name) mine.push_back(e);
  }
  EXPECT_THAT(rets, ElementsAreArray(printed));
  ASSERT_THAT(mine, SizeIs(printed.size()));
  ASSERT_THAT(entered, SizeIs(printed.size()));
  for (size_t i = 0; i < mine.size(); ++i) {
    SCOPED_TRACE(::testing::PrintToString(mine[i]));
    EXPECT_EQ(int_field(mine[i], "ret"), printed[i]);
    EXPECT_EQ(int_field(mine[i], "filename"), entered[i]);
  }
}

// WHERE end.ret >= 0 goes to sys_exit_openat's trigger: of 60 opens, the
// 30 that fail make no event and each of the 30 that succeed makes one,
// with the fd it printed.
TEST_F(Sqlhist, WhereFiltersTheEvents) {
  TRACEBED_REQUIRE(openat_events);
  std::string name = unique("myopen_ok");
  Synth* synth = create(std::string(kMyOpen) + " WHERE end.ret >= 0", name);
  ASSERT_NE(synth, nullptr);
  // The kernel shows the filter on the trigger it keeps.
  auto triggers = inst().event("syscalls", "sys_exit_openat").triggers();
  ASSERT_OK(triggers);
  ASSERT_THAT(*triggers, SizeIs(1));
  EXPECT_EQ((*triggers)[0].filter, "ret >= 0") << (*triggers)[0].line;

  ASSERT_OK(enable({{"synthetic", name}}));
  ProbeRun probe =
      run_target(open_args({"/nonexistent", "/etc/tracebed/release", "/nonexistent2", "/proc/self/stat"}, 15));
  ASSERT_OK(inst().set_tracing_on(false));
  std::vector<int64_t> succeeded;
  for (const auto& l : probe.lines_of("open"))
    if (std::stoll(l.at(1)) >= 0) succeeded.push_back(std::stoll(l.at(1)));
  ASSERT_THAT(succeeded, SizeIs(30));
  std::vector<int64_t> got;
  for (const DecodedEvent& e : decoded({{"synthetic", name}}))
    if (e.name == name && e.pid == probe.pid) got.push_back(int_field(e, "ret"));
  EXPECT_THAT(got, ElementsAreArray(succeeded));
}

// wakeup_lat as compiled: each event of the sleeper has the comm of the
// sched_switch it was traced from, and its latency is that switch's time
// minus the sleeper's last sched_waking's, in microseconds; one event per
// switch in that follows a waking (switch_ins_after_waking), over 30
// wake-ups.
TEST_F(Sqlhist, WakeupLatencyEqualsTheDecodedTimeDifference) {
  TRACEBED_REQUIRE(features::sched_events);
  std::string name = unique("wakeup_lat");
  auto synth = create(kWakeupLat, name);
  ASSERT_NE(synth, nullptr);
  // Sources first, so each recorded wakeup_lat has both in the buffer.
  ASSERT_OK(enable({{"sched", "sched_waking"}, {"sched", "sched_switch"}, {"synthetic", name}}));
  ProbeRun probe = run_target({"wake", "30"});
  ASSERT_OK(inst().set_tracing_on(false));
  ASSERT_THAT(probe.lines_of("wake"), SizeIs(30));
  int sleeper = std::stoi(probe.lines_of("wake")[0].at(1));

  std::vector<DecodedEvent> events =
      decoded({{"sched", "sched_waking"}, {"sched", "sched_switch"}, {"synthetic", name}});
  std::map<int64_t, uint64_t> last_waking;  // pid -> ts
  size_t of_sleeper = 0;
  for (size_t i = 0; i < events.size(); ++i) {
    const DecodedEvent& e = events[i];
    if (e.name == "sched_waking") last_waking[int_field(e, "pid")] = e.ts;
    if (e.name != name || int_field(e, "pid") != sleeper) continue;
    SCOPED_TRACE(::testing::PrintToString(e));
    ++of_sleeper;
    const DecodedEvent* sw = last_before(events, i, "sched_switch");
    ASSERT_NE(sw, nullptr);
    EXPECT_EQ(int_field(*sw, "next_pid"), sleeper);
    EXPECT_EQ(str_field(e, "name"), str_field(*sw, "next_comm"));
    ASSERT_TRUE(last_waking.count(sleeper)) << "no sched_waking decoded for " << sleeper;
    EXPECT_EQ(int_field(e, "latency"), usecs(sw->ts) - usecs(last_waking[sleeper]));
  }
  EXPECT_EQ(of_sleeper, switch_ins_after_waking(events, sleeper))
      << "one event per switch to pid " << sleeper << " after a waking of it";
  EXPECT_GE(of_sleeper, 1u) << "none of the 30 wake-ups of pid " << sleeper << " found it switched out";
}

// sysname, then offcpu FROM sysname: sysname fires when the target sleeps
// inside a system call (prev_state & 3: TASK_INTERRUPTIBLE or
// TASK_UNINTERRUPTIBLE) with the id of its last sys_enter; offcpu fires
// when it is switched back in, with the time it was away.
TEST_F(Sqlhist, BlockingSyscallsSysnameThenOffcpu) {
  TRACEBED_REQUIRE(features::sched_events);
  TRACEBED_REQUIRE(sys_enter_event);
  std::string sysname = unique("sysname");
  std::string offcpu = unique("offcpu");
  auto first = create(kSysname, sysname);
  ASSERT_NE(first, nullptr);
  // Compiled now: the resolver reads sysname's format from the kernel.
  auto second = create(offcpu_sql(sysname), offcpu);
  ASSERT_NE(second, nullptr);
  ASSERT_OK(enable({{"raw_syscalls", "sys_enter"}, {"sched", "sched_switch"}, {"synthetic", sysname},
                    {"synthetic", offcpu}}));
  ProbeRun probe = run_target({"sleep", "20", "10"});
  ASSERT_OK(inst().set_tracing_on(false));
  ASSERT_THAT(probe.lines_of("sleep"), SizeIs(10));

  std::vector<DecodedEvent> events = decoded(
      {{"raw_syscalls", "sys_enter"}, {"sched", "sched_switch"}, {"synthetic", sysname}, {"synthetic", offcpu}});
  std::optional<int64_t> last_id;             // the target's last syscall
  const DecodedEvent* last_sysname = nullptr;  // the target's last sysname
  size_t sysnames = 0, offcpus = 0;
  for (size_t i = 0; i < events.size(); ++i) {
    const DecodedEvent& e = events[i];
    if (e.name == "sys_enter" && e.pid == probe.pid) last_id = int_field(e, "id");
    if (e.name == sysname && int_field(e, "pid") == probe.pid) {
      SCOPED_TRACE(::testing::PrintToString(e));
      ++sysnames;
      const DecodedEvent* sw = last_before(events, i, "sched_switch");
      ASSERT_NE(sw, nullptr);
      EXPECT_EQ(int_field(*sw, "prev_pid"), probe.pid);
      EXPECT_NE(int_field(*sw, "prev_state") & 3, 0);
      ASSERT_TRUE(last_id.has_value()) << "no sys_enter of " << probe.pid << " before";
      EXPECT_EQ(int_field(e, "syscall"), *last_id);
      last_sysname = &e;
    }
    if (e.name == offcpu) {
      const DecodedEvent* sw = last_before(events, i, "sched_switch");
      ASSERT_NE(sw, nullptr) << ::testing::PrintToString(e);
      if (int_field(*sw, "next_pid") != probe.pid) continue;
      SCOPED_TRACE(::testing::PrintToString(e));
      ++offcpus;
      ASSERT_NE(last_sysname, nullptr) << "offcpu for " << probe.pid << " before any sysname";
      EXPECT_EQ(int_field(e, "syscall"), int_field(*last_sysname, "syscall"));
      EXPECT_EQ(int_field(e, "delta"), usecs(sw->ts) - usecs(last_sysname->ts));
    }
  }
  // Ten sleeps of 20 ms: each one blocks and comes back.
  EXPECT_GE(sysnames, 10u);
  EXPECT_GE(offcpus, 10u);
}

// Without JOIN a plain histogram: CAST(common_pid AS comm), CAST(id AS
// syscall) per pid and syscall; the target's hitcounts are its decoded
// sys_enter events per id, 150 getpid calls among them.
TEST_F(Sqlhist, WithoutJoinAHistogramOfTheDecodedEvents) {
  TRACEBED_REQUIRE(sys_enter_event);
  auto compiled = compile("SELECT CAST(common_pid AS comm), CAST(id AS syscall) FROM sys_enter", "unused");
  ASSERT_TRUE(compiled.has_value());
  ASSERT_FALSE(compiled->synth.has_value());
  Event ev = inst().event(compiled->start.system, compiled->start.name);
  ASSERT_OK(ev.add_trigger(compiled->start_hist.trigger()));
  ASSERT_OK(ev.enable());
  ProbeRun probe = run_target_only({"getpid", "150"});
  ASSERT_OK(inst().set_tracing_on(false));
  auto hist = tracefs::read_hist(ev);
  ASSERT_OK(hist);
  ASSERT_THAT(hist->sections, SizeIs(1));
  std::map<uint64_t, uint64_t> per_id;
  for (const DecodedEvent& e : of_pid(decoded({"raw_syscalls", "sys_enter"}), probe.pid))
    per_id[static_cast<uint64_t>(int_field(e, "id"))]++;
  std::map<uint64_t, uint64_t> shown;
  for (const auto& entry : hist->sections[0].entries) {
    const tracefs::HistKey* pid = entry.key("common_pid");
    const tracefs::HistKey* id = entry.key("id");
    ASSERT_TRUE(pid && pid->number && id && id->number) << "keys missing in an entry";
    if (static_cast<int>(*pid->number) != probe.pid) continue;
    shown[*id->number] += entry.hitcount();
    // getpid is 39 on x86_64 (arch/x86/entry/syscalls/syscall_64.tbl).
    if (*id->number == 39) {
      EXPECT_EQ(id->symbol, "sys_getpid");
    }
  }
  EXPECT_EQ(shown, per_id);
  EXPECT_GE(shown[39], 151u) << "its pid line and 150 calls";
  EXPECT_OK(ev.remove_trigger(compiled->start_hist.trigger()));
}

// The synthetic fields have the sizes and signedness of the source fields
// they carry, as the kernel's own format files say on both sides.
TEST_F(Sqlhist, SyntheticFieldsTakeTheSourceFieldTypes) {
  TRACEBED_REQUIRE(openat_events);
  TRACEBED_REQUIRE(features::sched_events);
  struct Carried {
    std::string field;  // in the synthetic event
    tracefs::EventName source;
    std::string source_field;
  };
  auto format_of = [&](const tracefs::EventName& ev) -> std::unique_ptr<EventFormat> {
    auto text = fs().top().event(ev.system, ev.name).format();
    EXPECT_OK(text);
    if (!text) return nullptr;
    auto f = parse_event_format(*text, ev.system, "events/" + ev.system + "/" + ev.name + "/format");
    EXPECT_OK(f);
    return f ? std::move(*f) : nullptr;
  };
  auto check = [&](const std::string& sql, const std::string& name, const std::vector<Carried>& carried) {
    auto synth = create(sql, name);
    ASSERT_NE(synth, nullptr);
    auto mine = format_of({"synthetic", name});
    ASSERT_NE(mine, nullptr);
    for (const Carried& c : carried) {
      SCOPED_TRACE(name + "." + c.field);
      auto src = format_of(c.source);
      ASSERT_NE(src, nullptr);
      const Field* f = mine->field(c.field);
      const Field* s = src->field(c.source_field);
      ASSERT_NE(f, nullptr);
      ASSERT_NE(s, nullptr);
      EXPECT_EQ(f->size, s->size);
      // Strings by size only: sched_switch's char next_comm[16] says
      // signed:0, a synthetic char[16] signed:1 (6.12).
      if (s->array_len == 0 && f->array_len == 0) {
        EXPECT_EQ(f->has(kFieldSigned), s->has(kFieldSigned));
      }
    }
  };
  check(kWakeupLat, unique("wakeup_lat"),
        {{"name", {"sched", "sched_switch"}, "next_comm"}, {"pid", {"sched", "sched_waking"}, "pid"}});
  check(kMyOpen, unique("myopen"),
        {{"filename", {"syscalls", "sys_enter_openat"}, "filename"}, {"ret", {"syscalls", "sys_exit_openat"}, "ret"}});
}

// What the compiler created is what the kernel lists, and removing the
// Synth removes all of it: the triggers in the instance and the event.
TEST_F(Sqlhist, EverythingCreatedIsRemoved) {
  TRACEBED_REQUIRE(features::sched_events);
  std::string name = unique("wakeup_lat");
  auto synth = create(kWakeupLat, name);
  ASSERT_NE(synth, nullptr);
  auto listed_text = fs().top().files().read("synthetic_events");
  ASSERT_OK(listed_text);
  auto listed = tracefs::parse_synthetic_events(*listed_text);
  ASSERT_OK(listed);
  EXPECT_THAT(*listed, Contains(synth->spec()));
  for (const char* ev : {"sched_waking", "sched_switch"}) {
    auto t = inst().event("sched", ev).triggers();
    ASSERT_OK(t);
    ASSERT_THAT(*t, SizeIs(1)) << ev;
    EXPECT_TRUE((*t)[0].is_hist()) << (*t)[0].line;
  }
  EXPECT_THAT((*inst().event("sched", "sched_switch").triggers())[0].line, HasSubstr(name));

  ASSERT_OK(remove(*synth));
  for (const char* ev : {"sched_waking", "sched_switch"}) {
    auto t = inst().event("sched", ev).triggers();
    ASSERT_OK(t);
    EXPECT_THAT(*t, IsEmpty()) << ev;
  }
  listed_text = fs().top().files().read("synthetic_events");
  ASSERT_OK(listed_text);
  EXPECT_THAT(*listed_text, Not(HasSubstr(name)));
  EXPECT_FALSE(fs().ops().exists(fs().root() + "/events/synthetic/" + name));
}

// libtracefs's newer form: the event as "s:" in dynamic_events, listed
// there, working the same (one event per open of 40, with its fd or
// -ENOENT), and removed from there.
TEST_F(Sqlhist, CreatedThroughDynamicEvents) {
  TRACEBED_REQUIRE(features::dynamic_events);
  TRACEBED_REQUIRE(synth_in_dynamic_events);
  TRACEBED_REQUIRE(openat_events);
  std::string name = unique("myopen_dyn");
  Synth* synth = create(kMyOpen, name, Synth::Via::dynamic_events);
  ASSERT_NE(synth, nullptr);
  auto dyn = fs().top().files().read("dynamic_events");
  ASSERT_OK(dyn);
  EXPECT_THAT(*dyn, HasSubstr("s:synthetic/" + name));
  ASSERT_OK(enable({{"synthetic", name}}));
  ProbeRun probe = run_target(open_args({"/etc/tracebed/release", "/nonexistent"}, 20));
  ASSERT_OK(inst().set_tracing_on(false));
  std::vector<int64_t> printed;
  for (const auto& l : probe.lines_of("open")) printed.push_back(std::stoll(l.at(1)));
  ASSERT_THAT(printed, SizeIs(40));
  std::vector<int64_t> got;
  for (const DecodedEvent& e : decoded({{"synthetic", name}}))
    if (e.name == name && e.pid == probe.pid) got.push_back(int_field(e, "ret"));
  EXPECT_THAT(got, ElementsAreArray(printed));

  ASSERT_OK(remove(*synth));
  dyn = fs().top().files().read("dynamic_events");
  ASSERT_OK(dyn);
  EXPECT_THAT(*dyn, Not(HasSubstr(name)));
}

// The lines `tracebed sqlhist` prints, run by the guest's shell as a user
// would paste them (at the top level, which the fixture resets after):
// myopen then carries the fds the program printed, all 40.
TEST_F(Sqlhist, PrintedCommandsRunInTheShell) {
  TRACEBED_REQUIRE(openat_events);
  std::string name = unique("myopen_sh");
  auto compiled = compile(kMyOpen, name);
  ASSERT_TRUE(compiled.has_value());
  tracefs::Instance& t = top();
  ASSERT_OK(t.set_tracing_on(false));
  ASSERT_OK(t.clear_trace());
  std::vector<std::string> lines = compiled->commands(fs().root());
  ASSERT_THAT(lines, SizeIs(3));
  for (const std::string& line : lines) sh(line);
  ASSERT_FALSE(HasFailure()) << "the printed commands did not run";
  ASSERT_OK(t.event("synthetic", name).enable());
  ASSERT_OK(t.set_tracing_on(true));
  ProbeRun probe = run_target(open_args({"/proc/self/stat", "/nonexistent"}, 20));
  ASSERT_OK(t.set_tracing_on(false));
  std::vector<int64_t> printed;
  for (const auto& l : probe.lines_of("open")) printed.push_back(std::stoll(l.at(1)));
  ASSERT_THAT(printed, SizeIs(40));
  EXPECT_THAT(int_fields(of_pid(decoded(t, {{"synthetic", name}}), probe.pid), "ret"), ElementsAreArray(printed));
}

}  // namespace
}  // namespace tracebed::suites
