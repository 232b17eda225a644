// The fixture of the synthetic suite's action tests: hand-written
// synthetic events and hist triggers (synthetic_raw.h) in a fresh
// instance, the probe target's waker and sleeper as the workload, and the
// check of generated latencies against the decoded sched events.
#pragma once

#include <algorithm>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "framework/tracefs/hist_file.h"
#include "suites/synthetic/synthetic_raw.h"

namespace tracebed::suites {

// The probe target's name as the sched events carry it (TASK_COMM_LEN - 1).
inline const std::string kComm = "tracebed-probe-";
inline const std::string kIsTarget = "comm==\"" + kComm + "\"";
inline const std::string kNextIsTarget = "next_comm==\"" + kComm + "\"";
inline const Feature kSnapshotAction = Feature::readme("hist snapshot() action", "snapshot()");

class SyntheticActions : public TracefsTest {
 public:
  SyntheticActions() : TracefsTest({features::synthetic_events, features::hist_triggers, features::sched_events}) {}

 protected:
  void TearDown() override {
    triggers_.reset();
    synths_.clear();
    TracefsTest::TearDown();
  }
  Event waking() { return inst().event("sched", "sched_waking"); }
  Event wakeup() { return inst().event("sched", "sched_wakeup"); }
  Event sw() { return inst().event("sched", "sched_switch"); }

  // A synthetic event made by hand, removed after the test.
  std::string synth(const std::string& base, const std::string& fields) {
    std::string name = unique(base);
    EXPECT_OK(fs().top().files().append("synthetic_events", name + " " + fields));
    synths_.emplace_back(new RemoveSynthAtEnd{fs().top().files(), name, &inst().files()});
    return name;
  }
  RawTriggers& triggers() { return *triggers_; }

  // The .tc's recipe: sched_wakeup saves ts0 for the probe target's
  // tasks, sched_switch to one of them runs onmatch(sched.sched_wakeup)
  // `action` on $wakeup_lat, the synthetic event `syn` gets a hist; all
  // enabled.
  void wakeup_latency(const Event& syn, const std::string& action) {
    ASSERT_OK(triggers().add(wakeup(), "hist:keys=pid:ts0=common_timestamp.usecs if " + kIsTarget));
    ASSERT_OK(triggers().add(sw(), "hist:keys=next_pid:wakeup_lat=common_timestamp.usecs-$ts0:"
                                   "onmatch(sched.sched_wakeup)" + action + " if " + kNextIsTarget));
    ASSERT_OK(triggers().add(syn, "hist:keys=comm,pid,lat:wakeup_lat=lat:sort=lat"));
    for (const Event& ev : {wakeup(), sw(), syn}) ASSERT_OK(ev.enable());
  }

  // The probe target wakes its child `count` times; the child's pid.
  int wake(int count) {
    ProbeRun probe = run_target({"wake", std::to_string(count)});
    EXPECT_THAT(probe.lines_of("wake"), SizeIs(count));
    return probe.lines_of("wake").empty() ? -1 : std::stoi(probe.lines_of("wake")[0][1]);
  }

 private:
  std::vector<std::unique_ptr<RemoveSynthAtEnd>> synths_;
  std::unique_ptr<RawTriggers> triggers_ = std::make_unique<RawTriggers>();
};

// A raw trace clock as common_timestamp.usecs gives it: ns2usecs, rounded
// to the nearest microsecond (kernel/trace/trace.h).
inline int64_t usecs(uint64_t ns) { return static_cast<int64_t>((ns + 500) / 1000); }

// Every `synth` event of `pid` in time-ordered `events`: traced at the
// sched_switch to pid just before it on its CPU, its lat is that switch's
// time minus the last `from` event's (sched_waking or sched_wakeup) of pid,
// each rounded to microseconds first (common_timestamp.usecs is
// ns2usecs). One per switch-in after a `from`: a variable is read once.
// Returns their latencies.
inline std::vector<int64_t> expect_latencies(const std::vector<DecodedEvent>& events, const std::string& synth,
                                      const std::string& from, int64_t pid) {
  std::vector<int64_t> lats;
  std::optional<uint64_t> from_ts;
  size_t switch_ins = 0;
  bool woken = false;
  for (size_t i = 0; i < events.size(); ++i) {
    const DecodedEvent& e = events[i];
    if (e.name == from && int_field(e, "pid") == pid) {
      from_ts = e.ts;
      woken = true;
    }
    if (e.name == "sched_switch" && int_field(e, "next_pid") == pid) {
      switch_ins += woken;
      woken = false;
    }
    if (e.name != synth || int_field(e, "pid") != pid) continue;
    auto sw = std::find_if(events.rbegin() + static_cast<long>(events.size() - i), events.rend(),
                           [&](const DecodedEvent& s) { return s.cpu == e.cpu && s.name == "sched_switch"; });
    if (sw == events.rend() || !from_ts) {
      ADD_FAILURE() << "no sched_switch or " << from << " before " << ::testing::PrintToString(e);
      continue;
    }
    EXPECT_EQ(int_field(*sw, "next_pid"), pid) << ::testing::PrintToString(e);
    EXPECT_EQ(int_field(e, "lat"), usecs(sw->ts) - usecs(*from_ts)) << ::testing::PrintToString(e);
    lats.push_back(int_field(e, "lat"));
  }
  EXPECT_EQ(lats.size(), switch_ins) << "one " << synth << " per switch to " << pid << " after a " << from;
  EXPECT_THAT(lats, Not(IsEmpty())) << "no " << synth << " for pid " << pid;
  return lats;
}

// The hitcount of a hist's entries whose `field` key is `pid`.
inline uint64_t hits_of_key(const HistSection& s, const std::string& field, int64_t pid) {
  uint64_t hits = 0;
  for (const auto& entry : s.entries)
    if (::testing::Matches(HistKeyEq(field, pid))(entry)) hits += entry.hitcount();
  return hits;
}

// The same in the one hist trigger on `ev`.
inline uint64_t hits_of_key(const Event& ev, const std::string& field, int64_t pid) {
  auto hist = tracefs::read_hist(ev);
  EXPECT_OK(hist);
  if (!hist) return 0;
  EXPECT_THAT(hist->sections, SizeIs(1));
  return hist->sections.empty() ? 0 : hits_of_key(hist->sections[0], field, pid);
}

}  // namespace tracebed::suites
