#include "framework/vm/guests/guest_stream.h"

#include <signal.h>
#include <unistd.h>

#include <fmt/format.h>

#include "framework/vm/guests/guest.h"

namespace tracebed::vm {
namespace {

using Clock = std::chrono::steady_clock;
using namespace std::chrono_literals;

// One output file in the guest, read on from where the last read ended.
struct Tail {
  std::string path;
  uint64_t offset = 0;
  const OutputSink* sink;

  // Everything written so far; false when the file cannot be read.
  Result<bool> drain(agent::Client& agent) {
    constexpr uint32_t kChunk = 1u << 20;
    for (;;) {
      TRACEBED_ASSIGN_OR_RETURN(std::string data, agent.read_file(path, kChunk, offset));
      if (data.empty()) return true;
      offset += data.size();
      if (*sink) (*sink)(data);
      if (data.size() < kChunk) return true;
    }
  }
};

}  // namespace

Result<StreamedExit> run_streaming(Guest& guest, const std::vector<std::string>& argv,
                                   std::chrono::milliseconds timeout, const OutputSink& on_stdout,
                                   const OutputSink& on_stderr) {
  if (argv.empty()) return Error{"run_streaming: no command"};
  static int counter = 0;
  std::string base = fmt::format("/tmp/.tracebed-run-{}-{}", getpid(), ++counter);
  Tail out{base + ".out", 0, &on_stdout}, err{base + ".err", 0, &on_stderr};
  // The agent's spawn sends stdout and stderr to one file; a shell splits
  // them, then becomes the command (same pid, so its status is the command's).
  // Its $0 is the command, so that the shell's own errors name it and not
  // our file; a command that is not there says so in words.
  std::vector<std::string> wrapped = {
      "sh", "-c",
      "e=$1; shift; exec 2>\"$e\"; command -v \"$1\" >/dev/null || "
      "{ echo \"$1: not found in the guest (no such file, or not on its PATH)\" >&2; exit 127; }; exec \"$@\"",
      argv.front(), err.path};
  wrapped.insert(wrapped.end(), argv.begin(), argv.end());
  agent::Client& agent = guest.agent();
  TRACEBED_ASSIGN_OR_RETURN(int pid, agent.spawn(wrapped, {}, out.path));

  StreamedExit result;
  const auto deadline = Clock::now() + timeout;
  for (;;) {
    // Waiting in the guest paces the loop: up to 100 ms between reads.
    TRACEBED_ASSIGN_OR_RETURN(agent::WaitResult w, agent.kill(pid, 0, 100ms));
    if (!w.exited && Clock::now() >= deadline) {
      result.timed_out = true;
      TRACEBED_ASSIGN_OR_RETURN(w, agent.kill(pid, SIGKILL, 5000ms));
    }
    // The stderr file appears once the shell has started.
    TRACEBED_TRY(out.drain(agent));
    (void)err.drain(agent);
    if (w.exited || result.timed_out) {
      TRACEBED_TRY(out.drain(agent));
      (void)err.drain(agent);
      result.exit_code = w.exit_code;
      result.signal = w.signal;
      break;
    }
  }
  (void)guest.run({"rm", "-f", out.path, err.path}, 10s);
  return result;
}

}  // namespace tracebed::vm
