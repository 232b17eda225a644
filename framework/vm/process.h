// Small host helpers: running a tool (apt-get, dpkg, xz, ldd) with a
// timeout, and the cache directory everything downloaded or built lives in.
#pragma once

#include <chrono>
#include <filesystem>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "framework/base/result.h"

namespace tracebed::vm {

struct ProcessResult {
  int status = 0;      // exit code, or 128 + signal
  std::string output;  // stdout and stderr, interleaved (empty when passed through)
};

// capture: keep the output; to_stderr: show it only; tee: both (progress
// that a caller still needs to inspect, e.g. apt-get's "not found").
enum class Output { capture, to_stderr, tee };

// Runs argv (PATH lookup), killing it after `timeout`. A tool that cannot be
// started is an Error naming it; a non-zero exit is a result, not an Error.
// `on_output` sees each chunk of output as it arrives (a long build's log and
// progress lines).
Result<ProcessResult> run_process(const std::vector<std::string>& argv, std::chrono::seconds timeout,
                                  Output output = Output::capture, const std::filesystem::path& cwd = {},
                                  const std::function<void(std::string_view)>& on_output = {});

// $TRACEBED_CACHE, else $XDG_CACHE_HOME/tracebed, else ~/.cache/tracebed.
std::filesystem::path cache_dir();

// Hex FNV-1a 64 of the data: a content key for cache file names.
std::string content_hash(std::string_view data);

Result<std::string> read_text_file(const std::filesystem::path& path);
Status write_file_atomic(const std::filesystem::path& path, std::string_view data);

// Progress lines ("tracebed: fetching ...") go to stderr so that `tracebed
// run` keeps stdout for the guest command's output.
void progress(std::string_view message);

}  // namespace tracebed::vm
