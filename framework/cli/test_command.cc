// `tracebed test --kernel NAME [--junit FILE] [--filter F]`: runs every guest
// suite binary against one kernel, prints a pass/skip/fail table and writes
// JUnit XML. Each suite boots its own guest (framework/testing).
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <sstream>

#include <fmt/format.h>

#include "framework/cli/commands.h"
#include "framework/matrix/junit.h"
#include "framework/matrix/runner.h"
#include "framework/vm/catalogue.h"
#include "framework/vm/process.h"

namespace tracebed::cli {
namespace {

namespace fs = std::filesystem;

// The build writes the list of suite binaries beside the executable
// (suites/CMakeLists.txt).
std::vector<fs::path> suite_binaries() {
  fs::path self = fs::read_symlink("/proc/self/exe");
  std::vector<fs::path> out;
  std::ifstream in(self.parent_path() / "tracebed-suites.txt");
  for (std::string line; std::getline(in, line);)
    if (!line.empty()) out.emplace_back(line);
  return out;
}

}  // namespace

void add_test_command(CLI::App& app) {
  auto* cmd = app.add_subcommand("test", "run the guest suites on one kernel; table + JUnit XML");
  struct Args {
    std::string kernel, junit, filter;
  };
  auto args = std::make_shared<Args>();
  cmd->add_option("-k,--kernel", args->kernel, "catalogue name or bzImage path (default: debian-6.12)");
  cmd->add_option("--junit", args->junit, "write JUnit XML here");
  cmd->add_option("--filter", args->filter, "GoogleTest filter (e.g. Smoke.*)");
  cmd->final_callback([args] {
    if (args->kernel.empty()) {
      auto c = vm::Catalogue::load();
      if (!c) fail(c.error().message);
      args->kernel = c->default_kernel();
    }
    auto suites = suite_binaries();
    if (suites.empty()) fail("no guest suites were built (tracebed-suites.txt is missing beside the executable)");
    fs::path tmp = vm::cache_dir() / "run" / fmt::format("test-{}", getpid());
    fs::create_directories(tmp);
    // gtest's XML report, read as `tracebed matrix` reads it: unlike its
    // JSON, the XML keeps GTEST_SKIP's reason.
    matrix::KernelRun run;
    run.kernel = args->kernel;
    const auto timeout = std::chrono::seconds(std::chrono::hours(2));
    for (const auto& suite : suites) {
      const std::string name = suite.filename().string();
      if (!fs::exists(suite)) {
        matrix::TestResult missing;
        missing.suite = name;
        missing.name = "(suite)";
        missing.state = matrix::State::fail;
        missing.message = "suite binary not built: " + suite.string();
        run.tests.push_back(std::move(missing));
        continue;
      }
      fs::path report = tmp / (name + ".xml");
      std::vector<std::string> argv = {suite.string(), "--tracebed_kernel=" + args->kernel,
                                       "--gtest_output=xml:" + report.string(), "--gtest_brief=1"};
      if (!args->filter.empty()) argv.push_back("--gtest_filter=" + args->filter);
      fmt::print(stderr, "tracebed: running {} on {}\n", name, args->kernel);
      auto r = vm::run_process(argv, timeout, vm::Output::to_stderr);
      if (!r) fail(r.error().message);
      auto got = matrix::suite_results(name, report, r->status, false, timeout, {}, &run.release, &run.accelerator);
      run.tests.insert(run.tests.end(), got.begin(), got.end());
    }
    std::error_code ec;
    fs::remove_all(tmp, ec);

    size_t width = 20;
    for (const auto& t : run.tests) width = std::max(width, t.full_name().size());
    fmt::print("\n{:<{}}  {:<6} {:>8}\n", "TEST", width, "RESULT", "SECONDS");
    for (const auto& t : run.tests) {
      static constexpr std::string_view kShown[] = {"PASS", "SKIP", "FAIL"};
      fmt::print("{:<{}}  {:<6} {:>8.2f}", t.full_name(), width, kShown[static_cast<int>(t.state)], t.seconds);
      if (t.state == matrix::State::skip) fmt::print("  {}", t.summary());
      fmt::print("\n");
    }
    const int failed = run.count(matrix::State::fail);
    fmt::print("\n{}: {} passed, {} skipped, {} failed\n", args->kernel, run.count(matrix::State::pass),
               run.count(matrix::State::skip), failed);
    for (const auto& t : run.tests) {
      if (t.state != matrix::State::fail) continue;
      fmt::print("\nFAIL {}\n{}{}\n", t.full_name(), t.location.empty() ? "" : t.location + "\n", t.message);
      if (!t.console.empty()) fmt::print("{}\n", t.console);
    }
    if (!args->junit.empty()) {
      std::ofstream(args->junit) << matrix::write_junit(run);
      fmt::print("JUnit XML: {}\n", args->junit);
    }
    std::fflush(stdout);
    std::exit(failed || run.tests.empty() ? 1 : 0);
  });
}

}  // namespace tracebed::cli
