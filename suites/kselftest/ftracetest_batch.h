// ftracetest cases run in batches on the suite's guest: one ftracetest call
// for the selected cases of an area, as ftracetest itself runs them, polled
// for its result lines. A case that makes no progress for the timeout, or
// during which the guest dies, ends the batch: that case alone gets the
// error (with the console), the guest is killed, and the cases after it run
// in a new batch on a fresh guest. When the guest dies with more than one
// case's result unread, none is blamed (the log's last second died with it):
// each runs again alone, and the death is still theirs (`unblamed_death`)
// when every one passes alone.
#pragma once

#include <chrono>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "framework/coverage/selftest_output.h"

namespace tracebed::suites {

struct FtracetestResult {
  struct Run {
    coverage::FtracetestRun run;
    std::string log;      // its kept log (non-PASS runs only)
    std::string console;  // a console fault seen while it ran
  };
  std::vector<Run> runs;  // the top level's first
  std::string error;      // the case hung or crashed the guest
  double seconds = 0;
};

// Runs `cases` (paths under test.d, in order) in the guest under
// `ftrace_dir`, with `path_prefix` first on the PATH, ftracetest read by
// `shell` (quoted words; empty: its #! line's /bin/sh). `instance` holds the
// cases flagged to run on an instance too. Every case of `cases` up to and
// including the one that failed the batch gets a result; the rest none (nor
// that one, when it is not certain which case killed the guest: then
// `unblamed_death`, when given, gets the error, for the cases left without
// a result).
std::map<std::string, FtracetestResult> run_ftracetest_batch(const std::vector<std::string>& cases,
                                                             const std::set<std::string>& instance,
                                                             const std::string& ftrace_dir,
                                                             const std::string& path_prefix,
                                                             const std::string& shell,
                                                             std::chrono::seconds stall_timeout,
                                                             std::string* unblamed_death = nullptr);

}  // namespace tracebed::suites
