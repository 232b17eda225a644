// Runs every guest suite binary on each kernel, all kernels' suites from one
// pool of guests (suite_pool.h), as `tracebed test` does for one: a suite
// binary per guest, its kernel given by --tracebed_kernel (framework/testing).
// Each suite writes gtest's own JUnit XML (which, unlike its JSON, keeps
// GTEST_SKIP reasons) and its output, guest console faults included, to a
// log in the output directory (logs/<kernel>/).
// A suite that dies or hangs without a report becomes a failed "(suite)" row
// carrying the tail of its log; the run goes on with the next suite.
#pragma once

#include <chrono>
#include <filesystem>
#include <functional>
#include <string>
#include <vector>

#include "framework/base/result.h"
#include "framework/matrix/boot_check.h"
#include "framework/matrix/results.h"

namespace tracebed::matrix {

struct KernelJob {
  std::string kernel;            // catalogue name or image path, passed to the suites
  std::string identity;          // what the kernel image is (packages and hashes, or the image's hash)
  std::string expected_release;  // from the catalogue
  std::vector<std::string> suite_args;  // flags for this kernel's suites only (e.g. its libvirt URI)
};

struct RunOptions {
  std::vector<KernelJob> kernels;
  std::vector<std::filesystem::path> suites;
  // Other files the results depend on (the guest agent, the probe target);
  // hashed with the suites into each kernel's stamp.
  std::vector<std::filesystem::path> stamp_files;
  std::string filter;          // gtest filter, empty for all
  std::string accel;           // passed as --tracebed_accel when not empty
  std::vector<std::string> suite_args;  // more flags for every suite binary (e.g. --tracebed_launcher=libvirt)
  int jobs = 1;                // suite binaries (guests) at a time, over all kernels
  std::filesystem::path out;
  std::chrono::seconds suite_timeout{std::chrono::hours(1)};
  bool force = false;          // rerun kernels whose results are current
  // The one boot of each kernel before its suites (boot_check.h); a kernel
  // it refuses is "did not boot" and its suites are not run.
  std::function<Result<Booted>(const std::string& kernel, const std::vector<std::string>& suite_args)> boot_check =
      boot_once;
};

// A file-name-safe form of a kernel name (catalogue names are already).
std::string file_name_for(std::string_view kernel);

// Hash of the suite binaries' contents: results are current only for the
// same suites. A missing binary is part of the hash, not an error (it is
// reported as a failed row when run).
std::string suites_hash(const std::vector<std::filesystem::path>& suites);

// What a kernel's results depend on: the suites, the kernel, the filter,
// the accelerator and the timeout (which decides what counts as hung).
std::string stamp_for(const KernelJob& job, std::string_view suites_hash, std::string_view filter,
                      std::string_view accel, std::chrono::seconds timeout);

// Turns one suite binary's run into results: its JUnit file (may be missing
// or corrupt), exit status and log, and the console of its last guest when
// the suite was killed or died (empty if none was left). Exposed for tests.
std::vector<TestResult> suite_results(const std::string& suite_binary, const std::filesystem::path& junit,
                                      int status, bool timed_out, std::chrono::seconds timeout,
                                      const std::filesystem::path& log, std::string* release,
                                      std::string* accelerator, const std::filesystem::path& console = {});

// The last lines of a log, at most `max_lines` and about 6 KiB.
std::string log_tail(std::string_view text, size_t max_lines = 60);

// Runs what is not current, loads what is, writes DIR/runs/<kernel>.json as
// each kernel finishes. Progress goes to stderr.
Result<Matrix> run_matrix(const RunOptions& options);

// Writes report.md, report.html, summary.json, junit/<kernel>.xml and
// ktap/<kernel>.ktap into `dir`.
Status write_outputs(const Matrix& m, const std::filesystem::path& dir);

}  // namespace tracebed::matrix
