// event-pid.tc and event-no-pid.tc: set_event_pid and set_event_notrace_pid,
// with and without event-fork, against the pids a forking shell says it
// had. The process events fire in the task they name (fork in the parent,
// exec and exit in the child), so each task's records are exactly known.
#include <fmt/format.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "framework/testing/tracefs_fixture.h"

namespace tracebed::suites {
namespace {

constexpr int kChildren = 6;

class EventPid : public TracefsTest {
 public:
  EventPid() : TracefsTest({features::set_event_pid, features::event_fork, features::sched_events}) {}

 protected:
  // Enables the process events, runs the shell with its pid in `pid_file`
  // (none: empty) and returns the window's records.
  std::vector<DecodedEvent> run_with(std::string_view pid_file, bool event_fork, ForkRun& run) {
    EXPECT_OK(inst().set_option("event-fork", event_fork));
    for (const char* e : kEvents) EXPECT_OK(inst().event("sched", e).enable());
    EXPECT_OK(inst().clear_trace());
    EXPECT_OK(inst().set_tracing_on(false));
    run = pid_file.empty() ? run_forking_shell(*this, inst(), {}, kChildren, "/bin/true")
                           : run_forking_shell(*this, inst(), {pid_file}, kChildren, "/bin/true");
    auto events = decoded({{"sched", "sched_process_fork"}, {"sched", "sched_process_exec"},
                           {"sched", "sched_process_exit"}});
    EXPECT_OK(inst().set_event_pids({}));
    if (inst().files().has("set_event_notrace_pid")) EXPECT_OK(inst().files().write("set_event_notrace_pid", ""));
    return events;
  }

  // Every child: one exec and one exit, recorded in the child.
  static void ExpectEachChildRecorded(const std::vector<DecodedEvent>& events, const ForkRun& run) {
    for (int child : run.children) {
      SCOPED_TRACE(::testing::Message() << "child " << child);
      EXPECT_THAT(of_pid(events, child), UnorderedElementsAre(IsEvent("sched_process_exec"),
                                                             IsEvent("sched_process_exit")));
    }
  }
  static void ExpectNoChildRecorded(const std::vector<DecodedEvent>& events, const ForkRun& run) {
    for (int child : run.children) EXPECT_THAT(of_pid(events, child), IsEmpty()) << "child " << child;
  }

  static constexpr const char* kEvents[] = {"sched_process_fork", "sched_process_exec", "sched_process_exit"};
};

// The shell's forks name each child it said it forked, in order.
void ExpectForksOf(const std::vector<DecodedEvent>& events, const ForkRun& run) {
  std::vector<DecodedEvent> forks = named(of_pid(events, run.shell), "sched_process_fork");
  std::vector<int64_t> children(run.children.begin(), run.children.end());
  EXPECT_THAT(int_fields(forks, "child_pid"), ElementsAreArray(children));
}

TEST_F(EventPid, OnlyThePidIsRecordedAndItsChildrenWithEventFork) {
  TRACEBED_COVERS("ftracetest: event/event-pid.tc");
  ForkRun run;
  auto events = run_with("set_event_pid", false, run);
  ASSERT_THAT(events, Not(IsEmpty()));
  // Without event-fork, the shell alone: its forks, nothing of its children
  // or of the sibling.
  EXPECT_THAT(events, Each(FromPid(run.shell)));
  ExpectForksOf(events, run);

  events = run_with("set_event_pid", true, run);
  ExpectForksOf(events, run);
  ExpectEachChildRecorded(events, run);
  EXPECT_THAT(of_pid(events, run.sibling), IsEmpty()) << "forked before the pid was written";
  // Nothing but the shell and its children.
  size_t theirs = of_pid(events, run.shell).size();
  for (int child : run.children) theirs += of_pid(events, child).size();
  EXPECT_EQ(theirs, events.size());
}

TEST_F(EventPid, NotracePidHidesThePidAndItsChildrenWithEventFork) {
  TRACEBED_COVERS("ftracetest: event/event-no-pid.tc");
  TRACEBED_REQUIRE(features::set_event_notrace_pid);
  ForkRun run;
  auto events = run_with("set_event_notrace_pid", false, run);
  EXPECT_THAT(of_pid(events, run.shell), IsEmpty());
  ExpectEachChildRecorded(events, run);
  // Other tasks still are: the sibling's command and its exit.
  EXPECT_THAT(of_pid(events, run.sibling), Contains(IsEvent("sched_process_exit")));

  events = run_with("set_event_notrace_pid", true, run);
  EXPECT_THAT(of_pid(events, run.shell), IsEmpty());
  ExpectNoChildRecorded(events, run);
  EXPECT_THAT(of_pid(events, run.sibling), Contains(IsEvent("sched_process_exit")));
}

// Opened for writing with O_TRUNC (a shell's `>`), each list is emptied
// before the write (trace_events.c __ftrace_clear_event_pids): a pid put
// in and then truncated away reads back as nothing, and with both lists so
// cleared the shell's forks and every child's exec and exit are recorded.
TEST_F(EventPid, TruncatedPidListsAreEmptyAndFilterNothing) {
  TRACEBED_REQUIRE(features::set_event_notrace_pid);
  for (const char* file : {"set_event_pid", "set_event_notrace_pid"}) {
    SCOPED_TRACE(file);
    sh(fmt::format("echo 1 > {0} && echo > {0}", inst().path(file)));
    EXPECT_EQ(inst().files().read(file).value(), "");
  }
  ForkRun run;
  auto events = run_with("", true, run);
  ExpectForksOf(events, run);
  ExpectEachChildRecorded(events, run);
  EXPECT_THAT(of_pid(events, run.sibling), Contains(IsEvent("sched_process_exit")));
}

}  // namespace
}  // namespace tracebed::suites
