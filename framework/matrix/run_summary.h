// What a person reads at the end of a run: the totals, each failure with
// its first message, and the skips (then the unresolved tests) grouped by
// reason with their counts; and the full per-test table, which goes to a file.
//
//   debian-6.12 (6.12.57+deb13-amd64): 545 passed, 116 skipped, 0 failed
//   skipped, by reason:
//     28 × needs user_events: no "user_events_data" in tracefs
#pragma once

#include <string>

#include "framework/matrix/results.h"

namespace tracebed::matrix {

struct SummaryLimits {
  size_t failures = 12;     // failures shown with their message; the rest counted
  size_t skip_reasons = 12; // reasons shown; the rest counted
};

// A few dozen lines at most, whatever the number of tests.
std::string write_run_summary(const KernelRun& run, const SummaryLimits& limits = {});

// Every test with its result, time and (all but passes) first line of
// its message, as Markdown; failures then again with their whole message
// and console excerpt.
std::string write_test_table(const KernelRun& run);

}  // namespace tracebed::matrix
