// tracebed: test Linux kernel tracing for real.
#include <cstdio>
#include <cstdlib>
#include <string_view>
#include <utility>

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include "framework/cli/commands.h"

namespace tracebed::cli {

void fail(std::string_view message) {
  std::fflush(stdout);
  fmt::print(stderr, "tracebed: {}\n", message);
  std::exit(1);
}

}  // namespace tracebed::cli

int main(int argc, char** argv) {
  using Add = void (*)(CLI::App&);
  static constexpr std::pair<std::string_view, Add> kCommands[] = {
      {"report", tracebed::cli::add_report_command},   {"bench", tracebed::cli::add_bench_command},
      {"kernels", tracebed::cli::add_kernels_command}, {"run", tracebed::cli::add_run_command},
      {"shell", tracebed::cli::add_shell_command},     {"test", tracebed::cli::add_test_command},
      {"matrix", tracebed::cli::add_matrix_command},   {"sqlhist", tracebed::cli::add_sqlhist_command},
      {"coverage", tracebed::cli::add_coverage_command},
  };
  CLI::App app{"tracebed: test Linux kernel tracing in real guests, decode trace.dat"};
  app.require_subcommand(1);
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
  CLI11_PARSE(app, argc, argv);
  return 0;
}
