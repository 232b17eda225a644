// tracebed: test Linux kernel tracing for real.
#include <cstdio>
#include <cstdlib>

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
  CLI::App app{"tracebed: test Linux kernel tracing in real guests, decode trace.dat"};
  app.require_subcommand(1);
  tracebed::cli::add_report_command(app);
  tracebed::cli::add_bench_command(app);
  tracebed::cli::add_kernels_command(app);
  tracebed::cli::add_run_command(app);
  tracebed::cli::add_shell_command(app);
  tracebed::cli::add_test_command(app);
  tracebed::cli::add_matrix_command(app);
  tracebed::cli::add_sqlhist_command(app);
  CLI11_PARSE(app, argc, argv);
  return 0;
}
