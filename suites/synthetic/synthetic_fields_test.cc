// ftracetest trigger/inter-event cases about what synthetic events carry
// and chain: a latency made of two synthetic events' variables
// (combined-hist), a dynamic string saved at exec (dynstring), a stack
// saved at sched_switch (synthetic-event-stack and -legacy), and
// onchange().snapshot(). Each generated value is checked against the
// events decoded beside it or against /proc.
#include <cstdint>
#include <map>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "framework/tracefs/hist_file.h"
#include "framework/tracefs/tracefs_text.h"
#include "suites/synthetic/synthetic_actions.h"

namespace tracebed::suites {
namespace {

const Feature kExecEvent = Feature::event("sched", "sched_process_exec");
const Feature kReworkedParser = Feature::readme("synthetic_events parser errors", "' >> synthetic_events");
const Feature kCommonStacktrace =
    Feature::readme("common_stacktrace", "can be any field, or the special string 'common_stacktrace'");
const Feature kStackFields = Feature::readme("synthetic stacktrace fields", "long[] stack' >> synthetic_events");

// waking_latency from sched_waking to sched_wakeup, wakeup_latency from
// sched_wakeup to sched_switch, and a third event traced from
// wakeup_latency's own hist whose lat is $waking_lat+$wakeup_lat: the
// sum of the two decoded events before it.
TEST_F(SyntheticActions, CombinedLatencyIsTheSumOfBoth) {
  TRACEBED_COVERS("ftracetest: trigger/inter-event/trigger-inter-event-combined-hist.tc");
  std::string waking_name = synth("waking_latency", "u64 lat; pid_t pid");
  std::string wakeup_name = synth("wakeup_latency", "u64 lat; pid_t pid");
  std::string sum_name = synth("waking_plus_wakeup_latency", "u64 lat; pid_t pid");
  Event waking_syn = inst().event("synthetic", waking_name);
  Event wakeup_syn = inst().event("synthetic", wakeup_name);
  Event sum_syn = inst().event("synthetic", sum_name);
  ASSERT_OK(triggers().add(waking(), "hist:keys=pid:ts0=common_timestamp.usecs if " + kIsTarget));
  ASSERT_OK(triggers().add(wakeup(), "hist:keys=pid:waking_lat=common_timestamp.usecs-$ts0:onmatch(sched.sched_waking)." +
                                         waking_name + "($waking_lat,pid) if " + kIsTarget));
  ASSERT_OK(triggers().add(waking_syn, "hist:keys=pid,lat:sort=pid,lat"));
  ASSERT_OK(triggers().add(wakeup(), "hist:keys=pid:ts1=common_timestamp.usecs if " + kIsTarget));
  ASSERT_OK(triggers().add(sw(), "hist:keys=next_pid:wakeup_lat=common_timestamp.usecs-$ts1:onmatch(sched.sched_wakeup)." +
                                     wakeup_name + "($wakeup_lat,next_pid) if " + kNextIsTarget));
  ASSERT_OK(triggers().add(wakeup_syn, "hist:keys=pid,lat:sort=pid,lat:ww_lat=$waking_lat+$wakeup_lat:onmatch(synthetic." +
                                           wakeup_name + ")." + sum_name + "($ww_lat,pid)"));
  ASSERT_OK(triggers().add(sum_syn, "hist:keys=pid,lat:sort=pid,lat"));
  for (const Event& ev : {waking_syn, wakeup_syn, sum_syn}) ASSERT_OK(ev.enable());
  int sleeper = wake(10);
  std::map<std::string, int64_t> last;  // synthetic event -> the sleeper's last lat
  size_t sums = 0;
  for (const DecodedEvent& e : decoded({waking_syn, wakeup_syn, sum_syn})) {
    if (int_field(e, "pid") != sleeper) continue;
    if (e.name == sum_name) {
      ++sums;
      ASSERT_TRUE(last.count(waking_name) && last.count(wakeup_name)) << ::testing::PrintToString(e);
      EXPECT_EQ(int_field(e, "lat"), last[waking_name] + last[wakeup_name]) << ::testing::PrintToString(e);
    }
    last[e.name] = int_field(e, "lat");
  }
  EXPECT_GE(sums, 1u) << "no " << sum_name << " for the sleeper " << sleeper;
  EXPECT_EQ(hits_of_key(sum_syn, "pid", sleeper), sums);
}

// A char[] field takes the string variable saved at exec: each run's exec
// filename and the time from its exec to its exit. The runs exec symlinks
// to the probe target as ./NAME, so the filename is 3 to 257 characters
// long (NAME up to NAME_MAX, 255), 4 runs of each length. A string
// variable keeps STR_VAR_LEN_MAX - 1 = 255 characters (its NUL makes 256,
// kernel/trace/trace_synth.h; trace_events_hist.c hist_trigger_elt_update
// copies it with strscpy): a longer filename arrives cut there.
TEST_F(SyntheticActions, DynamicStringCarriesTheExecFilename) {
  TRACEBED_COVERS("ftracetest: trigger/inter-event/trigger-synthetic-event-dynstring.tc");
  TRACEBED_REQUIRE(features::hist_dynamic_strings);
  TRACEBED_REQUIRE(kReworkedParser);
  TRACEBED_REQUIRE(kExecEvent);
  constexpr size_t kVarMax = 255;
  constexpr int kRounds = 4;
  const std::string dir = "/tmp/" + unique("dynstr");
  std::vector<std::string> names;
  std::string links = "mkdir -p " + dir + " && cd " + dir;
  for (size_t len : {3, 15, 16, 17, 63, 64, 65, 127, 128, 129, 254, 255, 256, 257}) {
    std::string name = std::to_string(len);
    name += std::string(len - 2 - name.size(), 'x');  // "./" + name is len long
    names.push_back(name);
    links += " && ln -sf " + std::string(kProbeTarget) + " " + name;
  }
  sh(links);

  std::string name = synth("ping_test_latency", "u64 lat; char filename[]");
  Event syn = inst().event("synthetic", name);
  Event exec = inst().event("sched", "sched_process_exec");
  Event exit = inst().event("sched", "sched_process_exit");
  ASSERT_OK(triggers().add(exec, "hist:key=pid:filenamevar=filename:ts0=common_timestamp.usecs"));
  // No comm filter (the .tc's `if comm == "ping"`): each run's comm is its
  // name. The runs are told apart by pid.
  ASSERT_OK(triggers().add(exit, "hist:key=pid:lat=common_timestamp.usecs-$ts0:onmatch(sched.sched_process_exec)." +
                                     name + "($lat,$filenamevar)"));
  ASSERT_OK(triggers().add(syn, "hist:keys=filename,lat:sort=filename,lat"));
  for (const Event& ev : {exec, exit, syn}) ASSERT_OK(ev.enable());
  std::string script = "cd " + dir + " && r=0; while [ $r -lt " + std::to_string(kRounds) + " ]; do";
  for (const std::string& n : names) script += " ./" + n + " pid;";
  script += " r=$((r+1)); done";
  std::istringstream out(sh(script));
  std::vector<int> pids;
  int pid = 0;
  for (std::string word; out >> word;)
    if (word == "pid" && out >> pid) pids.push_back(pid);
  ASSERT_THAT(pids, SizeIs(names.size() * kRounds)) << "one pid line per run";

  std::map<int, std::vector<DecodedEvent>> of_run;
  for (DecodedEvent& e : decoded({exec, exit, syn})) of_run[e.pid].push_back(std::move(e));
  std::map<std::string, uint64_t> runs_per_filename;
  for (size_t i = 0; i < pids.size(); ++i) {
    const std::string path = "./" + names[i % names.size()];
    SCOPED_TRACE(std::to_string(path.size()) + " characters: " + path);
    std::optional<DecodedEvent> exec_ev, exit_ev;
    std::vector<DecodedEvent> traced;
    for (const DecodedEvent& e : of_run[pids[i]]) {
      if (e.name == "sched_process_exec") exec_ev = e;
      if (e.name == "sched_process_exit") exit_ev = e;
      if (e.name == name) traced.push_back(e);
    }
    ASSERT_TRUE(exec_ev && exit_ev) << "run " << pids[i] << ": its exec and exit were not decoded";
    EXPECT_EQ(str_field(*exec_ev, "filename"), path);
    ASSERT_THAT(traced, SizeIs(1)) << "one " << name << " for run " << pids[i];
    EXPECT_EQ(str_field(traced[0], "filename"), path.substr(0, kVarMax));
    EXPECT_EQ(int_field(traced[0], "lat"), usecs(exit_ev->ts) - usecs(exec_ev->ts));
    runs_per_filename[path.substr(0, kVarMax)]++;
  }
  // The hist on the synthetic event: each filename key counts its runs.
  auto hist = tracefs::read_hist(syn);
  ASSERT_OK(hist);
  ASSERT_THAT(hist->sections, SizeIs(1));
  std::map<std::string, uint64_t> shown;
  for (const auto& entry : hist->sections[0].entries) {
    const tracefs::HistKey* key = entry.key("filename");
    ASSERT_NE(key, nullptr);
    if (runs_per_filename.count(key->text)) shown[key->text] += entry.hitcount();
  }
  EXPECT_EQ(shown, runs_per_filename);
}

// A stack saved at sched_switch (common_stacktrace, or stacktrace before
// 6.9) is traced in an unsigned long[] field: trace prints it as "=>"
// frames, the scheduler's among them, and every event trace shows is
// decoded from the pages too.
class SyntheticStack : public SyntheticActions, public ::testing::WithParamInterface<bool> {};

TEST_P(SyntheticStack, SavedStackIsTracedWithTheScheduler) {
  bool legacy = GetParam();
  if (legacy) {
    TRACEBED_COVERS("ftracetest: trigger/inter-event/trigger-synthetic-event-stack-legacy.tc");
  } else {
    TRACEBED_COVERS("ftracetest: trigger/inter-event/trigger-synthetic-event-stack.tc");
  }
  TRACEBED_REQUIRE(legacy ? kStackFields : kCommonStacktrace);
  TRACEBED_REQUIRE(features::hist_trace_action);
  std::string name = synth("wake_lat", "pid_t pid; u64 delta; unsigned long[] stack;");
  Event syn = inst().event("synthetic", name);
  std::string st = legacy ? "stacktrace" : "common_stacktrace";
  ASSERT_OK(triggers().add(sw(), "hist:keys=next_pid:ts=common_timestamp.usecs,st=" + st +
                                     "  if prev_state == 1||prev_state == 2"));
  ASSERT_OK(triggers().add(sw(), "hist:keys=prev_pid:delta=common_timestamp.usecs-$ts,s=$st:onmax($delta).trace(" +
                                     name + ",prev_pid,$delta,$s)"));
  ASSERT_OK(syn.enable());
  run_target({"sleep", "20", "5"});
  ASSERT_OK(inst().set_tracing_on(false));
  auto trace = inst().read_trace();
  ASSERT_OK(trace);
  size_t listed = 0, frames = 0, sched_frames = 0;
  for (const std::string& line : trace_lines(*trace)) {
    listed += line.find(" " + name + ":") != std::string::npos;
    std::string_view l = tracefs::trim(line);
    if (!l.starts_with("=>")) continue;
    ++frames;
    sched_frames += l.find("sched") != std::string_view::npos;
  }
  EXPECT_GE(listed, 1u) << *trace;
  EXPECT_GE(frames, listed) << "each event has a stack";
  EXPECT_GE(sched_frames, 1u) << "no scheduler frame in\n" << *trace;
  EXPECT_THAT(decoded(syn), SizeIs(listed));
}

INSTANTIATE_TEST_SUITE_P(Synthetic, SyntheticStack, ::testing::Bool(),
                         [](const ::testing::TestParamInfo<bool>& p) { return p.param ? "Legacy" : "CommonStacktrace"; });

// onchange($newprio).snapshot(): a change of the probe target's prio (nice
// 0, then the nice /proc shows after renice) saves the new prio and takes
// a snapshot holding the target's wakings.
TEST_F(SyntheticActions, OnchangeSnapshotKeepsTheBufferOfTheChange) {
  TRACEBED_COVERS("ftracetest: trigger/inter-event/trigger-snapshot-action-hist.tc");
  TRACEBED_REQUIRE(features::snapshot);
  TRACEBED_REQUIRE(features::hist_onchange);
  TRACEBED_REQUIRE(kSnapshotAction);
  ASSERT_OK(inst().enable_system("sched", true));
  ASSERT_OK(triggers().add(waking(), "hist:keys=comm:newprio=prio:onchange($newprio).save(comm,prio):"
                                     "onchange($newprio).snapshot() if " + kIsTarget));
  wake(3);
  std::string out = sh("renice -n 1 -p $$ > /dev/null; echo nice $(awk '{print $19}' /proc/$$/stat); exec " +
                       std::string(kProbeTarget) + " wake 3");
  int nice = -100;
  std::istringstream(out.substr(out.find("nice ") + 5)) >> nice;
  ASSERT_GT(nice, 0) << "renice did not take: " << out;
  ASSERT_OK(inst().set_tracing_on(false));
  auto hist = tracefs::read_hist(waking());
  ASSERT_OK(hist);
  ASSERT_THAT(hist->sections, SizeIs(1));
  // include/linux/sched/prio.h: a normal task's prio is 120 + nice.
  const uint64_t prio = static_cast<uint64_t>(120 + nice);
  EXPECT_THAT(hist->sections[0].entries, Contains(HistSavedThat("changed", prio)));
  ASSERT_TRUE(hist->sections[0].snapshot.has_value()) << "the hist says no snapshot was taken";
  EXPECT_EQ(hist->sections[0].snapshot->handler, "onchange($newprio)");
  EXPECT_EQ(hist->sections[0].snapshot->value, prio);
  EXPECT_THAT(hist->sections[0].snapshot->key, HasSubstr("comm: " + kComm));
  auto snapshot = inst().read_snapshot();
  ASSERT_OK(snapshot);
  EXPECT_THAT(*snapshot, HasSubstr("comm=" + kComm));
  EXPECT_THAT(*snapshot, HasSubstr("prio=120")) << "the wakings before the change";
}

}  // namespace
}  // namespace tracebed::suites
