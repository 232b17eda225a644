// ftracetest trigger/ (the non-hist cases) in spirit, in a fresh instance
// per test. sched_process_exec is the trigger event: one per run of the
// probe target, by its own path or by a symlink the filters pick, many
// runs in one guest shell, so that a count or a filter that is off by one
// shows against the pids the shell printed.
#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <functional>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "framework/testing/tracefs_fixture.h"
#include "framework/tracefs/hist_file.h"
#include "framework/tracefs/tracefs_text.h"

namespace tracebed::suites {
namespace {

class Triggers : public TracefsTest {
 public:
  Triggers() : TracefsTest({features::event_triggers, features::sched_events}) {}

 protected:
  tracefs::Event exec() { return inst().event("sched", "sched_process_exec"); }
  tracefs::Event exit_event() { return inst().event("sched", "sched_process_exit"); }

  // The probe target under another path, a symlink made for the test:
  // sched_process_exec's filename is the path exec was given, so a filter
  // on it picks these runs. Call it before adding triggers: its shell's
  // exec must fire none.
  const std::string& marked() {
    if (marked_.empty()) {
      marked_ = "/tmp/" + unique("marked");
      sh("ln -sf " + std::string(kProbeTarget) + " " + marked_);
    }
    return marked_;
  }
  static std::string filename_is(const std::string& path) { return "filename == \"" + path + "\""; }

  // One guest shell runs the probe target `n` times, by the marked path at
  // the indexes in `marked_at`, and says each run's pid, in order. The
  // shell's own exec (sh) comes before the first run.
  std::vector<int> exec_runs(size_t n, const std::set<size_t>& marked_at = {}) {
    if (!marked_at.empty() && marked_.empty()) ADD_FAILURE() << "marked() is made before the triggers";
    std::string script = "p=" + std::string(kProbeTarget) + "; m=" + marked_;
    for (size_t i = 0; i < n; ++i) script += marked_at.count(i) ? "; $m pid" : "; $p pid";
    script += "; :";  // a last command is exec'd in the shell itself, with its pid
    std::istringstream out(sh(script));
    std::vector<int> pids;
    int pid = 0;
    for (std::string word; out >> word;)
      if (word == "pid" && out >> pid) pids.push_back(pid);
    EXPECT_THAT(pids, SizeIs(n)) << "one pid line per run";
    return pids;
  }

  // Rounds of a counted trigger on the marked path: each is four runs, the
  // second by the marked path, and should leave the count at the next of
  // `lefts`; the first `firing` rounds are the ones that act. `round`
  // checks what the round did and puts the state back by hand. Returns
  // every run's pid, in order.
  std::vector<int> counted_rounds(std::initializer_list<uint64_t> lefts, size_t firing,
                                  const std::function<void(const std::vector<int>&, bool fires)>& round) {
    std::vector<int> all;
    size_t n = 0;
    for (uint64_t left : lefts) {
      SCOPED_TRACE("count left " + std::to_string(left));
      std::vector<int> pids = exec_runs(4, {1});
      if (pids.size() != 4) break;  // exec_runs failed the test
      all.insert(all.end(), pids.begin(), pids.end());
      EXPECT_EQ(exec().triggers().value().at(0).count, left);
      round(pids, n++ < firing);
    }
    return all;
  }

  // The records of these tasks, in their order.
  static std::vector<DecodedEvent> of_runs(const std::vector<DecodedEvent>& events, const std::vector<int>& pids) {
    std::set<int> want(pids.begin(), pids.end());
    std::vector<DecodedEvent> out;
    for (const DecodedEvent& e : events)
      if (want.count(e.pid)) out.push_back(e);
    return out;
  }
  static std::vector<int> pids_of(const std::vector<DecodedEvent>& events) {
    std::vector<int> out;
    for (const DecodedEvent& e : events) out.push_back(e.pid);
    return out;
  }

