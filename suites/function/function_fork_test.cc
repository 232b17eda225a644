// func-filter-pid.tc and func-filter-notrace-pid.tc: set_ftrace_pid and
// set_ftrace_notrace_pid with and without function-fork, for the function
// and function_graph tracers, against the pids a forking shell says it had.
// Only vfs_write is traced: each child writes exactly once (/bin/echo),
// the shell once per child it reports.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "suites/function/function_fixture.h"

namespace tracebed::suites {
namespace {

constexpr int kChildren = 20;
constexpr const char* kChildCommand = "/bin/echo x > /dev/null";

class FunctionFork : public Function {
 public:
  FunctionFork() : Function({features::function_fork}) {}

 protected:
  // The tracers to try: function, and function_graph where the instance has it.
  std::vector<std::string> tracers() {
    std::vector<std::string> out{"function"};
    auto available = inst().available_tracers();
    if (available && std::find(available->begin(), available->end(), "function_graph") != available->end())
      out.push_back("function_graph");
    return out;
  }

  // One window: vfs_write traced by `tracer`, the shell's pid in `pid_files`.
  std::vector<DecodedEvent> run_with(const std::string& tracer, std::initializer_list<std::string_view> pid_files,
                                     bool follow, ForkRun& run) {
    EXPECT_OK(inst().set_tracing_on(false));
    EXPECT_OK(inst().set_ftrace_filter(std::vector<std::string>{"vfs_write"}));
    EXPECT_OK(inst().set_option("function-fork", follow));
    EXPECT_OK(inst().set_tracer(tracer));
    EXPECT_OK(inst().clear_trace());
    run = run_forking_shell(*this, inst(), pid_files, kChildren, kChildCommand);
    auto events = decoded(entry_event(tracer));
    EXPECT_OK(inst().set_tracer("nop"));
    EXPECT_OK(inst().set_ftrace_pids({}));
    EXPECT_OK(inst().set_ftrace_notrace_pids({}));
    return events;
  }
  static EventRef entry_event(const std::string& tracer) {
    return tracer == "function" ? EventRef("ftrace", "function") : EventRef("ftrace", "funcgraph_entry");
  }
};

size_t of_children(const std::vector<DecodedEvent>& events, const ForkRun& run) {
  size_t n = 0;
  for (int child : run.children) n += of_pid(events, child).size();
  return n;
}

TEST_F(FunctionFork, PidFilterFollowsForksOnlyWithFunctionFork) {
  TRACEBED_COVERS("ftracetest: ftrace/func-filter-pid.tc");
  TRACEBED_REQUIRE(features::set_ftrace_pid);
  for (const std::string& tracer : tracers()) {
    SCOPED_TRACE(tracer);
    // kthreadd (pid 2) never writes: nothing is traced until the shell
    // replaces it with its own pid.
    ASSERT_OK(inst().set_ftrace_pids(std::vector<int>{2}));
    ForkRun run;
    auto events = run_with(tracer, {"set_ftrace_pid"}, false, run);
    // The shell's own writes (its "child <pid>" lines), nobody else's.
    EXPECT_GE(of_pid(events, run.shell).size(), static_cast<size_t>(kChildren));
    EXPECT_THAT(events, Each(FromPid(run.shell)));

    ASSERT_OK(inst().set_ftrace_pids(std::vector<int>{2}));
    events = run_with(tracer, {"set_ftrace_pid"}, true, run);
    for (int child : run.children)
      EXPECT_THAT(of_pid(events, child), SizeIs(1)) << "child " << child << ": its one write";
    std::vector<DecodedEvent> strays;
    for (const DecodedEvent& e : events)
      if (e.pid != run.shell && std::find(run.children.begin(), run.children.end(), e.pid) == run.children.end())
        strays.push_back(e);
    EXPECT_THAT(strays, IsEmpty()) << "tasks outside the shell and its children were traced";
  }
}

TEST_F(FunctionFork, NotracePidHidesItsForksOnlyWithFunctionFork) {
  TRACEBED_COVERS("ftracetest: ftrace/func-filter-notrace-pid.tc");
  TRACEBED_REQUIRE(features::set_ftrace_notrace_pid);
  for (const std::string& tracer : tracers()) {
    SCOPED_TRACE(tracer);
    ForkRun run;
    auto events = run_with(tracer, {"set_ftrace_notrace_pid"}, false, run);
    EXPECT_THAT(of_pid(events, run.shell), IsEmpty());
    for (int child : run.children)
      EXPECT_THAT(of_pid(events, child), SizeIs(1)) << "child " << child << ": its one write";

    events = run_with(tracer, {"set_ftrace_notrace_pid"}, true, run);
    EXPECT_THAT(of_pid(events, run.shell), IsEmpty());
    EXPECT_EQ(of_children(events, run), 0u);
    // The sibling's /bin/echo (forked before the pid was written) still is.
    EXPECT_THAT(events, Not(IsEmpty()));

    // In both lists, with function-fork: nobody is traced, children neither.
    if (!inst().files().has("set_ftrace_pid")) continue;
    ASSERT_OK(inst().set_ftrace_pids(std::vector<int>{2}));
    events = run_with(tracer, {"set_ftrace_pid", "set_ftrace_notrace_pid"}, true, run);
    EXPECT_THAT(events, IsEmpty());
  }
}

}  // namespace
}  // namespace tracebed::suites
