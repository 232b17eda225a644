// Sub-commands of the `tracebed` executable; each file adds one.
#pragma once

#include <string_view>

#include <CLI/CLI.hpp>

#include "framework/base/result.h"

namespace tracebed::cli {

// Prints "tracebed: <message>" to stderr and exits with status 1.
[[noreturn]] void fail(std::string_view message);

void add_report_command(CLI::App& app);
void add_bench_command(CLI::App& app);
void add_kernels_command(CLI::App& app);
void add_run_command(CLI::App& app);
void add_shell_command(CLI::App& app);
void add_test_command(CLI::App& app);
void add_matrix_command(CLI::App& app);
void add_sqlhist_command(CLI::App& app);

}  // namespace tracebed::cli
