// `tracebed test --kernel NAME [--junit FILE] [--filter F] [--suites a,b]
// [--launcher qemu|libvirt] [--libvirt-uri URI] [--ktap]`: runs the guest
// suite binaries against one kernel, prints a pass/skip/fail table and writes
// JUnit XML. Each suite boots its own guest (framework/testing).
// `tracebed test --local` runs them on this machine's own kernel instead
// (the agent runs here; tracefs through its local files), skipping every
// suite with the reason when this machine cannot (not root, no tracefs).
#include <sys/utsname.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <sstream>

#include <fmt/format.h>

#include "framework/cli/commands.h"
#include "framework/matrix/junit.h"
#include "framework/matrix/report.h"
#include "framework/matrix/runner.h"
#include "framework/vm/catalogue.h"
#include "framework/vm/local_tracing.h"
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

std::vector<std::string> launcher_args(const std::string& launcher, const std::string& libvirt_uri) {
  std::vector<std::string> out;
  if (!launcher.empty()) out.push_back("--tracebed_launcher=" + launcher);
  if (!libvirt_uri.empty()) out.push_back("--tracebed_libvirt_uri=" + libvirt_uri);
  return out;
}

void add_test_command(CLI::App& app) {
  auto* cmd = app.add_subcommand("test", "run the guest suites on one kernel; table + JUnit XML");
  struct Args {
    std::string kernel, junit, filter, launcher, libvirt_uri;
    std::vector<std::string> suites;
    bool local = false, ktap = false;
  };
  auto args = std::make_shared<Args>();
  cmd->add_option("-k,--kernel", args->kernel, "catalogue name or bzImage path (default: debian-6.12)");
  cmd->add_option("--junit", args->junit, "write JUnit XML here");
  cmd->add_option("--filter", args->filter, "GoogleTest filter (e.g. Smoke.*)");
  cmd->add_option("--suites", args->suites, "only these suites (e.g. smoke,basics: tracebed_suite_<name>)")
      ->delimiter(',');
  cmd->add_flag("--local", args->local,
                "run the suites on this machine's own kernel and tracefs (as root; skipped, with the reason, where "
                "that cannot work)");
  cmd->add_flag("--ktap", args->ktap, "print KTAP on stdout (the table goes to stderr)");
  cmd->add_option("--launcher", args->launcher, "qemu or libvirt (default: $TRACEBED_LAUNCHER, else qemu)")
      ->check(CLI::IsMember({"qemu", "libvirt"}));
  cmd->add_option("--libvirt-uri", args->libvirt_uri,
                  "libvirt connection (default: $TRACEBED_LIBVIRT_URI, else libvirt's)");
  cmd->final_callback([args] {
    if (args->local && (!args->kernel.empty() || !args->launcher.empty() || !args->libvirt_uri.empty()))
      fail("--local tests this machine's kernel: it takes no --kernel, --launcher or --libvirt-uri");
    if (args->local) {
      args->kernel = "local";
      args->launcher = "local";
    }
    if (args->kernel.empty()) {
      auto c = vm::Catalogue::load();
      if (!c) fail(c.error().message);
      args->kernel = c->default_kernel();
    }
    auto suites = suite_binaries();
    if (suites.empty()) fail("no guest suites were built (tracebed-suites.txt is missing beside the executable)");
    if (!args->suites.empty()) {
      std::vector<fs::path> chosen;
      for (const auto& want : args->suites) {
        auto it = std::find_if(suites.begin(), suites.end(), [&](const fs::path& p) {
          return p.filename() == want || p.filename() == "tracebed_suite_" + want;
        });
        if (it == suites.end()) fail(fmt::format("--suites: no suite named {}", want));
        chosen.push_back(*it);
      }
      suites = std::move(chosen);
    }
    const std::string local_problem = args->local ? vm::local_tracing_problem() : "";
    fs::path tmp = vm::cache_dir() / "run" / fmt::format("test-{}", getpid());
    fs::create_directories(tmp);
    // gtest's XML report, read as `tracebed matrix` reads it: unlike its
    // JSON, the XML keeps GTEST_SKIP's reason.
    matrix::KernelRun run;
    run.kernel = args->kernel;
    const auto timeout = std::chrono::seconds(std::chrono::hours(2));
    for (const auto& suite : suites) {
      const std::string name = suite.filename().string();
      if (!local_problem.empty()) {
        matrix::TestResult skipped;
        skipped.suite = name;
        skipped.name = "(suite)";
        skipped.state = matrix::State::skip;
        skipped.message = local_problem;
        run.tests.push_back(std::move(skipped));
        continue;
      }
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
      for (const auto& a : launcher_args(args->launcher, args->libvirt_uri)) argv.push_back(a);
      fmt::print(stderr, "tracebed: running {} on {}\n", name, args->kernel);
      auto r = vm::run_process(argv, timeout, vm::Output::to_stderr);
      if (!r) fail(r.error().message);
      auto got = matrix::suite_results(name, report, r->status, false, timeout, {}, &run.release, &run.accelerator);
      run.tests.insert(run.tests.end(), got.begin(), got.end());
    }
    std::error_code ec;
    fs::remove_all(tmp, ec);

    if (args->local && run.release.empty()) {
      utsname u{};
      if (uname(&u) == 0) run.release = u.release;
    }
    // With --ktap, stdout carries only KTAP; people read the table on stderr.
    FILE* table = args->ktap ? stderr : stdout;
    size_t width = 20;
    for (const auto& t : run.tests) width = std::max(width, t.full_name().size());
    fmt::print(table, "\n{:<{}}  {:<6} {:>8}\n", "TEST", width, "RESULT", "SECONDS");
    for (const auto& t : run.tests) {
      static constexpr std::string_view kShown[] = {"PASS", "SKIP", "FAIL"};
      fmt::print(table, "{:<{}}  {:<6} {:>8.2f}", t.full_name(), width, kShown[static_cast<int>(t.state)], t.seconds);
      if (t.state == matrix::State::skip) fmt::print(table, "  {}", t.summary());
      fmt::print(table, "\n");
    }
    const int failed = run.count(matrix::State::fail);
    fmt::print(table, "\n{}: {} passed, {} skipped, {} failed\n", args->kernel, run.count(matrix::State::pass),
               run.count(matrix::State::skip), failed);
    for (const auto& t : run.tests) {
      if (t.state != matrix::State::fail) continue;
      fmt::print(table, "\nFAIL {}\n{}{}\n", t.full_name(), t.location.empty() ? "" : t.location + "\n", t.message);
      if (!t.console.empty()) fmt::print(table, "{}\n", t.console);
    }
    if (!args->junit.empty()) {
      std::ofstream(args->junit) << matrix::write_junit(run);
      fmt::print(table, "JUnit XML: {}\n", args->junit);
    }
    if (args->ktap) fmt::print("{}", matrix::write_ktap(run));
    std::fflush(stdout);
    std::exit(failed || run.tests.empty() ? 1 : 0);
  });
}

}  // namespace tracebed::cli
