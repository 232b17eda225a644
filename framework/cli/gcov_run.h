// `--gcov` for the commands that run suites (test; matrix and mutate take
// the kernel it builds): the profiled kernel, where the suites leave their
// counts, and the report at the end.
#pragma once

#include <cstdio>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "framework/coverage/gcov_report.h"

namespace tracebed::cli {

// The kernel to boot for `kernel` profiled under `paths`: a catalogue build
// kernel is built with gcov (or found built) and its entry directory
// returned; a directory (a tree build) must have been built with gcov.
// Exits with the reason otherwise.
std::string gcov_kernel_or_exit(const std::string& kernel, const std::vector<std::string>& paths, unsigned jobs);

// Makes `counts` an empty directory for a run's counts; exits if it cannot.
void empty_gcov_counts(const std::filesystem::path& counts);

// The suites started after this leave their counts in `counts`, emptied
// first ($TRACEBED_GCOV_DIR, framework/testing/kernel_gcov.h).
void collect_gcov_counts(const std::filesystem::path& counts);

// Writes the report of `kernel_dir`'s counts into `out` and prints where it
// is and the totals; the report, or nothing when it failed (said on stderr).
std::optional<coverage::GcovReport> report_gcov(const std::string& kernel_dir, const std::filesystem::path& counts,
                                                const std::filesystem::path& out, FILE* where);

}  // namespace tracebed::cli
