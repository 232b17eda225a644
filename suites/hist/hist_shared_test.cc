// ftracetest trigger/trigger-multihist.tc (a hist shared by name= across
// events), trigger-trace-marker-hist.tc (a hist on ftrace:print) and
// trigger-hist-expressions.tc (constant expressions in a variable), each
// checked against decoded events or the arithmetic the row states.
#include <cstdint>
#include <map>
#include <set>
#include <sstream>
#include <string>

#include <fmt/format.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "suites/hist/hist_fixture.h"

namespace tracebed::suites {
namespace {

const Feature kExitEvent = Feature::event("sched", "sched_process_exit");

// The hitcount per common_pid of a section, for the pids in `pids`.
std::map<int64_t, uint64_t> hits_of(const HistSection& s, const std::set<int64_t>& pids) {
  std::map<int64_t, uint64_t> out;
  for (const auto& entry : s.entries) {
    const tracefs::HistKey* key = entry.key("common_pid");
    if (key && key->number && pids.count(static_cast<int64_t>(*key->number)))
      out[static_cast<int64_t>(*key->number)] += entry.hitcount();
  }
  return out;
}

// Two events' triggers with one name= fill one table: both hist files
// show it, and each pid's hitcount is its forks plus its exit.
TEST_F(Hist, NamedHistIsSharedByTwoEvents) {
  TRACEBED_COVERS("ftracetest: trigger/trigger-multihist.tc");
  TRACEBED_REQUIRE(fork_event);
  TRACEBED_REQUIRE(kExitEvent);
  Event fork = inst().event("sched", "sched_process_fork");
  Event exit = inst().event("sched", "sched_process_exit");
  std::string name = unique("test_hist");
  HistTrigger shared = HistTrigger().name(name).key("common_pid");
  ASSERT_OK(fork.add_trigger(shared.trigger()));
  ASSERT_OK(exit.add_trigger(shared.trigger()));
  ASSERT_OK(fork.enable());
  ASSERT_OK(exit.enable());
  Forker shell = fork_work(10, unique("forker"));

  std::set<int64_t> pids = {shell.pid};
  std::map<int64_t, uint64_t> expected;
  std::vector<DecodedEvent> events = decoded({fork, exit});
  for (const DecodedEvent& e : events) {
    if (e.name == "sched_process_fork" && int_field(e, "parent_pid") == shell.pid)
      pids.insert(int_field(e, "child_pid"));
  }
  for (const DecodedEvent& e : events)
    if (pids.count(e.pid)) expected[e.pid]++;
  ASSERT_THAT(pids, SizeIs(11)) << "the shell and its 10 children";
  EXPECT_EQ(expected[shell.pid], 11u) << "10 forks and its exit";

  HistFile of_fork = hist_of(fork), of_exit = hist_of(exit);
  ASSERT_THAT(of_fork.sections, SizeIs(1));
  ASSERT_THAT(of_exit.sections, SizeIs(1));
  EXPECT_EQ(of_fork.sections[0].trigger.name_value(), name);
  EXPECT_EQ(of_exit.sections[0].trigger.name_value(), name);
  EXPECT_EQ(hits_of(of_fork.sections[0], pids), expected);
  EXPECT_EQ(hits_of(of_exit.sections[0], pids), expected);
}

// The hitcount per pid key of a section's entries.
std::map<int64_t, uint64_t> hits_per_pid(const HistSection& s) {
  std::map<int64_t, uint64_t> out;
  for (const auto& entry : s.entries) {
    const tracefs::HistKey* key = entry.key("pid");
    EXPECT_TRUE(key && key->number) << (key ? key->text : "no pid key");
    if (key && key->number) out[static_cast<int64_t>(*key->number)] = entry.hitcount();
  }
  return out;
}

// A named hist keyed on `pid` of two events that each define a pid field
// (two event classes: trace_events_hist.c compatible_field compares the
// fields' names, types, sizes and signedness), and twelve /bin/true
// children of one shell.
//
// sched_process_exit and sched_wakeup: pid at the same offset (24) on
// every kernel of the catalogue. Both triggers are taken, and the one
// table counts the shell's and its children's exits and wakeups as the
// decoded events have them (those of tasks that are gone by then, so that
// no event after the window changes them: the triggers still count once
// tracing is off).
TEST_F(Hist, NamedHistSharesAKeyFieldOfTwoEventClasses) {
  TRACEBED_REQUIRE(kExitEvent);
  TRACEBED_REQUIRE(features::sched_events);
  Event exit = inst().event("sched", "sched_process_exit");
  Event wakeup = inst().event("sched", "sched_wakeup");
  HistTrigger shared = HistTrigger().name(unique("tb_pid")).key("pid");
  ASSERT_OK(exit.add_trigger(shared.trigger()));
  // Refused here if the two events' pid fields were taken as different.
  ASSERT_OK(wakeup.add_trigger(shared.trigger()));
  ASSERT_OK(exit.enable());
  ASSERT_OK(wakeup.enable());
  const int64_t shell = std::stoll(sh("sh -c 'i=0; while [ $i -lt 12 ]; do /bin/true; i=$((i+1)); done; echo $$'"));
  const std::vector<DecodedEvent> events = decoded({exit, wakeup});
  std::set<int64_t> gone = {shell};
  for (const DecodedEvent& e : events)
    if (e.name == "sched_process_exit" && str_field(e, "comm") == "true") gone.insert(int_field(e, "pid"));
  ASSERT_THAT(gone, SizeIs(13)) << "the shell and the exits of its 12 /bin/true children";
  std::map<int64_t, uint64_t> expected;
  for (const DecodedEvent& e : events)
    if (gone.contains(int_field(e, "pid"))) expected[int_field(e, "pid")]++;
  for (const Event* ev : {&exit, &wakeup}) {
    HistFile file = hist_of(*ev);
    ASSERT_THAT(file.sections, SizeIs(1));
    std::map<int64_t, uint64_t> shown = hits_per_pid(file.sections[0]);
    std::erase_if(shown, [&](const auto& kv) { return !gone.contains(kv.first); });
    EXPECT_EQ(shown, expected) << ev->files().path("hist");
  }
}

// The same with sched_process_exec's pid, which is at offset 12 where
// sched_process_exit's is at 24: the shared table keys each exit on its
// own pid too, so that every child has its exec and its exit, twice.
const KnownKernelBug kNamedKeyAtFirstOffset{
    "a named hist shared by two events reads the second event's key at the first event's field offset",
    {"exits keyed at the first event's offset"}, {7, 4}, "not fixed upstream as of December 2026"};

TEST_F(Hist, NamedHistKeysEachEventOnItsOwnFieldOffset) {
  TRACEBED_REQUIRE(sched_events_exec);
  TRACEBED_REQUIRE(kExitEvent);
  Event exec = inst().event("sched", "sched_process_exec");
  Event exit = inst().event("sched", "sched_process_exit");
  HistTrigger shared = HistTrigger().name(unique("tb_pid")).key("pid");
  ASSERT_OK(exec.add_trigger(shared.trigger()));
  ASSERT_OK(exit.add_trigger(shared.trigger()));
  ASSERT_OK(exec.enable());
  ASSERT_OK(exit.enable());
  sh("sh -c 'i=0; while [ $i -lt 12 ]; do /bin/true; i=$((i+1)); done'");
  // Only /bin/true children exec and exit here, and they are gone before
  // the hist is read: its counts are final.
  std::map<int64_t, uint64_t> expected;
  size_t exits = 0;
  for (const DecodedEvent& e : decoded({exec, exit})) {
    expected[int_field(e, "pid")]++;
    exits += e.name == "sched_process_exit";
  }
  EXPECT_GE(exits, 12u);
  HistFile file = hist_of(exit);
  ASSERT_THAT(file.sections, SizeIs(1));
  const std::map<int64_t, uint64_t> shown = hits_per_pid(file.sections[0]);
  // The bug's own pattern: every exit in one entry of a pid no record has.
  if (shown != expected && !expected.contains(0) && shown.contains(0) && shown.at(0) == exits) {
    TRACEBED_SKIP_IF_KNOWN_BUG(kNamedKeyAtFirstOffset,
                               fmt::format("all {} exits keyed at the first event's offset (pid 0)", exits));
  }
  EXPECT_EQ(shown, expected);
}

// A named hist joins an event beside another named hist of the same keys
// (another name is another table), but not twice: the second is refused
// with EEXIST and the kernel's "already exists" (trace_events_hist.c
// hist_register_trigger, hist_trigger_match on the name). The shared table
// counts the shell's forks and exits, the other its exits alone.
TEST_F(Hist, NamedHistJoinsAnEventOnceBesideAnotherName) {
  TRACEBED_REQUIRE(fork_event);
  TRACEBED_REQUIRE(kExitEvent);
  TRACEBED_REQUIRE(features::error_log);
  Event fork = inst().event("sched", "sched_process_fork");
  Event exit = inst().event("sched", "sched_process_exit");
  const std::string shared_name = unique("tb_shared"), own_name = unique("tb_own");
  HistTrigger shared = HistTrigger().name(shared_name).key("common_pid");
  HistTrigger own = HistTrigger().name(own_name).key("common_pid");
  ASSERT_OK(fork.add_trigger(shared.trigger()));
  ASSERT_OK(exit.add_trigger(own.trigger()));
  // Beside own_name's, which has the same keys.
  ASSERT_OK(exit.add_trigger(shared.trigger()));
  ASSERT_OK(inst().clear_error_log());
  auto again = exit.files().try_write("trigger", shared.command(), true);
  ASSERT_OK(again);
  EXPECT_EQ(*again, EEXIST) << "the same named hist twice on one event";
  auto log = inst().error_log();
  ASSERT_OK(log);
  ASSERT_THAT(*log, SizeIs(1));
  EXPECT_EQ((*log)[0].error, "Hist trigger already exists");
  auto triggers = exit.triggers();
  ASSERT_OK(triggers);
  EXPECT_THAT(*triggers, SizeIs(2)) << "the exit event's hists: its own and the shared one";

  ASSERT_OK(fork.enable());
  ASSERT_OK(exit.enable());
  Forker shell = fork_work(10, unique("forker"));
  std::set<int64_t> pids = {shell.pid};
  std::map<int64_t, uint64_t> forks_and_exits, exits;
  std::vector<DecodedEvent> events = decoded({fork, exit});
  for (const DecodedEvent& e : events)
    if (e.name == "sched_process_fork" && int_field(e, "parent_pid") == shell.pid) pids.insert(int_field(e, "child_pid"));
  for (const DecodedEvent& e : events) {
    if (!pids.count(e.pid)) continue;
    forks_and_exits[e.pid]++;
    if (e.name == "sched_process_exit") exits[e.pid]++;
  }
  ASSERT_THAT(pids, SizeIs(11)) << "the shell and its 10 children";
  ASSERT_EQ(exits.size(), 11u) << "each of them exited";
  HistFile of_exit = hist_of(exit);
  ASSERT_THAT(of_exit.sections, SizeIs(2));
  for (const HistSection& s : of_exit.sections) {
    SCOPED_TRACE(s.trigger.name_value());
    if (s.trigger.name_value() == shared_name) EXPECT_EQ(hits_of(s, pids), forks_and_exits);
    else EXPECT_EQ(hits_of(s, pids), exits);
  }
}

// keys=common_pid on ftrace:print counts every marker a shell writes, and
// the decoded markers are the ones written, in order.
TEST_F(Hist, MarkerHistCountsEveryMarker) {
  TRACEBED_COVERS("ftracetest: trigger/trigger-trace-marker-hist.tc");
  TRACEBED_REQUIRE(features::marker_triggers);
  constexpr int kMarkers = 60;
  Event print = inst().event("ftrace", "print");
  ASSERT_OK(print.add_trigger(HistTrigger().key("common_pid").trigger()));
  // Builtin echo only: every marker is the shell's own write.
  std::string out = sh("sh -c 'i=0; while [ $i -lt " + std::to_string(kMarkers) + " ]; do echo \"tb marker $i\" > " +
                       inst().path("trace_marker") + "; i=$((i+1)); done; echo $$'");
  int pid = std::stoi(out);
  std::vector<std::string> expected;
  for (int i = 0; i < kMarkers; ++i) expected.push_back("tb marker " + std::to_string(i) + "\n");
  EXPECT_THAT(str_fields(of_pid(decoded(print), pid), "buf"), ElementsAreArray(expected));
  HistFile file = hist_of(print);
  ASSERT_THAT(file.sections, SizeIs(1));
  EXPECT_THAT(entries_of_pid(file.sections[0], pid), ElementsAre(::testing::Pointee(HitCount(kMarkers))));
}

struct Expr {
  const char* name;
  const char* expr;
  uint64_t value;
};

void PrintTo(const Expr& e, std::ostream* os) { *os << e.expr; }

// The .tc's rows; the values are the arithmetic, left to right within a
// precedence level.
const Expr kExprs[] = {
    {"assignment", "123", 123},
    {"subtraction_left_to_right", "16-8-4-2", 2},
    {"division_left_to_right", "64/8/4/2", 1},
    {"plus_minus_left_to_right", "16-8+4+2", 14},
    {"mult_div_left_to_right", "4*3/2*2", 12},
    {"mult_before_add", "4+3*2-2", 8},
    {"div_before_add", "4+6/2-2", 5},
};

class HistExpr : public Hist, public ::testing::WithParamInterface<Expr> {};

// The kernel folds a constant expression when it parses it: the trigger it
// lists has the value.
TEST_P(HistExpr, ConstantExpressionIsFoldedToItsValue) {
  TRACEBED_COVERS("ftracetest: trigger/trigger-hist-expressions.tc");
  TRACEBED_REQUIRE(fork_event);
  TRACEBED_REQUIRE(hist_literals);
  const Expr& e = GetParam();
  Event fork = inst().event("sched", "sched_process_fork");
  ASSERT_OK(fork.add_trigger(HistTrigger().key("common_pid").var("x", e.expr).trigger()));
  ASSERT_OK(fork.enable());
  Forker shell = fork_work(10, unique("forker"));
  // The variable does not disturb the table: the shell's 10 forks count.
  HistFile file = hist_of(fork);
  ASSERT_THAT(file.sections, SizeIs(1));
  EXPECT_THAT(entries_of_pid(file.sections[0], shell.pid), ElementsAre(::testing::Pointee(HitCount(10))));
  auto triggers = fork.triggers();
  ASSERT_OK(triggers);
  ASSERT_THAT(*triggers, SizeIs(1));
  EXPECT_THAT(triggers->at(0).line, HasSubstr(":x=" + std::to_string(e.value) + ":")) << e.expr;
}

INSTANTIATE_TEST_SUITE_P(Hist, HistExpr, ::testing::ValuesIn(kExprs),
                         [](const ::testing::TestParamInfo<Expr>& p) { return std::string(p.param.name); });

}  // namespace
}  // namespace tracebed::suites
