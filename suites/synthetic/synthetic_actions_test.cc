// ftracetest trigger/inter-event action cases, with the probe target's
// waker and sleeper in place of ping: trace() and the older <synth>()
// form, onmatch with onmax, several actions on one event, field variables
// and fully qualified variable references, and the actions onmatch
// refuses. Where the .tc greps a hist file for a name, each generated
// event here is checked against the sched events decoded beside it.
#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "framework/tracefs/hist_file.h"
#include "suites/synthetic/synthetic_actions.h"

namespace tracebed::suites {
namespace {

// onmatch().trace(): the synthetic event carries the wakeup latency and
// the hist on it counts every one.
TEST_F(SyntheticActions, TraceActionTracesTheWakeupLatency) {
  TRACEBED_COVERS("ftracetest: trigger/inter-event/trigger-trace-action-hist.tc");
  TRACEBED_REQUIRE(features::hist_trace_action);
  std::string name = synth("wakeup_latency", "u64 lat; pid_t pid; char comm[16]");
  Event syn = inst().event("synthetic", name);
  ASSERT_NO_FATAL_FAILURE(wakeup_latency(syn, ".trace(" + name + ",$wakeup_lat,next_pid,next_comm)"));
  int sleeper = wake(20);
  std::vector<DecodedEvent> events = decoded({wakeup(), sw(), syn});
  std::vector<int64_t> lats = expect_latencies(events, name, "sched_wakeup", sleeper);
  for (const DecodedEvent& e : events) {
    if (e.name == name) {
      EXPECT_EQ(str_field(e, "comm"), kComm);
    }
  }
  EXPECT_EQ(hits_of_key(syn, "pid", sleeper), lats.size());
}

// The older form, onmatch().<synth>(), with onmax().save() on the same
// trigger: the sleeper's saved max is its largest decoded latency.
TEST_F(SyntheticActions, OnmatchAndOnmaxOnOneTrigger) {
  TRACEBED_COVERS("ftracetest: trigger/inter-event/trigger-onmatch-onmax-action-hist.tc");
  std::string name = synth("wakeup_latency", "u64 lat; pid_t pid; char comm[16]");
  Event syn = inst().event("synthetic", name);
  ASSERT_NO_FATAL_FAILURE(wakeup_latency(
      syn, "." + name + "($wakeup_lat,next_pid,next_comm):onmax($wakeup_lat).save(next_comm,prev_pid,prev_prio,prev_comm)"));
  int sleeper = wake(20);
  std::vector<int64_t> lats = expect_latencies(decoded({wakeup(), sw(), syn}), name, "sched_wakeup", sleeper);
  ASSERT_THAT(lats, Not(IsEmpty()));
  auto on_switch = tracefs::read_hist(sw());
  ASSERT_OK(on_switch);
  ASSERT_THAT(on_switch->sections, SizeIs(1));
  EXPECT_THAT(on_switch->sections[0].entries,
              Contains(AllOf(HistKeyEq("next_pid", sleeper),
                             HistSavedThat("max", static_cast<uint64_t>(*std::max_element(lats.begin(), lats.end()))))));
  EXPECT_EQ(hits_of_key(syn, "pid", sleeper), lats.size());
}

// Several hist triggers on sched_switch, two with an onmatch action that
// reads the variable a third one defines (fully qualified), all accepted
// and listed, and the plain one counting every switch to the sleeper.
TEST_F(SyntheticActions, SeveralActionsOnOneEventAreAccepted) {
  TRACEBED_COVERS("ftracetest: trigger/inter-event/trigger-multi-actions-accept.tc");
  std::string name = synth("wakeup_latency", "u64 lat; pid_t pid");
  const std::string lines[] = {
      "hist:keys=next_pid:wakeup_lat=common_timestamp.usecs-$ts0 if " + kNextIsTarget,
      "hist:keys=next_pid:onmatch(sched.sched_wakeup)." + name + "(sched.sched_switch.$wakeup_lat,next_pid) if " +
          kNextIsTarget,
      "hist:keys=next_pid:onmatch(sched.sched_wakeup)." + name + "(sched.sched_switch.$wakeup_lat,prev_pid) if " +
          kNextIsTarget,
      "hist:keys=next_pid if " + kNextIsTarget,
  };
  ASSERT_OK(triggers().add(wakeup(), "hist:keys=pid:ts0=common_timestamp.usecs if " + kIsTarget));
  for (const std::string& line : lines) ASSERT_OK(triggers().add(sw(), line));
  auto listed = sw().triggers();
  ASSERT_OK(listed);
  EXPECT_THAT(*listed, SizeIs(4));
  ASSERT_OK(wakeup().enable());
  ASSERT_OK(sw().enable());
  int sleeper = wake(10);
  uint64_t switch_ins = 0;
  for (const DecodedEvent& e : decoded(sw())) switch_ins += int_field(e, "next_pid") == sleeper;
  auto hist = tracefs::read_hist(sw());
  ASSERT_OK(hist);
  ASSERT_THAT(hist->sections, SizeIs(4));
  auto plain = std::find_if(hist->sections.begin(), hist->sections.end(), [](const HistSection& s) {
    return s.trigger.actions().empty() && s.trigger.vars().empty();
  });
  ASSERT_NE(plain, hist->sections.end());
  EXPECT_EQ(hits_of_key(*plain, "next_pid", sleeper), switch_ins);
  EXPECT_GE(switch_ins, 10u) << "the sleeper was woken 10 times";
}

// onmatch() takes only trace() and <synth>(): snapshot() and save() are
// refused with the error under the action's name (ACTION_MISMATCH).
TEST_F(SyntheticActions, SnapshotAndSaveAreRefusedUnderOnmatch) {
  TRACEBED_COVERS("ftracetest: trigger/inter-event/trigger-action-hist-xfail.tc");
  TRACEBED_REQUIRE(features::error_log);
  struct Row {
    std::string line, action;
    std::optional<Feature> needs;
  };
  const Row rows[] = {
      {"hist:keys=comm:onmatch(sched.sched_wakeup).snapshot()", "snapshot()", kSnapshotAction},
      {"hist:keys=comm:onmatch(sched.sched_wakeup).save(comm,prio)", "save(comm,prio)", std::nullopt},
  };
  for (const Row& row : rows) {
    SCOPED_TRACE(row.line);
    if (row.needs && !features().has(*row.needs)) continue;
    ASSERT_OK(inst().clear_error_log());
    auto err = waking().files().try_write("trigger", row.line, true);
    ASSERT_OK(err);
    EXPECT_EQ(*err, EINVAL);
    auto log = inst().error_log();
    ASSERT_OK(log);
    ASSERT_THAT(*log, SizeIs(1));
    EXPECT_EQ(log->back().location, "hist:sched:sched_waking");
    EXPECT_EQ(log->back().error, "Handler doesn't support action");
    EXPECT_EQ(log->back().command, row.line);
    EXPECT_EQ(log->back().caret, row.line.find(row.action)) << log->back().str();
    auto listed = waking().triggers();
    ASSERT_OK(listed);
    EXPECT_THAT(*listed, IsEmpty());
  }
}

// An onmatch parameter naming a field of the matched event
// (sched.sched_waking.prio) makes the kernel add a field variable to that
// event's hist, shown as synthetic_prio=prio, and take it away with the
// trigger. With ts0 on both sched_waking and sched_wakeup, $ts0 must be
// qualified (sched.sched_wakeup.$ts0). The synthetic event's prio is the
// sleeper's decoded sched_waking prio.
class FieldVariable : public SyntheticActions, public ::testing::WithParamInterface<bool> {};

TEST_P(FieldVariable, IsAddedWithTheTriggerAndRemovedWithIt) {
  if (GetParam()) {
    TRACEBED_COVERS("ftracetest: trigger/inter-event/trigger-fully-qualified-var-ref.tc");
  } else {
    TRACEBED_COVERS("ftracetest: trigger/inter-event/trigger-field-variable-support.tc");
  }
  bool qualified = GetParam();
  std::string name = synth("wakeup_latency", "u64 lat; pid_t pid; int prio; char comm[16]");
  Event syn = inst().event("synthetic", name);
  std::string start = "hist:keys=comm:ts0=common_timestamp.usecs if " + kIsTarget;
  ASSERT_OK(triggers().add(waking(), start));
  if (qualified) ASSERT_OK(triggers().add(wakeup(), start));
  ASSERT_OK(triggers().add(syn, "hist:keys=pid,prio,comm:vals=lat:sort=pid,prio"));
  ASSERT_OK(triggers().add(sw(), "hist:keys=next_comm:wakeup_lat=common_timestamp.usecs-" +
                                     std::string(qualified ? "sched.sched_wakeup.$ts0" : "$ts0") +
                                     ":onmatch(sched.sched_waking)." + name +
                                     "($wakeup_lat,next_pid,sched.sched_waking.prio,next_comm) if " + kNextIsTarget));
  // The kernel adds it as a hist of its own on sched_waking when the
  // existing one lacks the field.
  auto waking_spec = [&] {
    auto h = waking().files().read("hist");
    EXPECT_OK(h);
    return h ? *h : std::string();
  };
  EXPECT_THAT(waking_spec(), HasSubstr("synthetic_prio=prio"));
  for (const Event& ev : {waking(), sw(), syn}) ASSERT_OK(ev.enable());
  int sleeper = wake(10);
  std::vector<DecodedEvent> events = decoded({waking(), sw(), syn});
  std::set<int64_t> waking_prios, traced_prios;
  for (const DecodedEvent& e : events) {
    if (e.name == "sched_waking" && int_field(e, "pid") == sleeper) waking_prios.insert(int_field(e, "prio"));
    if (e.name == name && int_field(e, "pid") == sleeper) traced_prios.insert(int_field(e, "prio"));
  }
  ASSERT_THAT(traced_prios, Not(IsEmpty())) << "no " << name << " for the sleeper " << sleeper;
  EXPECT_EQ(traced_prios, waking_prios);
  auto hist = tracefs::read_hist(syn);
  ASSERT_OK(hist);
  ASSERT_THAT(hist->sections, SizeIs(1));
  EXPECT_THAT(hist->sections[0].entries, Contains(HistKeyEq("pid", sleeper)));

  ASSERT_OK(triggers().remove_last());
  EXPECT_THAT(waking_spec(), Not(HasSubstr("synthetic_prio=prio")));
}

INSTANTIATE_TEST_SUITE_P(Synthetic, FieldVariable, ::testing::Bool(),
                         [](const ::testing::TestParamInfo<bool>& p) { return p.param ? "Qualified" : "Plain"; });

}  // namespace
}  // namespace tracebed::suites
