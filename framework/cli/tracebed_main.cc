// tracebed: test Linux kernel tracing for real.
#include <cstdio>
#include <cstdlib>
#include <string_view>
#include <utility>

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include "framework/base/install_layout.h"
#include "framework/cli/commands.h"

namespace tracebed::cli {

std::string tracebed_exe() {
  std::string self = base::executable_path().string();
  return self.empty() ? "tracebed" : self;
}

void exit_with(Exit status) {
  std::fflush(stdout);
  std::exit(static_cast<int>(status));
}

void fail(std::string_view message, Exit status) {
  std::fflush(stdout);
  fmt::print(stderr, "tracebed: {}\n", message);
  exit_with(status);
}

void usage_error(std::string_view message) { fail(message, Exit::usage); }

void cannot_run(std::string_view message) { fail(message, Exit::infrastructure); }

}  // namespace tracebed::cli

int main(int argc, char** argv) {
  using Add = void (*)(CLI::App&);
  static constexpr std::pair<std::string_view, Add> kCommands[] = {
      {"report", tracebed::cli::add_report_command},   {"bench", tracebed::cli::add_bench_command},
      {"kernels", tracebed::cli::add_kernels_command}, {"run", tracebed::cli::add_run_command},
      {"shell", tracebed::cli::add_shell_command},     {"test", tracebed::cli::add_test_command},
      {"matrix", tracebed::cli::add_matrix_command},   {"sqlhist", tracebed::cli::add_sqlhist_command},
      {"cache", tracebed::cli::add_cache_command},     {"bpf-ctx", tracebed::cli::add_bpf_ctx_command},
      {"coverage", tracebed::cli::add_coverage_command}, {"modules", tracebed::cli::add_modules_command},
      {"bisect", tracebed::cli::add_bisect_command},
      {"bisect-step", tracebed::cli::add_bisect_step_command},
      {"mutate", tracebed::cli::add_mutate_command},
  };
  CLI::App app{"tracebed: test Linux kernel tracing in real guests, decode trace.dat"};
  app.set_version_flag("--version", "tracebed " TRACEBED_VERSION);
  app.footer(R"(Environment:
  TRACEBED_CACHE         cache of kernels, images, snapshots, timings (default: $XDG_CACHE_HOME/tracebed,
                         else ~/.cache/tracebed)
  TRACEBED_CATALOGUE     kernel catalogue (default: vmimages/kernels.json of the source tree)
  TRACEBED_ACCEL         kvm or tcg for every guest (default: probe KVM once, else TCG)
  TRACEBED_LAUNCHER      qemu or libvirt (default: qemu)
  TRACEBED_LIBVIRT_URI   libvirt connection for the libvirt launcher
  TRACEBED_NO_SNAPSHOT   1: boot every guest cold instead of restoring a snapshot
  TRACEBED_KEEP_LOGS     1: keep each guest's run directory (console log, sockets)
  TRACEBED_AGENT         guest agent binary to put in guest images (default: beside tracebed)
  TRACEBED_PROBE_TARGET  probe target binary the uprobe suites run (default: beside tracebed)
  TRACEBED_BENCH_KERNELS kernels tracebed_vm_benchmarks boots (comma-separated; default debian-6.12)

Exit status (every command):
  0    everything passed (report, sqlhist, kernels ...: done)
  1    a test failed (run: the guest command's own status; report: an input it cannot decode;
       kernels check: a required option is missing; matrix --compare: new failures)
  2    usage error: bad arguments, an unknown kernel or suite, a --compare directory without
       readable results
  124  timeout: the command in the guest (run --timeout) or a suite binary (test, matrix --timeout)
  125  could not build, fetch or boot the kernel or reach the guest agent: nothing was tested
       (git bisect run skips the commit)
Each command's --help lists its options.)");
  app.require_subcommand(0, 1);
  // Setting up every command's options takes ~1 M instructions, a tenth of
  // a small `report`: when the first argument names a command, only that
  // one is set up. Anything else (--help, a typo) sees them all.
  bool named = false;
  for (const auto& [name, add] : kCommands) {
    if (argc > 1 && name == argv[1]) {
      add(app);
      named = true;
    }
  }
  if (!named)
    for (const auto& [name, add] : kCommands) add(app);
  // CLI11's own exit codes for parse errors (105-114) become the usage
  // status; --help and --version still exit 0.
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    int status = app.exit(e);
    return status == 0 ? 0 : static_cast<int>(tracebed::cli::Exit::usage);
  }
  if (app.get_subcommands().empty()) {
    fmt::print(stderr, "{}", app.help());
    return static_cast<int>(tracebed::cli::Exit::usage);
  }
  return 0;
}