  // A "<stack trace>" block of `trace`: the line it follows (the event
  // that fired it) and its "=>" frames.
  struct Stack {
    std::string after;
    std::vector<std::string> frames;
  };
  static std::vector<Stack> stacks_in(const std::vector<std::string>& lines) {
    std::vector<Stack> out;
    for (size_t i = 0; i < lines.size(); ++i) {
      if (lines[i].find("<stack trace>") == std::string::npos) continue;
      Stack s;
      if (i > 0) s.after = lines[i - 1];
      for (size_t j = i + 1; j < lines.size() && tracefs::trim(lines[j]).starts_with("=>"); ++j)
        s.frames.emplace_back(tracefs::trim(lines[j]));
      out.push_back(std::move(s));
    }
    return out;
  }
  // The exec line of `pid` as trace prints it ("... pid=123 old_pid=123").
  static auto IsExecOf(int pid) {
    return AllOf(HasSubstr("sched_process_exec:"), HasSubstr(" pid=" + std::to_string(pid) + " "));
  }

 private:
  std::string marked_;
};

// trigger-traceonoff.tc: traceoff stops the buffer right after the match.
// Of 20 runs the 8th is by the marked path: the buffer holds exactly the
// first 8 runs' execs, the matching one the last record.
TEST_F(Triggers, TraceoffStopsTheBufferAtTheMatchingEvent) {
  TRACEBED_COVERS("ftracetest: trigger/trigger-traceonoff.tc");
  const std::string m = marked();
  ASSERT_OK(exec().add_trigger(Trigger::traceoff().filter(filename_is(m))));
  ASSERT_OK(exec().enable());
  std::vector<int> pids = exec_runs(20, {7});
  ASSERT_THAT(pids, SizeIs(20));
  EXPECT_FALSE(inst().tracing_on().value());
  std::vector<DecodedEvent> execs = decoded(exec());
  std::vector<std::string> expected(7, std::string(kProbeTarget));
  expected.push_back(m);
  EXPECT_THAT(str_fields(of_runs(execs, pids), "filename"), ElementsAreArray(expected));
  EXPECT_THAT(pids_of(of_runs(execs, pids)), ElementsAreArray(pids.begin(), pids.begin() + 8));
  ASSERT_THAT(execs, Not(IsEmpty()));
  EXPECT_THAT(execs.back(), HasEvent("sched_process_exec", FieldEq("filename", m), FromPid(pids[7])));
}

// traceon starts a stopped buffer at the matching event: of 20 runs, the
// 8th by the marked path, none before it is recorded and each after it
// is. The matching exec itself is not: with tracing off it was written to
// the temporary buffer triggers read (kernel/trace/trace.c
// trace_event_buffer_lock_reserve), which is never recorded.
TEST_F(Triggers, TraceonRestartsTheBuffer) {
  const std::string m = marked();
  ASSERT_OK(inst().set_tracing_on(false));
  ASSERT_OK(exec().add_trigger(Trigger::traceon().filter(filename_is(m))));
  ASSERT_OK(exec().enable());
  std::vector<int> pids = exec_runs(20, {7});
  ASSERT_THAT(pids, SizeIs(20));
  EXPECT_TRUE(inst().tracing_on().value());
  std::vector<DecodedEvent> runs = of_runs(decoded(exec()), pids);
  EXPECT_THAT(pids_of(runs), ElementsAreArray(pids.begin() + 8, pids.end()));
  EXPECT_THAT(runs, Each(HasEvent("sched_process_exec", FieldEq("filename", std::string(kProbeTarget)))));
}

// A count is spent only when the trigger acts, and reads back as count=N:
// traceoff:3 stops the buffer three times (turned on again by hand after
// each), then no more, and the runs after it are all recorded.
TEST_F(Triggers, CountIsSpentAndReadBack) {
  ASSERT_OK(exec().add_trigger(Trigger::traceoff().count(3)));
  auto before = exec().triggers();
  ASSERT_OK(before);
  ASSERT_THAT(*before, SizeIs(1));
  EXPECT_EQ((*before)[0].line, "traceoff:count=3");
  ASSERT_OK(exec().enable());
  std::vector<int> stopped_runs;
  for (uint64_t left : {2u, 1u, 0u}) {
    SCOPED_TRACE("count left " + std::to_string(left));
    ASSERT_OK(inst().set_tracing_on(true));
    std::vector<int> pids = exec_runs(10);
    stopped_runs.insert(stopped_runs.end(), pids.begin(), pids.end());
    EXPECT_FALSE(inst().tracing_on().value());
    EXPECT_EQ(exec().triggers().value().at(0).count, left);
    // Tracing is off: traceoff does nothing and the count stays.
    sh("true");
    EXPECT_EQ(exec().triggers().value().at(0).count, left);
  }
  ASSERT_OK(inst().set_tracing_on(true));
  std::vector<int> pids = exec_runs(30);
  EXPECT_TRUE(inst().tracing_on().value()) << "traceoff:3 fired a fourth time";
  EXPECT_EQ(exec().triggers().value().at(0).line, "traceoff:count=0");
  std::vector<DecodedEvent> execs = decoded(exec());
  EXPECT_THAT(pids_of(of_runs(execs, pids)), ElementsAreArray(pids));
  // Each stop came at the shell's own exec, before its runs.
  EXPECT_THAT(of_runs(execs, stopped_runs), IsEmpty());
}

// trigger-eventonoff.tc: enable_event arms the target (soft mode, "0*")
// and turns it on when the trigger fires, once (count 1): at the shell's
// exec, so the exit of every one of 30 runs is recorded, and the trigger
// reads back count=0.
TEST_F(Triggers, EnableEventTurnsAnotherEventOn) {
  TRACEBED_COVERS("ftracetest: trigger/trigger-eventonoff.tc");
  tracefs::Event exit = exit_event();
  ASSERT_OK(exec().add_trigger(Trigger::enable_event("sched", "sched_process_exit").count(1)));
  EXPECT_EQ(exit.enable_state().value(), "0*");
  // No exec event enabled: the trigger still fires (soft mode).
  std::vector<int> pids = exec_runs(30);
  EXPECT_THAT(exit.enable_state().value(), HasSubstr("1"));
  EXPECT_EQ(exec().triggers().value().at(0).count, 0u);
  EXPECT_THAT(pids_of(of_runs(decoded(exit), pids)), ElementsAreArray(pids));
}

// disable_event turns another event off at the matching event: of 20
// runs, the 10th by the marked path, the exits of the 9 before it are all
// recorded and none from it on.
TEST_F(Triggers, DisableEventTurnsAnotherEventOff) {
  const std::string m = marked();
  tracefs::Event exit = exit_event();
  ASSERT_OK(exit.enable());
  ASSERT_OK(exec().add_trigger(Trigger::disable_event("sched", "sched_process_exit").filter(filename_is(m))));
  std::vector<int> pids = exec_runs(20, {9});
  ASSERT_THAT(pids, SizeIs(20));
  EXPECT_THAT(pids_of(of_runs(decoded(exit), pids)), ElementsAreArray(pids.begin(), pids.begin() + 9));
}

// Each counted trigger spends its count exactly N times and then does
// nothing. A run of four, the second by the marked path the trigger's
// filter picks, is one firing; between runs the test puts the state back
// by hand, so that every firing acts (enable_event and disable_event only
// count a firing that changes the event's state).

// enable_event:...:3 arms the exit event three times (turned off by hand
// after each); the fourth marked run finds the count spent.
TEST_F(Triggers, EnableEventCountArmsTheEventExactlyNTimes) {
  const std::string m = marked();
  tracefs::Event exit = exit_event();
  ASSERT_OK(exec().add_trigger(
      Trigger::enable_event("sched", "sched_process_exit").count(3).filter(filename_is(m))));
  ASSERT_EQ(exit.enable_state().value(), "0*");
  std::vector<int> recorded;
  std::vector<int> all = counted_rounds({2, 1, 0, 0}, 3, [&](const std::vector<int>& pids, bool fires) {
    if (fires) recorded.insert(recorded.end(), pids.begin() + 1, pids.end());
    EXPECT_EQ(exit.enable_state().value(), fires ? "1*" : "0*");
    EXPECT_OK(exit.disable());
    EXPECT_EQ(exit.enable_state().value(), "0*");
  });
  EXPECT_THAT(pids_of(of_runs(decoded(exit), all)), ElementsAreArray(recorded))
      << "the exits from each marked run on, in the three rounds that fired";
}

// disable_event:...:2 turns the exit event off twice (on again by hand
// after each); in the third round every exit is there.
TEST_F(Triggers, DisableEventCountTurnsTheEventOffExactlyNTimes) {
  const std::string m = marked();
  tracefs::Event exit = exit_event();
  ASSERT_OK(exit.enable());
  ASSERT_OK(exec().add_trigger(
      Trigger::disable_event("sched", "sched_process_exit").count(2).filter(filename_is(m))));
  ASSERT_EQ(exit.enable_state().value(), "1*");
  std::vector<int> recorded;
  std::vector<int> all = counted_rounds({1, 0, 0}, 2, [&](const std::vector<int>& pids, bool fires) {
    recorded.insert(recorded.end(), pids.begin(), fires ? pids.begin() + 1 : pids.end());
    EXPECT_EQ(exit.enable_state().value(), fires ? "0*" : "1*");
    EXPECT_OK(exit.enable());
  });
  EXPECT_THAT(pids_of(of_runs(decoded(exit), all)), ElementsAreArray(recorded))
      << "the exits before each marked run, then every exit once the count is spent";
}

// traceon:2 starts the stopped buffer twice (stopped by hand after each);
// the third marked run leaves it off. The runs after each start are
// recorded, and nothing of the third round is.
TEST_F(Triggers, TraceonCountStartsTheBufferExactlyNTimes) {
  const std::string m = marked();
  ASSERT_OK(inst().set_tracing_on(false));
  ASSERT_OK(exec().add_trigger(Trigger::traceon().count(2).filter(filename_is(m))));
  ASSERT_OK(exec().enable());
  std::vector<int> recorded;
  std::vector<int> all = counted_rounds({1, 0, 0}, 2, [&](const std::vector<int>& pids, bool fires) {
    // The marked exec itself went to the temporary buffer with tracing off.
    if (fires) recorded.insert(recorded.end(), pids.begin() + 2, pids.end());
    EXPECT_EQ(inst().tracing_on().value(), fires);
    EXPECT_OK(inst().set_tracing_on(false));
  });
  EXPECT_THAT(pids_of(of_runs(decoded(exec()), all)), ElementsAreArray(recorded));
}

// snapshot:3 swaps the live and snapshot buffers three times, and a swap
// keeps both buffers' contents (trace_snapshot.c update_max_tr): with a
// marker written before each of four marked runs, the swaps leave rounds
// 1 and 3 in the snapshot and 2 and 4 live. A fourth swap would leave
// 2 and 4 in the snapshot, a count of 1 would leave 1 alone there.
TEST_F(Triggers, SnapshotCountSwapsTheBuffersExactlyNTimes) {
  TRACEBED_REQUIRE(features::snapshot_trigger);
  const std::string m = marked();
  ASSERT_OK(exec().add_trigger(Trigger::snapshot().count(3).filter(filename_is(m))));
  for (int round = 1; round <= 4; ++round) {
    ASSERT_OK(inst().write_marker("tracebed-round-" + std::to_string(round)));
    ASSERT_THAT(exec_runs(1, {0}), SizeIs(1));
  }
  ASSERT_OK(inst().set_tracing_on(false));
  EXPECT_EQ(exec().triggers().value().at(0).count, 0u);
  auto snap = inst().read_snapshot();
  ASSERT_OK(snap);
  std::vector<std::string> in_snapshot;
  for (std::string_view l : tracefs::split_lines(*snap))
    if (auto at = l.find("tracebed-round-"); at != std::string_view::npos)
      in_snapshot.push_back(std::string(tracefs::trim(l.substr(at))));
  EXPECT_THAT(in_snapshot, ElementsAre("tracebed-round-1", "tracebed-round-3"));
  std::vector<std::string> live;
  for (const std::string& b : str_fields(decoded(EventRef{"ftrace", "print"}), "buf"))
    live.push_back(std::string(tracefs::trim(b)));
  EXPECT_THAT(live, ElementsAre("tracebed-round-2", "tracebed-round-4"));
}

// trigger-filter.tc: a trigger whose `if` never matches never fires: 30
// runs pass it, tracing stays on and each run's exec is recorded.
TEST_F(Triggers, FilterThatNeverMatchesNeverFires) {
  TRACEBED_COVERS("ftracetest: trigger/trigger-filter.tc");
  ASSERT_OK(exec().add_trigger(Trigger::traceoff().filter("filename == \"/no/such/program\"")));
  ASSERT_OK(exec().enable());
  std::vector<int> pids = exec_runs(30);
  EXPECT_TRUE(inst().tracing_on().value());
  EXPECT_THAT(pids_of(of_runs(decoded(exec()), pids)), ElementsAreArray(pids));
}

// A filtered trigger fires at every matching event and at no other: a
// stacktrace on the marked path, over 40 runs of which every 4th is
// marked, records exactly 10 stacks, each after a marked run's exec, and
// all 40 execs are there.
TEST_F(Triggers, FilteredTriggerFiresAtEveryMatchingEvent) {
  const std::string m = marked();
  ASSERT_OK(exec().add_trigger(Trigger::stacktrace().filter(filename_is(m))));
  ASSERT_OK(exec().enable());
  std::set<size_t> every_4th;
  for (size_t i = 3; i < 40; i += 4) every_4th.insert(i);
  std::vector<int> pids = exec_runs(40, every_4th);
  ASSERT_THAT(pids, SizeIs(40));
  ASSERT_OK(inst().set_tracing_on(false));
  std::vector<std::string> lines = trace_lines(inst());
  std::vector<Stack> stacks = stacks_in(lines);
  ASSERT_THAT(stacks, SizeIs(every_4th.size()));
  size_t k = 0;
  for (size_t i : every_4th) {
    SCOPED_TRACE("run " + std::to_string(i));
    EXPECT_THAT(stacks[k].after, AllOf(IsExecOf(pids[i]), HasSubstr("filename=" + m + " ")));
    EXPECT_THAT(stacks[k++].frames, Not(IsEmpty()));
  }
  for (int pid : pids) EXPECT_THAT(lines, Contains(IsExecOf(pid)));
  auto t = exec().triggers();
  ASSERT_OK(t);
  ASSERT_THAT(*t, SizeIs(1));
  EXPECT_FALSE((*t)[0].count.has_value()) << "unlimited: " << (*t)[0].line;
}

// trigger-stacktrace.tc: stacktrace:3 records a kernel stack after each
// of the first 3 matching events and then no more: of 30 runs, exactly 3
// stacks, after the first 3 runs' execs, each in the exec path; every
// exec is recorded, and the trigger reads back count=0.
TEST_F(Triggers, StacktraceRecordsAStack) {
  TRACEBED_COVERS("ftracetest: trigger/trigger-stacktrace.tc");
  ASSERT_OK(exec().add_trigger(Trigger::stacktrace().count(3).filter(filename_is(std::string(kProbeTarget)))));
  ASSERT_OK(exec().enable());
  std::vector<int> pids = exec_runs(30);
  ASSERT_THAT(pids, SizeIs(30));
  ASSERT_OK(inst().set_tracing_on(false));
  std::vector<std::string> lines = trace_lines(inst());
  std::vector<Stack> stacks = stacks_in(lines);
  ASSERT_THAT(stacks, SizeIs(3));
  for (size_t i = 0; i < stacks.size(); ++i) {
    SCOPED_TRACE("stack " + std::to_string(i));
    EXPECT_THAT(stacks[i].after, IsExecOf(pids[i]));
    // sched_process_exec is traced from exec_binprm, under execve.
    EXPECT_THAT(stacks[i].frames, Contains(HasSubstr("exec")));
  }
  for (int pid : pids) EXPECT_THAT(lines, Contains(IsExecOf(pid)));
  EXPECT_EQ(exec().triggers().value().at(0).count, 0u);
}

// trigger-snapshot.tc: snapshot:1 swaps the buffers once, at the first
// exec after it is added (the shell's): the snapshot holds what was there
// before (a marker) and none of the 30 runs after; the live buffer holds
// every run and the marker written after them, not the first one; the
// trigger reads back count=0.
TEST_F(Triggers, SnapshotTriggerTakesASnapshot) {
  TRACEBED_COVERS("ftracetest: trigger/trigger-snapshot.tc");
  TRACEBED_REQUIRE(features::snapshot_trigger);
  ASSERT_OK(exec().enable());
  ASSERT_OK(inst().write_marker("tracebed-before-trigger"));
  ASSERT_OK(exec().add_trigger(Trigger::snapshot().count(1)));
  std::vector<int> pids = exec_runs(30);
  ASSERT_THAT(pids, SizeIs(30));
  ASSERT_OK(inst().write_marker("tracebed-after-runs"));
  ASSERT_OK(inst().set_tracing_on(false));
  EXPECT_EQ(exec().triggers().value().at(0).count, 0u);
  auto snap = inst().read_snapshot();
  ASSERT_OK(snap);
  EXPECT_THAT(*snap, HasSubstr("tracebed-before-trigger"));
  EXPECT_THAT(*snap, Not(HasSubstr("tracebed-after-runs")));
  EXPECT_THAT(*snap, Not(HasSubstr("filename=" + std::string(kProbeTarget)))) << "a second snapshot was taken";
  const EventRef markers{"ftrace", "print"};
  std::vector<DecodedEvent> live = decoded({exec(), markers});
  EXPECT_THAT(pids_of(of_runs(named(live, "sched_process_exec"), pids)), ElementsAreArray(pids));
  std::vector<std::string> bufs;
  for (const std::string& b : str_fields(named(live, "print"), "buf")) bufs.push_back(std::string(tracefs::trim(b)));
  EXPECT_THAT(bufs, ElementsAre("tracebed-after-runs"));
}

TEST_F(Triggers, RemovedTriggerIsGone) {
  Trigger t = Trigger::traceoff().count(5).filter("filename ~ \"*x*\"");
  ASSERT_OK(exec().add_trigger(t));
  ASSERT_THAT(exec().triggers().value(), SizeIs(1));
  ASSERT_OK(exec().remove_trigger(t));
  EXPECT_THAT(exec().triggers().value(), IsEmpty());
}

// A removed trigger's data is freed by one kernel thread
// (trace_events_trigger.c trigger_data_free: "trigger_data_free", made on
// the first free), which sleeps while it has nothing to free. Ten
// triggers added and removed: the thread is there, and over the next
// second it takes no more than a few ticks of CPU time, where one that
// polled its list would take them all.
TEST_F(Triggers, FreedTriggersAreCollectedByAThreadThatSleeps) {
  // Older kernels free a trigger's data where it is removed.
  if (sh("grep -qw trigger_kthread_fn /proc/kallsyms && echo yes || echo no") != "yes\n")
    GTEST_SKIP() << "needs the trigger_data_free thread: no trigger_kthread_fn in /proc/kallsyms";
  for (int i = 0; i < 10; ++i) {
    Trigger t = Trigger::traceoff().count(i + 1);
    ASSERT_OK(exec().add_trigger(t));
    ASSERT_OK(exec().remove_trigger(t));
  }
  const std::string pid =
      std::string(tracefs::trim(sh("grep -lx trigger_data_free /proc/[0-9]*/comm | cut -d/ -f3 || true")));
  ASSERT_FALSE(pid.empty()) << "no trigger_data_free thread after ten triggers were freed";
  // utime + stime, fields 14 and 15 of /proc/PID/stat, in clock ticks.
  auto ticks = [&] {
    return std::stol(sh("awk '{ print $14 + $15 }' /proc/" + pid + "/stat"));
  };
  const long before = ticks();
  sh("sleep 1");
  const long used = ticks() - before;
  const long hz = std::stol(sh("getconf CLK_TCK 2>/dev/null || echo 100"));
  EXPECT_LE(used, hz / 20) << "trigger_data_free ran " << used << " of " << hz << " ticks in a second with nothing to free";
}

TEST_F(Triggers, ResetRemovesEveryTrigger) {
  ASSERT_OK(exec().add_trigger(Trigger::traceoff().count(5)));
  ASSERT_OK(exec().add_trigger(Trigger::stacktrace()));
  ASSERT_OK(inst().event("sched", "sched_switch").add_trigger(Trigger::enable_event("sched", "sched_waking")));
  ASSERT_OK(tracefs::reset(inst()));
  EXPECT_THAT(exec().triggers().value(), IsEmpty());
  EXPECT_THAT(inst().event("sched", "sched_switch").triggers().value(), IsEmpty());
  EXPECT_EQ(inst().event("sched", "sched_waking").enable_state().value(), "0");
}

// How triggers go: a "!" line removes its trigger alone ("!snapshot":
// unregister_snapshot_trigger), and opening the trigger file truncating
// (`echo > trigger`, event_trigger_regex_open) calls the unreg_all of the
// commands that have one: hist and enable_hist/disable_hist
// (hist_unreg_all, hist_enable_unreg_all) go, stacktrace and enable_event,
// which have none, stay until their own "!" lines. Positive evidence
// first: five runs fire the stacktrace and the hist; once every trigger is
// gone, five more leave no stack, no hist and no snapshot.
TEST_F(Triggers, BangAndTruncationRemoveWhatTheKernelSays) {
  TRACEBED_REQUIRE(features::snapshot_trigger);
  TRACEBED_REQUIRE(features::hist_triggers);
  for (const char* t : {"snapshot", "stacktrace", "hist:keys=common_pid", "enable_hist:sched:sched_switch",
                        "enable_event:sched:sched_waking"})
    ASSERT_OK(exec().files().append("trigger", t));
  auto names = [&] {
    std::vector<std::string> out;
    auto text = exec().files().read("trigger");
    EXPECT_OK(text);
    if (!text) return out;
    for (std::string_view line : tracefs::split_lines(*text))
      if (!line.empty() && !line.starts_with("#")) out.emplace_back(line.substr(0, line.find_first_of(":")));
    std::sort(out.begin(), out.end());
    return out;
  };
  ASSERT_THAT(names(), ElementsAre("enable_event", "enable_hist", "hist", "snapshot", "stacktrace"));
  // A snapshot trigger arms the snapshot, and an armed snapshot keeps the
  // buffer from being mapped (trace_snapshot.c get_snapshot_map: EBUSY);
  // its removal disarms it.
  const bool mappable = features().has(tracefs::features::mapped_buffer);
  auto map_errno = [&] {
    const std::string raw = inst().path(fmt::format("per_cpu/cpu{}/trace_pipe_raw", inst().cpus().value().front()));
    std::istringstream out(sh(std::string(kProbeTarget) + " map-read " + raw + " | grep '^map ' || true"));
    std::string word;
    int err = 0;
    out >> word >> err;
    return err;
  };
  if (mappable) EXPECT_EQ(map_errno(), EBUSY) << "mapped while a snapshot trigger is armed";
  ASSERT_OK(exec().files().append("trigger", "!snapshot"));
  EXPECT_THAT(names(), ElementsAre("enable_event", "enable_hist", "hist", "stacktrace"));
  if (mappable) EXPECT_EQ(map_errno(), 0) << "still armed once the snapshot trigger is gone";
  // The map checks' own execs fired the snapshot trigger: clear what it took
  // (`echo 2 > snapshot` empties the buffer, frees nothing).
  if (mappable) ASSERT_OK(inst().files().write("snapshot", "2"));
  ASSERT_OK(exec().enable());
  std::vector<int> fired = exec_runs(5);
  auto hist = tracefs::read_hist(exec());
  ASSERT_OK(hist);
  ASSERT_THAT(hist->sections, SizeIs(1)) << "the hist before the truncation";
  for (int pid : fired)
    EXPECT_THAT(hist->sections[0].entries, Contains(AllOf(HistKeyEq("common_pid", pid), HitCount(1)))) << pid;
  ASSERT_OK(exec().files().write("trigger", ""));
  EXPECT_THAT(names(), ElementsAre("enable_event", "stacktrace")) << "only the hist commands have an unreg_all";
  auto after_hist = exec().files().read("hist");
  ASSERT_OK(after_hist);
  EXPECT_THAT(*after_hist, Not(HasSubstr("Hits: "))) << "a hist survived the truncation";
  ASSERT_OK(exec().files().append("trigger", "!stacktrace"));
  ASSERT_OK(exec().files().append("trigger", "!enable_event:sched:sched_waking"));
  EXPECT_THAT(names(), IsEmpty());
  ASSERT_OK(inst().clear_trace());
  std::vector<int> after = exec_runs(5);
  ASSERT_OK(inst().set_tracing_on(false));
  std::vector<std::string> lines = trace_lines(inst());
  EXPECT_THAT(stacks_in(lines), IsEmpty()) << "a stacktrace trigger survived";
  size_t execs = 0;
  for (int pid : after)
    execs += std::count_if(lines.begin(), lines.end(),
                           [&](const std::string& l) { return ::testing::Matches(IsExecOf(pid))(l); });
  EXPECT_EQ(execs, after.size()) << "the runs after the removals are recorded";
  auto snap = inst().read_snapshot();
  ASSERT_OK(snap);
  EXPECT_THAT(*snap, Not(HasSubstr("sched_process_exec"))) << "the removed snapshot trigger fired";
  // Every trigger gone, nothing holds the event in trigger mode ("0*").
  ASSERT_OK(exec().disable());
  EXPECT_EQ(exec().enable_state().value(), "0");
}

TEST_F(Triggers, BadTriggerFilterIsExplained) {
  TRACEBED_REQUIRE(features::error_log);
  Status s = exec().add_trigger(Trigger::traceoff().filter("no_such_field > 1"));
  ASSERT_FALSE(s.ok());
  EXPECT_THAT(s.error().message, AllOf(HasSubstr("write \"traceoff if no_such_field > 1\" to " +
                                                 exec().files().path("trigger")),
                                       HasSubstr("Invalid argument (EINVAL)")));
  // 6.1 does not log a trigger's filter errors (6.12 does): the message
  // carries the kernel's entry exactly when there is one.
  auto log = inst().error_log();
  ASSERT_OK(log);
  if (log->empty()) {
    EXPECT_THAT(s.error().message, Not(HasSubstr("Command: ")));
  } else {
    EXPECT_THAT(s.error().message, HasSubstr("Command: " + log->back().command + "\n"));
  }
}

TEST_F(Triggers, UnknownTriggerCommandIsRejected) {
  auto err = exec().files().try_write("trigger", "no_such_trigger", true);
  ASSERT_OK(err);
  EXPECT_EQ(*err, EINVAL);
}

// Two counted triggers on one event each fire their count: stacktrace:2
// on the probe target's exec gives 2 stacks over 20 runs, and
// enable_event:...:1, fired at the shell's exec, records every run's exit.
TEST_F(Triggers, SeveralTriggersOnOneEventAllFire) {
  // Not traceoff: the kernel runs the newest trigger first, and a buffer
  // turned off would drop the other's stack.
  ASSERT_OK(exec().add_trigger(Trigger::stacktrace().count(2).filter(filename_is(std::string(kProbeTarget)))));
  ASSERT_OK(exec().add_trigger(Trigger::enable_event("sched", "sched_process_exit").count(1)));
  ASSERT_THAT(exec().triggers().value(), SizeIs(2));
  ASSERT_OK(exec().enable());
  std::vector<int> pids = exec_runs(20);
  ASSERT_THAT(pids, SizeIs(20));
  ASSERT_OK(inst().set_tracing_on(false));
  std::vector<Stack> stacks = stacks_in(trace_lines(inst()));
  ASSERT_THAT(stacks, SizeIs(2));
  EXPECT_THAT(stacks[0].after, IsExecOf(pids[0]));
  EXPECT_THAT(stacks[1].after, IsExecOf(pids[1]));
  EXPECT_THAT(inst().event("sched", "sched_process_exit").enable_state().value(), HasSubstr("1"));
  for (const tracefs::TriggerEntry& t : exec().triggers().value()) EXPECT_EQ(t.count, 0u) << t.line;
  EXPECT_THAT(pids_of(of_runs(decoded(exit_event()), pids)), ElementsAreArray(pids));
}

TEST_F(Triggers, SameTriggerTwiceIsRejected) {
  ASSERT_OK(exec().add_trigger(Trigger::traceoff()));
  auto err = exec().files().try_write("trigger", Trigger::traceoff().command(), true);
  ASSERT_OK(err);
  EXPECT_EQ(*err, EEXIST);
}

}  // namespace
}  // namespace tracebed::suites
