// A guest shell that puts its own pid into pid files of an instance
// (set_event_pid, set_ftrace_pid, or a notrace one) and then forks
// children, saying every pid, so a test of event-fork / function-fork
// knows which task each record came from:
//
//   ForkRun r = run_forking_shell(*this, inst(), {"set_event_pid"}, 5, "/bin/true");
//   r.shell        -> the pid written into the file
//   r.children     -> the 5 children it forked after that, each running the command
//   r.sibling      -> a child forked before the write, running the command too
#pragma once

#include <initializer_list>
#include <string_view>
#include <vector>

#include "framework/tracefs/tracefs.h"

namespace tracebed::testlib {

class TracefsTest;

struct ForkRun {
  int shell = 0;
  std::vector<int> children;
  // Forked before the pid was written, so no pid list follows it; it runs
  // `command` after a short sleep, before the shell ends: the "other
  // tasks" of the window.
  int sibling = 0;
};

// Runs the shell; each child runs `command` (a shell command line) and is
// waited for before the next. The shell turns tracing on in `inst` right
// after writing its pid (a test turns it off before). A failure to say
// the pids fails the test.
ForkRun run_forking_shell(TracefsTest& test, const tracefs::Instance& inst,
                          std::initializer_list<std::string_view> pid_files, int children, std::string_view command);

}  // namespace tracebed::testlib
