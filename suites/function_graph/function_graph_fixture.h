// The function_graph tracer, shared by the suite's files. Instances got
// function_graph late; where they lack it, graph() is the top level, which
// the fixture resets afterwards. Every test limits what is traced
// (set_graph_function or set_ftrace_filter): function_graph over every
// function costs ~30 s under TCG.
#pragma once

#include <algorithm>
#include <string>
#include <vector>

#include "framework/testing/tracefs_fixture.h"

namespace tracebed::suites {

class FunctionGraph : public TracefsTest {
 public:
  FunctionGraph() : TracefsTest({features::function_graph_tracer, features::set_graph_function}) {}

 protected:
  void SetUpTest() override {
    auto tracers = inst().available_tracers();
    ASSERT_OK(tracers);
    bool in_instance = std::find(tracers->begin(), tracers->end(), "function_graph") != tracers->end() &&
                       inst().files().has("set_graph_function");
    graph_ = in_instance ? &inst() : &top();
  }
  tracefs::Instance& graph() { return *graph_; }

  // Starts function_graph on vfs_read's calls, runs a cat, stops. The
  // filter holds vfs_read and what it calls three levels down (rw_verify_area,
  // the LSM hooks under it, the copy checks, the readers of /proc and of the
  // agent's port), so the depth and notrace tests have calls to cut.
  std::vector<std::string> trace_vfs_read() {
    EXPECT_OK(graph().set_ftrace_filter(traceable(
        {"vfs_read", "rw_verify_area", "security_file_permission", "apparmor_file_permission", "aa_file_perm",
         "bpf_lsm_file_permission", "fsnotify_perm", "__fsnotify_parent", "proc_reg_read", "proc_reg_read_iter",
         "seq_read", "seq_read_iter", "version_proc_show", "__check_object_size", "check_stack_object",
         "port_fops_read", "fill_readbuf", "shmem_file_read_iter", "touch_atime", "atime_needs_update"})));
    EXPECT_OK(graph().set_graph_function(std::vector<std::string>{"vfs_read"}));
    EXPECT_OK(graph().clear_trace());
    EXPECT_OK(graph().set_tracing_on(true));  // a run before this one stopped it
    EXPECT_OK(graph().set_tracer("function_graph"));
    sh("cat /proc/version > /dev/null");
    EXPECT_OK(graph().set_tracing_on(false));
    auto lines = trace_lines(graph());
    EXPECT_OK(graph().set_tracer("nop"));
    return lines;
  }

 private:
  tracefs::Instance* graph_ = nullptr;
};

}  // namespace tracebed::suites
