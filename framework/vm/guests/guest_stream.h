// Running a command in a guest with its output passed on as it comes, for
// `tracebed run`: the agent's `run` call returns output only at the end and
// keeps at most 12 MiB of each stream. Here the command writes its stdout
// and stderr to two files in the guest's /tmp, which are read from where the
// last read ended until the command has exited and both are drained.
//
// The limit is the guest's /tmp (a tmpfs in its memory): a command whose
// output does not fit there sees ENOSPC on its writes, as it would on a
// full disk; nothing is dropped silently on the way to the host.
#pragma once

#include <chrono>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "framework/base/result.h"

namespace tracebed::vm {

class Guest;

struct StreamedExit {
  int exit_code = 0;
  int signal = 0;
  bool timed_out = false;
  // The status a shell would report: the exit code, or 128 + signal.
  int shell_status() const { return signal ? 128 + signal : exit_code; }
};

using OutputSink = std::function<void(std::string_view)>;

// Runs argv (PATH lookup in the guest, as a shell would: an unknown command
// exits 127 with the shell's message on stderr). After `timeout` the command
// is killed and timed_out is set.
Result<StreamedExit> run_streaming(Guest& guest, const std::vector<std::string>& argv,
                                   std::chrono::milliseconds timeout, const OutputSink& on_stdout,
                                   const OutputSink& on_stderr);

}  // namespace tracebed::vm
