// summary.json: the machine-readable form of a matrix run, also what
// `tracebed matrix --compare` and resuming read back.
#pragma once

#include <filesystem>
#include <string>
#include <string_view>

#include "framework/base/result.h"
#include "framework/matrix/results.h"

namespace tracebed::matrix {

inline constexpr std::string_view kSummaryFormat = "tracebed-matrix 1";

std::string write_summary(const Matrix& m);
std::string write_kernel_run(const KernelRun& run);  // one kernel (the resume record)

// `source` names the input in errors.
Result<Matrix> read_summary(std::string_view json, std::string_view source);
Result<KernelRun> read_kernel_run(std::string_view json, std::string_view source);

// Reads DIR/summary.json; a missing directory or file is an Error naming it.
Result<Matrix> load_summary(const std::filesystem::path& dir);

}  // namespace tracebed::matrix
