// Which suite binaries run when, for `tracebed test -j N`: the longest
// first, and a suite long enough to hold up the others split into GoogleTest
// shards (GTEST_TOTAL_SHARDS / GTEST_SHARD_INDEX), each its own process with
// its own guest. Once guests start from a snapshot in under a second, a
// shard costs about nothing more than the tests it runs.
//
// How long a suite takes comes from the last run on the same kernel (a small
// JSON file in the cache); a suite never timed counts as the average of the
// others, and without any history nothing is split.
#pragma once

#include <cstddef>
#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include "framework/base/result.h"

namespace tracebed::matrix {

struct SuiteToSchedule {
  std::string name;      // suite binary's file name
  size_t tests = 0;      // cases the filter selects (a shard needs at least one)
  double seconds = -1;   // last run's wall time; < 0: unknown
};

struct ScheduledRun {
  size_t suite = 0;      // index into the suites given
  size_t shard = 0;      // 0 .. shards-1
  size_t shards = 1;
  double estimate = 0;   // seconds
};

// Runs in the order to start them: longest estimate first. A suite is split
// so that no shard is longer than about the whole set's time per job (with a
// floor of min_shard_seconds, and at most max_shards or one shard per case).
std::vector<ScheduledRun> schedule_suites(const std::vector<SuiteToSchedule>& suites, size_t jobs,
                                          double min_shard_seconds = 10, size_t max_shards = 4);

// Suite wall times of the last run on a kernel: name -> seconds.
std::map<std::string, double> read_suite_timings(const std::filesystem::path& file);
Status write_suite_timings(const std::filesystem::path& file, const std::map<std::string, double>& timings);

}  // namespace tracebed::matrix
