// What people read: report.md and a self-contained report.html (inline CSS,
// nothing loaded from the network), and KTAP per kernel
// (Documentation/dev-tools/ktap.rst, version 1).
#pragma once

#include <string>
#include <string_view>

#include "framework/matrix/results.h"

namespace tracebed::matrix {

// The kernel x test grid, per-suite totals, releases, wall-time bars, skip
// and unresolved reasons, and failures with their console excerpts.
std::string write_markdown(const Matrix& m);
std::string write_html(const Matrix& m);

// A Markdown table cell: one line, its column separators escaped.
std::string md_cell(std::string_view s);

// One top-level test per gtest suite, its cases as nested subtests.
std::string write_ktap(const KernelRun& run);

}  // namespace tracebed::matrix
