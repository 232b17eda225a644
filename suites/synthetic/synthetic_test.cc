// ftracetest trigger/inter-event in spirit: synthetic events created through
// the control layer, fed by hist actions, and the generated events checked
// against the events they were computed from, decoded from the same pages.
#include <algorithm>
#include <cstdint>
#include <map>
#include <optional>
#include <string>

#include <fmt/format.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "framework/decode/event_format.h"
#include "framework/tracefs/hist_file.h"
#include "framework/tracefs/synth.h"
#include "framework/testing/tracefs_fixture.h"

namespace tracebed::suites {
namespace {

using decode::Field;
using decode::kFieldSigned;
using decode::parse_event_format;

class Synthetic : public TracefsTest {
 public:
  Synthetic() : TracefsTest({features::synthetic_events, features::hist_triggers, features::sched_events}) {}

 protected:
  Event waking() { return inst().event("sched", "sched_waking"); }
  Event sw() { return inst().event("sched", "sched_switch"); }

  // The wakeup_lat recipe of Documentation/trace/histogram.rst 2.2.3, in
  // this test's instance: sched_waking saves ts0 per pid, sched_switch to
  // that pid computes the latency and traces the synthetic event.
  std::optional<Synth> wakeup_latency(const std::string& name, const HistAction* extra_on_switch = nullptr) {
    auto synth = Synth::create(fs().top(), SynthDef(name).field("pid_t", "pid").field("u64", "lat"));
    EXPECT_OK(synth);
    if (!synth) return std::nullopt;
    EXPECT_OK(synth->add_trigger(waking(), HistTrigger().key("pid").var("ts0", "common_timestamp.usecs").trigger()));
    HistTrigger end;
    end.key("next_pid")
        .var("lat", "common_timestamp.usecs-$ts0")
        .action(on_waking().trace(name, {"next_pid", "$lat"}));
    if (extra_on_switch) end.action(*extra_on_switch);
    EXPECT_OK(synth->add_trigger(sw(), end.trigger()));
    return std::move(*synth);
  }

