// Sub-commands of the `tracebed` executable; each file adds one.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include <CLI/CLI.hpp>

#include "framework/base/result.h"

namespace tracebed::vm {
struct GuestOptions;
}

namespace tracebed::cli {

// Prints "tracebed: <message>" to stderr and exits with status 1.
[[noreturn]] void fail(std::string_view message);

// The suite binaries' flags for --launcher / --libvirt-uri (empty: unset).
std::vector<std::string> launcher_args(const std::string& launcher, const std::string& libvirt_uri);

// The options of a command that boots one guest, written into `options`
// as they are parsed: -k/--kernel, --cpus, --memory, --accel, and --tool
// (repeatable, one program each, so that a command can follow).
void add_guest_options(CLI::App& cmd, vm::GuestOptions& options);

void add_report_command(CLI::App& app);
void add_bench_command(CLI::App& app);
void add_kernels_command(CLI::App& app);
void add_modules_command(CLI::App& app);
void add_run_command(CLI::App& app);
void add_shell_command(CLI::App& app);
void add_test_command(CLI::App& app);
void add_matrix_command(CLI::App& app);
void add_sqlhist_command(CLI::App& app);
void add_cache_command(CLI::App& app);
void add_coverage_command(CLI::App& app);

}  // namespace tracebed::cli
