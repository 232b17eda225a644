// Runs guest suite binaries on one or more kernels from one pool of workers:
// every (kernel, suite) is a run, a long suite is split into GoogleTest
// shards (schedule.h), and the runs of all kernels start longest first, so
// that two kernels of a matrix share the machine as one kernel's suites do.
// `tracebed test` is the one-kernel case, `tracebed matrix` the other.
//
// Each run is a process with its own guest; its output goes to a log and
// gtest's XML report (which, unlike its JSON, keeps GTEST_SKIP reasons) to a
// file beside it, both under work_dir/<kernel>/. A run that fails or is
// killed keeps its last guest's console there too (<log stem>.console.log).
#pragma once

#include <chrono>
#include <cstddef>
#include <filesystem>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "framework/matrix/results.h"

namespace tracebed::matrix {

// One suite binary's results on one kernel, shards merged in the order the
// binary lists its cases.
struct SuiteOutcome {
  std::vector<TestResult> tests;
  std::string release, accelerator;  // from the report's properties
  double wall_seconds = 0;           // summed over shards
  bool left_out = false;             // not started: stop_after_failure after another run failed

  double start_seconds() const;  // guest boots and restores, summed
  int count(State s) const;
};

struct PoolKernel {
  std::string name;                // passed as --tracebed_kernel
  std::vector<std::string> args;   // more flags for this kernel's suites only
};

// One process of the pool, as on_run_done sees it.
struct PoolRun {
  size_t kernel = 0, suite = 0;
  size_t shard = 0, shards = 1;
  std::filesystem::path log;
  SuiteOutcome outcome;  // this run's share
};

struct PoolOptions {
  std::vector<PoolKernel> kernels;
  std::vector<std::filesystem::path> suites;
  std::string filter;                   // gtest filter, empty for all
  std::vector<std::string> suite_args;  // more flags for every suite binary
  size_t jobs = 1;                      // processes (guests) at a time
  std::chrono::seconds timeout{std::chrono::hours(1)};
  std::filesystem::path work_dir;
  // With one job, each suite's output also goes to our stderr as it comes.
  bool stream_when_serial = false;
  // Once a run has a failed test, runs not yet started are left out (their
  // outcome stays empty): a yes/no answer, as `tracebed mutate` wants one.
  bool stop_after_failure = false;
  // Called as each run ends and as each kernel's last run ends (under a
  // lock: callbacks never overlap).
  std::function<void(const PoolRun&, size_t finished, size_t total)> on_run_done;
  std::function<void(size_t kernel, const std::vector<SuiteOutcome>&, double wall_seconds)> on_kernel_done;
};

// Runs every suite on every kernel; returns outcomes[kernel][suite] (empty
// for a suite of which the filter selects no case: it is not started). Suite
// wall times of a run with no filter are kept per kernel in the cache and
// plan the next run's order and shards.
std::vector<std::vector<SuiteOutcome>> run_suite_pool(const PoolOptions& options);

// The cases of a suite binary the filter selects, in its own order (from
// --gtest_list_tests); nothing when the binary cannot list them.
std::optional<std::vector<std::string>> listed_cases(const std::filesystem::path& suite, const std::string& filter);

}  // namespace tracebed::matrix
