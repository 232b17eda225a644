// Sub-commands of the `tracebed` executable; each file adds one.
#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include <CLI/CLI.hpp>

#include "framework/base/result.h"

namespace tracebed::matrix {
enum class Verdict;
}

namespace tracebed::vm {
struct GuestOptions;
class Catalogue;
class Guest;
struct KernelSpec;
}

namespace tracebed::tracefs {
class Tracefs;
}

namespace tracebed::cli {

// Exit statuses, the same for every command (the "Exit status" section of
// `tracebed --help`, docs/guests.md). 124 and 125 are what timeout(1) and
// `git bisect run` mean by them: a timeout, and "cannot test this one, skip".
enum class Exit : int {
  passed = 0,           // everything asked for was done and passed
  failed = 1,           // a test failed (`run`: the guest command's own status)
  usage = 2,            // bad arguments or an input that is not what was asked for
  timeout = 124,        // a command or suite ran out of time
  infrastructure = 125  // could not fetch, build or boot the kernel, or start the agent
};

// Flushes stdout and exits with `status`.
[[noreturn]] void exit_with(Exit status);
// Prints "tracebed: <message>" to stderr and exits with `status`.
[[noreturn]] void fail(std::string_view message, Exit status = Exit::failed);
// fail() with Exit::usage and Exit::infrastructure.
[[noreturn]] void usage_error(std::string_view message);
[[noreturn]] void cannot_run(std::string_view message);

// This executable's path, for the commands that run it again as a child
// (bisect's steps, bench's sides); "tracebed" when /proc cannot say.
std::string tracebed_exe();

// The exit status of a set of test results (matrix::verdict()).
Exit exit_for(matrix::Verdict verdict);

// The catalogue, or exit 125 (it cannot be read), and a kernel of it by name
// or bzImage path, or exit 2 (no such kernel).
vm::Catalogue load_catalogue();
vm::KernelSpec resolve_kernel(const vm::Catalogue& catalogue, const std::string& name, std::string_view option = "");

// A guest of --kernel booted for a command that reads its tracefs (sqlhist,
// bpf-ctx), or exit 2 (no such kernel) or 125 (it does not boot); and that
// guest's tracefs through its agent.
std::unique_ptr<vm::Guest> boot_guest(const std::string& kernel, const std::string& accel);
tracefs::Tracefs tracefs_of(vm::Guest& guest);

// The suite binaries' flags for --launcher / --libvirt-uri (empty: unset).
std::vector<std::string> launcher_args(const std::string& launcher, const std::string& libvirt_uri);

// The options of a command that boots one guest, written into `options`
// as they are parsed: -k/--kernel, --cpus, --memory, --accel, and --tool
// (repeatable, one program each, so that a command can follow).
void add_guest_options(CLI::App& cmd, vm::GuestOptions& options);

// --timeout in whole seconds, 1 s to a week: every command's the same, and
// its error names that range (CLI11's own check names the largest double).
CLI::Option* add_timeout_option(CLI::App& cmd, unsigned& seconds, const std::string& help);

void add_report_command(CLI::App& app);
void add_bench_command(CLI::App& app);
void add_kernels_command(CLI::App& app);
void add_modules_command(CLI::App& app);
// `kernels check`, a subcommand of `kernels`.
void add_kernels_check_command(CLI::App& kernels);
void add_run_command(CLI::App& app);
void add_shell_command(CLI::App& app);
void add_test_command(CLI::App& app);
void add_matrix_command(CLI::App& app);
void add_sqlhist_command(CLI::App& app);
void add_bpf_ctx_command(CLI::App& app);
void add_cache_command(CLI::App& app);
void add_coverage_command(CLI::App& app);
void add_bisect_command(CLI::App& app);
void add_mutate_command(CLI::App& app);
// The hidden step `git bisect run` runs for `tracebed bisect`.
void add_bisect_step_command(CLI::App& app);

}  // namespace tracebed::cli
