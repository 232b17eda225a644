// Running a program to completion: its output captured, shown, logged or
// streamed, a deadline after which it is killed, and what it cost (wall
// time, CPU time, peak RSS from wait4's rusage).
//
//   TRACEBED_ASSIGN_OR_RETURN(base::ProcessResult r, base::run_process({"dpkg", "-x", deb, dir}, 600s));
//   if (r.status != 0) return Error{fmt::format("dpkg -x {} failed: {}", deb, r.output)};
#pragma once

#include <sys/types.h>

#include <chrono>
#include <filesystem>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "framework/base/result.h"

namespace tracebed::base {

// Where the child's stdout and stderr go (its stdin is always /dev/null).
enum class Output {
  capture,         // both, interleaved, into ProcessResult::output
  capture_stdout,  // stdout into ProcessResult::output; stderr to /dev/null (a tool's warnings)
  to_stderr,       // both onto our stderr, not kept
  tee,             // both: kept and shown (progress a caller still inspects, e.g. apt-get's "not found")
  to_file,         // both into ProcessOptions::log, so a hang still leaves what was printed
  stream,          // stdout to on_output only, not kept (it may be gigabytes); stderr to /dev/null
};

struct ProcessOptions {
  std::chrono::milliseconds timeout{0};  // zero: none
  Output output = Output::capture;
  std::filesystem::path cwd;  // empty: ours
  std::filesystem::path log;  // Output::to_file: created or truncated
  // Sees each chunk of output as it arrives (capture*, tee, stream): a long
  // build's log, a benchmark's output hashed without keeping it.
  std::function<void(std::string_view)> on_output;
  // Pinned (with every thread it starts) to the first CPU we may run on.
  bool one_cpu = false;
  // The child is killed when we die (PR_SET_PDEATHSIG). That needs fork;
  // without it the child starts with posix_spawn, a vfork that copies none
  // of our page tables (~1 ms a run for a big parent: what a benchmark
  // wants). Either way a child with a deadline leads its own process group,
  // which the deadline kills whole.
  bool die_with_parent = true;
};

struct ProcessResult {
  int status = 0;          // exit code, or 128 + signal
  bool timed_out = false;  // killed at the deadline (status then says SIGKILL)
  std::string output;      // Output::capture, capture_stdout and tee
  pid_t pid = 0;           // the child's pid (and its process group's, when it leads one)
  std::chrono::nanoseconds wall{};
  double cpu_seconds = 0;  // user + system
  long max_rss_kib = 0;    // its peak RSS (which counts pages shared with us until its exec)
};

// Runs argv (PATH lookup). A program that cannot be started is an Error
// naming it; a non-zero exit or a timeout is a result, not an Error.
Result<ProcessResult> run_process(const std::vector<std::string>& argv, const ProcessOptions& options);

// The common case: a timeout is an Error too ("X did not finish within N s").
Result<ProcessResult> run_process(const std::vector<std::string>& argv, std::chrono::seconds timeout,
                                  Output output = Output::capture, const std::filesystem::path& cwd = {},
                                  const std::function<void(std::string_view)>& on_output = {});

// Starting a program that outlives the call (a QEMU guest, a local agent):
// each standard descriptor is one of ours, /dev/null or left as it is.
inline constexpr int kDevNull = -1;
inline constexpr int kInherit = -2;
struct StartOptions {
  int stdin_fd = kDevNull;
  int stdout_fd = kInherit;
  int stderr_fd = kInherit;
};

// Starts argv (PATH lookup) and returns its pid without waiting; the child
// is killed when we die (PR_SET_PDEATHSIG). A program that cannot be
// executed is the Error ("cannot start NAME: No such file or directory").
Result<pid_t> start_process(const std::vector<std::string>& argv, const StartOptions& options = {});

// The program PATH would run for `name` (a name with a '/' is taken as it
// is, made absolute), or an Error naming it.
Result<std::filesystem::path> find_program(const std::string& name);

}  // namespace tracebed::base
