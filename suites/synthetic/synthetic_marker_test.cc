// Triggers on ftrace:print, the trace_marker event: a snapshot taken by a
// marker write, and synthetic events fed from markers (marker to marker,
// kernel event to marker), each latency checked against the decoded
// records of the events it was computed from.
#include <cstdint>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "suites/synthetic/synthetic_actions.h"

namespace tracebed::suites {
namespace {

// The numbers of the lines of `text` carrying ">N<" after `tag`, in order.
std::vector<int> tagged_numbers(const std::string& text, const std::string& tag) {
  std::vector<int> out;
  for (size_t at = text.find(tag + " >"); at != std::string::npos; at = text.find(tag + " >", at + 1))
    out.push_back(std::stoi(text.substr(at + tag.size() + 2)));
  return out;
}

class MarkerTriggers : public SyntheticActions {
 protected:
  void SetUpTest() override { TRACEBED_REQUIRE(features::marker_triggers); }
  Event print() { return inst().event("ftrace", "print"); }
  // A guest shell runs `body` `n` times ($i from 0) and says its pid: the
  // markers it writes with the builtin echo are all its own.
  int shell_loop(int n, const std::string& body) {
    std::string out = sh("sh -c 'm=" + inst().path("trace_marker") + "; i=0; while [ $i -lt " + std::to_string(n) +
                         " ]; do " + body + "; i=$((i+1)); done; echo $$'");
    return std::stoi(out);
  }
};

TRACEBED_SUITE_REQUIRES(MarkerSnapshot, features::marker_triggers, features::snapshot_trigger);

// trigger-trace-marker-snapshot.tc: `snapshot` on ftrace:print swaps the
// buffers at every marker, after the marker is in: the snapshot ends up with
// the even markers and the live buffer with the odd ones, each in order.
TEST_F(MarkerSnapshot, SnapshotTriggerSwapsAtEveryMarker) {
  TRACEBED_COVERS("ftracetest: trigger/trigger-trace-marker-snapshot.tc");
  constexpr int kMarkers = 40;
  ASSERT_OK(inst().event("ftrace", "print").add_trigger(Trigger::snapshot()));
  for (int i = 1; i <= kMarkers; ++i) ASSERT_OK(inst().write_marker("tb snap >" + std::to_string(i) + "<"));
  std::vector<int> odd, even;
  for (int i = 1; i <= kMarkers; ++i) (i % 2 ? odd : even).push_back(i);
  auto snapshot = inst().read_snapshot();
  ASSERT_OK(snapshot);
  EXPECT_THAT(tagged_numbers(*snapshot, "tb snap"), ElementsAreArray(even)) << *snapshot;
  auto trace = inst().files().read("trace");
  ASSERT_OK(trace);
  EXPECT_THAT(tagged_numbers(*trace, "tb snap"), ElementsAreArray(odd)) << *trace;
}

// trigger-trace-marker-synthetic.tc: a "start" marker saves ts0, the "end"
// marker of the same pid generates the synthetic event with the time
// between them. N pairs, with more work between the later ones: N events,
// each latency the one between its pair's decoded markers.
TEST_F(MarkerTriggers, MarkerPairsGenerateTheirLatency) {
  TRACEBED_COVERS("ftracetest: trigger/trigger-trace-marker-synthetic.tc");
  constexpr int kPairs = 30;
  std::string name = synth("marker_lat", "u64 lat");
  Event syn = inst().event("synthetic", name);
  ASSERT_OK(triggers().add(print(), "hist:keys=common_pid:ts0=common_timestamp.usecs if buf == \"start\""));
  ASSERT_OK(triggers().add(print(), "hist:keys=common_pid:lat=common_timestamp.usecs-$ts0:"
                                    "onmatch(ftrace.print)." + name + "($lat) if buf == \"end\""));
  ASSERT_OK(triggers().add(syn, "hist:keys=common_pid,lat:sort=lat"));
  ASSERT_OK(syn.enable());  // ftrace:print has no enable: markers are always on
  int pid = shell_loop(kPairs, "echo -n start > $m; j=0; while [ $j -lt $((i*20)) ]; do j=$((j+1)); done; "
                               "echo -n end > $m");

  std::vector<int64_t> expected;
  std::optional<uint64_t> start;
  std::vector<DecodedEvent> events = of_pid(decoded({print(), syn}), pid);
  for (const DecodedEvent& e : named(events, "print")) {
    // The kernel ends a marker without a newline with one.
    std::string buf = str_field(e, "buf");
    if (buf == "start" || buf == "start\n") start = e.ts;
    if ((buf == "end" || buf == "end\n") && start) expected.push_back(usecs(e.ts) - usecs(*start));
  }
  ASSERT_THAT(expected, SizeIs(kPairs)) << "the shell's markers";
  EXPECT_THAT(int_fields(named(events, name), "lat"), ElementsAreArray(expected));

  auto hist = read_hist(print());
  ASSERT_OK(hist);
  ASSERT_THAT(hist->sections, SizeIs(2));
  EXPECT_EQ(hits_of_key(hist->sections[0], "common_pid", pid), uint64_t{kPairs}) << "start markers";
  EXPECT_EQ(hits_of_key(hist->sections[1], "common_pid", pid), uint64_t{kPairs}) << "end markers";
  auto syn_hist = read_hist(syn);
  ASSERT_OK(syn_hist);
  ASSERT_THAT(syn_hist->sections, SizeIs(1));
  EXPECT_EQ(hits_of_key(syn_hist->sections[0], "common_pid", pid), uint64_t{kPairs});
}

// trigger-trace-marker-synthetic-kernel.tc: sched_waking saves ts0 per pid,
// the woken task's next marker generates the synthetic event with the time
// since its waking. The shell waits for a `true` child, is woken by its
// exit, and writes a marker: one event per marker after a waking (ts0 is
// read once), its latency from a decoded waking to the decoded marker.
TEST_F(MarkerTriggers, KernelEventToMarkerLatency) {
  TRACEBED_COVERS("ftracetest: trigger/trigger-trace-marker-synthetic-kernel.tc");
  constexpr int kMarkers = 20;
  std::string name = synth("waking_marker_lat", "u64 lat");
  Event syn = inst().event("synthetic", name);
  ASSERT_OK(triggers().add(waking(), "hist:keys=pid:ts0=common_timestamp.usecs"));
  ASSERT_OK(triggers().add(print(), "hist:keys=common_pid:lat=common_timestamp.usecs-$ts0:"
                                    "onmatch(sched.sched_waking)." + name + "($lat)"));
  for (const Event& ev : {waking(), syn}) ASSERT_OK(ev.enable());
  int pid = shell_loop(kMarkers, "/bin/true; echo tb > $m");

  // Each synthetic event follows its marker; its latency is from one of
  // the wakings since the marker before last. Not only since the last:
  // a waking's record takes its time stamp before its trigger sets ts0,
  // so under load a waking stamped before a marker can set ts0 after that
  // marker read it (once), and the next marker then measures from it.
  std::vector<uint64_t> wakings, marker_ts;
  size_t events = 0;
  bool after_marker = false;
  for (const DecodedEvent& e : decoded({waking(), print(), syn})) {
    if (e.name == "sched_waking" && int_field(e, "pid") == pid) wakings.push_back(e.ts);
    if (e.pid != pid) continue;
    if (e.name == "print") {
      marker_ts.push_back(e.ts);
      after_marker = true;
      continue;
    }
    if (e.name != name) continue;
    ++events;
    ASSERT_TRUE(after_marker) << "synthetic event " << events << " follows no marker of its own";
    after_marker = false;
    const uint64_t marker = marker_ts.back();
    const uint64_t since = marker_ts.size() >= 3 ? marker_ts[marker_ts.size() - 3] : 0;
    std::set<int64_t> lats;
    for (uint64_t w : wakings)
      if (w > since && w < marker) lats.insert(usecs(marker) - usecs(w));
    EXPECT_THAT(lats, Contains(int_field(e, "lat"))) << "marker " << marker_ts.size() << ": a latency from none of "
                                                     << "the wakings since the marker before last";
  }
  EXPECT_EQ(marker_ts.size(), size_t{kMarkers});
  // A child that exits before the shell waits wakes nobody: most do not.
  EXPECT_GE(events, size_t{kMarkers / 2}) << "markers after a waking of the shell";
  EXPECT_LE(events, size_t{kMarkers});
}

}  // namespace
}  // namespace tracebed::suites