  // trace() where the kernel has it, else the older <synth>() form.
  HistAction on_waking() { return HistAction::onmatch("sched", "sched_waking"); }
};

// The talk's wakeup_lat: every decoded wakeup_lat event's latency equals
// the difference of its decoded sched_waking and sched_switch times, one
// event per switch in after a waking, over 30 wake-ups.
TEST_F(Synthetic, WakeupLatencyEqualsTheDecodedTimeDifference) {
  TRACEBED_COVERS("ftracetest: trigger/inter-event/trigger-onmatch-action-hist.tc");
  TRACEBED_REQUIRE(features::hist_trace_action);
  std::string name = unique("wakeup_lat");
  auto synth = wakeup_latency(name);
  ASSERT_TRUE(synth.has_value());
  // The sources first: every recorded wakeup_lat then has its sched_switch
  // and sched_waking in the buffer too.
  ASSERT_OK(waking().enable());
  ASSERT_OK(sw().enable());
  ASSERT_OK(inst().event("synthetic", name).enable());
  ProbeRun probe = run_target({"wake", "30"});
  ASSERT_OK(inst().set_tracing_on(false));
  ASSERT_THAT(probe.lines_of("wake"), SizeIs(30));
  int sleeper = std::stoi(probe.lines_of("wake")[0][1]);

  // One time line: the matching below crosses CPUs.
  std::vector<DecodedEvent> events =
      decoded({{"sched", "sched_waking"}, {"sched", "sched_switch"}, {"synthetic", name}});
  std::map<int64_t, uint64_t> last_waking;  // pid -> ts
  // Only the probe target's sleeper is checked: it lives inside the window,
  // so each of its wake-ups has both source events in the buffer. Other
  // tasks' ts0 may come from a sched_waking the trigger saw before the
  // event was enabled (triggers fire for disabled events, unrecorded).
  size_t of_sleeper = 0;
  for (const DecodedEvent& e : events) {
    if (e.name == "sched_waking") last_waking[int_field(e, "pid")] = e.ts;
    if (e.name != name) continue;
    int64_t pid = int_field(e, "pid");
    if (pid != sleeper) continue;
    ++of_sleeper;
    // The synthetic event is traced from the sched_switch to `pid`, which
    // is the event just before it on the same CPU.
    auto sw_it = std::find_if(events.rbegin(), events.rend(), [&](const DecodedEvent& s) {
      return s.ts <= e.ts && s.cpu == e.cpu && s.name == "sched_switch";
    });
    ASSERT_NE(sw_it, events.rend()) << ::testing::PrintToString(e);
    EXPECT_EQ(int_field(*sw_it, "next_pid"), pid);
    ASSERT_TRUE(last_waking.count(pid)) << "no sched_waking decoded for pid " << pid;
    // common_timestamp.usecs is ns2usecs (kernel/trace/trace.c): rounded
    // to the nearest microsecond, each stamp on its own, then subtracted.
    auto usecs = [](uint64_t ns) { return static_cast<int64_t>((ns + 500) / 1000); };
    int64_t expected = usecs(sw_it->ts) - usecs(last_waking[pid]);
    EXPECT_EQ(int_field(e, "lat"), expected) << ::testing::PrintToString(e);
  }
  EXPECT_EQ(of_sleeper, switch_ins_after_waking(events, sleeper))
      << "one wakeup_lat per switch to pid " << sleeper << " after a waking of it";
  EXPECT_GE(of_sleeper, 1u) << "none of the 30 wake-ups of pid " << sleeper << " found it switched out";
}

// onmax($lat).save(...) keeps the largest latency per key: it equals the
// largest decoded wakeup_lat latency for that pid.
TEST_F(Synthetic, OnmaxSavesTheLargestLatency) {
  TRACEBED_COVERS("ftracetest: trigger/inter-event/trigger-onmax-action-hist.tc");
  TRACEBED_REQUIRE(features::hist_trace_action);
  std::string name = unique("wakeup_lat");
  HistAction onmax = HistAction::onmax("lat").save({"next_comm", "prev_pid"});
  auto synth = wakeup_latency(name, &onmax);
  ASSERT_TRUE(synth.has_value());
  ASSERT_OK(inst().event("synthetic", name).enable());
  ProbeRun probe = run_target({"wake", "30"});
  ASSERT_OK(inst().set_tracing_on(false));

  ASSERT_THAT(probe.lines_of("wake"), SizeIs(30));
  int sleeper = std::stoi(probe.lines_of("wake")[0][1]);

  // The sleeper's wake-ups all fall inside the window (other tasks' may
  // feed the max before recording starts or after it stops).
  int64_t max_lat = -1;
  for (const DecodedEvent& e : decoded({"synthetic", name}))
    if (int_field(e, "pid") == sleeper) max_lat = std::max(max_lat, int_field(e, "lat"));
  ASSERT_GE(max_lat, 0) << "no wakeup_lat decoded for the sleeper " << sleeper;

  auto hist = tracefs::read_hist(sw());
  ASSERT_OK(hist);
  ASSERT_THAT(hist->sections, SizeIs(1));
  EXPECT_THAT(hist->sections[0].entries,
              Contains(AllOf(HistKeyEq("next_pid", sleeper), HistSavedThat("max", static_cast<uint64_t>(max_lat)))));
}

// onchange($var).save(...) keeps, per key, the value it last changed to
// and the fields saved with it, and saves nothing while the value stays:
// a shell renices itself to 5, 2, 5 and 9, sleeping at each, then execs
// the probe target under another name (same pid, same nice), which
// sleeps too. The saved value is the last prev_prio it changed to and
// the comm of that switch, the shell's, not the later program's.
TEST_F(Synthetic, OnchangeKeepsTheLastChangedValue) {
  TRACEBED_COVERS("ftracetest: trigger/inter-event/trigger-onchange-action-hist.tc");
  TRACEBED_REQUIRE(features::hist_onchange);
  Event ev = sw();
  HistTrigger h;
  h.key("prev_pid").var("prio", "prev_prio").action(HistAction::onchange("prio").save({"prev_comm"}));
  ASSERT_OK(ev.add_trigger(h.trigger()));
  ASSERT_OK(ev.enable());
  const std::string name = "tb-onchange";
  const std::string out = sh(fmt::format(
      "ln -sf {0} /tmp/{1}; echo $$; for n in 5 2 5 9; do renice $n -p $$ > /dev/null; sleep 0.05; sleep 0.05; done; "
      "exec /tmp/{1} sleep 50 3",
      kProbeTarget, name));
  ASSERT_OK(inst().set_tracing_on(false));
  const int pid = std::stoi(out);
  auto hist = tracefs::read_hist(ev);
  ASSERT_OK(hist);
  ASSERT_THAT(hist->sections, SizeIs(1));
  // The last change in the shell's own switches, and the program's after it.
  std::optional<int64_t> prio;
  std::string comm;
  size_t program_switches = 0;
  for (const DecodedEvent& e : decoded({"sched", "sched_switch"})) {
    if (int_field(e, "prev_pid") != pid) continue;
    if (int_field(e, "prev_prio") != prio) {
      prio = int_field(e, "prev_prio");
      comm = str_field(e, "prev_comm");
    } else {
      program_switches += str_field(e, "prev_comm") == name;
    }
  }
  ASSERT_EQ(prio, 129) << "the shell's last nice, 9";
  ASSERT_EQ(comm, "sh");
  ASSERT_GE(program_switches, 3u) << "the program slept three times at the same prio";
  const tracefs::HistEntry* entry = nullptr;
  for (const auto& e : hist->sections[0].entries)
    if (const auto* k = e.key("prev_pid"); k && k->number == static_cast<uint64_t>(pid)) entry = &e;
  ASSERT_NE(entry, nullptr) << "no entry for prev_pid " << pid;
  EXPECT_THAT(*entry, HistSavedThat("changed", 129u));
  std::string saved_comm;
  for (const tracefs::HistValue& v : entry->saved)
    if (v.field == "prev_comm") saved_comm = v.text;
  EXPECT_EQ(saved_comm, "sh") << "saved again though the prio did not change";
}

// Every field type the kernel accepts is in the format with the size of its
// C type; u* fields are unsigned and s* fields signed. (How a char array is
// spelled differs: 6.12 prints "char a_comm[]" with size 16.)
TEST_F(Synthetic, EveryFieldTypeHasItsSizeInTheFormat) {
  std::string name = unique("alltypes");
  struct Want {
    const char* type;
    const char* field;
    uint32_t size;
    int is_signed;  // -1: not checked
  };
  const Want wants[] = {{"u8", "a_u8", 1, 0},       {"s8", "a_s8", 1, 1},     {"u16", "a_u16", 2, 0},
                        {"s16", "a_s16", 2, 1},     {"u32", "a_u32", 4, 0},   {"s32", "a_s32", 4, 1},
                        {"u64", "a_u64", 8, 0},     {"s64", "a_s64", 8, 1},   {"int", "an_int", 4, 1},
                        {"unsigned int", "a_uint", 4, 0}, {"long", "a_long", 8, 1}, {"pid_t", "a_pid", 4, 1},
                        {"bool", "a_bool", 1, -1}};
  SynthDef spec(name);
  for (const Want& w : wants) spec.field(w.type, w.field);
  spec.string("a_comm", 16);
  auto synth = Synth::create(fs().top(), spec);
  ASSERT_OK(synth);
  auto text = synth->event().format();
  ASSERT_OK(text);
  auto format = parse_event_format(*text, "synthetic", "events/synthetic/" + name + "/format");
  ASSERT_OK(format);
  for (const Want& w : wants) {
    const Field* f = (*format)->field(w.field);
    ASSERT_NE(f, nullptr) << w.field << " missing in\n" << *text;
    EXPECT_EQ(f->size, w.size) << w.type << " " << w.field;
    if (w.is_signed >= 0) {
      EXPECT_EQ(f->has(kFieldSigned), w.is_signed == 1) << w.type << " " << w.field;
    }
  }
  const Field* comm = (*format)->field("a_comm");
  ASSERT_NE(comm, nullptr);
  EXPECT_EQ(comm->size, 16u);
}

// Dynamic strings (char name[]) where the kernel has them.
TEST_F(Synthetic, DynamicStringFieldIsADataLoc) {
  TRACEBED_REQUIRE(features::hist_dynamic_strings);
  std::string name = unique("dynstr");
  auto synth = Synth::create(fs().top(), SynthDef(name).dynamic_string("file").field("u64", "n"));
  ASSERT_OK(synth);
  auto format = synth->event().format();
  ASSERT_OK(format);
  EXPECT_THAT(*format, HasSubstr("__data_loc char[] file;"));
}

// synthetic_events lists what was created, as the kernel prints it, and
// the object removes it when it dies.
TEST_F(Synthetic, CreatedEventIsListedAndRemovedAfterwards) {
  TRACEBED_COVERS("ftracetest: trigger/inter-event/trigger-synthetic-event-createremove.tc");
  std::string name = unique("listed");
  {
    auto synth = Synth::create(fs().top(), SynthDef(name).field("pid_t", "pid").string("comm", 16));
    ASSERT_OK(synth);
    auto text = fs().top().files().read("synthetic_events");
    ASSERT_OK(text);
    auto listed = tracefs::parse_synthetic_events(*text);
    ASSERT_OK(listed);
    EXPECT_THAT(*listed, Contains(synth->spec()));
  }
  auto text = fs().top().files().read("synthetic_events");
  ASSERT_OK(text);
  EXPECT_THAT(*text, Not(HasSubstr(name)));
  EXPECT_FALSE(fs().ops().exists(fs().root() + "/events/synthetic/" + name));
}

// The s: form through dynamic_events (README "s:[synthetic/]<event>").
TEST_F(Synthetic, CreatedThroughDynamicEvents) {
  TRACEBED_COVERS("ftracetest: dynevent/add_remove_synth.tc");
  TRACEBED_REQUIRE(features::dynamic_events);
  if (!features().has(tracefs::Feature::readme("s: in dynamic_events", "s:[synthetic/]<event> <field> [<field>]")))
    GTEST_SKIP() << "needs s: in dynamic_events: no \"s:[synthetic/]<event> <field> [<field>]\" in README";
  std::string name = unique("viadyn");
  auto synth = Synth::create(fs().top(), SynthDef(name).field("u64", "lat"), Synth::Via::dynamic_events);
  ASSERT_OK(synth);
  auto text = fs().top().files().read("dynamic_events");
  ASSERT_OK(text);
  EXPECT_THAT(*text, HasSubstr("s:synthetic/" + name));
}

// A synthetic event in use by a trigger cannot be removed: the kernel says
// EBUSY and our error names the trigger in the way.
TEST_F(Synthetic, RemovalWhileInUseIsRefused) {
  TRACEBED_REQUIRE(features::hist_trace_action);
  std::string name = unique("busy");
  auto synth = wakeup_latency(name);
  ASSERT_TRUE(synth.has_value());
  auto err = fs().top().files().try_write("synthetic_events", "!" + name, true);
  ASSERT_OK(err);
  EXPECT_EQ(*err, EBUSY);
  // destroy() removes the triggers first, so the event goes.
  EXPECT_OK(synth->destroy());
  EXPECT_FALSE(fs().ops().exists(fs().root() + "/events/synthetic/" + name));
}

// A bad field type is refused with the kernel's error_log words.
TEST_F(Synthetic, BadFieldTypeIsExplained) {
  TRACEBED_REQUIRE(features::error_log);
  auto synth = Synth::create(fs().top(), SynthDef(unique("badtype")).field("float", "x"));
  ASSERT_FALSE(synth.ok());
  // kernel/trace/trace_events_synth.c err_text: "Invalid type", the caret
  // under the type.
  EXPECT_THAT(synth.error().message, HasSubstr("Invalid type"));
  EXPECT_THAT(synth.error().message, HasSubstr("^"));
}

}  // namespace
}  // namespace tracebed::suites
