// `tracebed test --kernel NAME [--junit FILE] [--filter F] [--suites a,b]
// [--launcher qemu|libvirt] [--libvirt-uri URI] [--ktap]`: runs the guest
// suite binaries against one kernel, prints a pass/skip/fail table and writes
// JUnit XML. Each suite starts its own guest (framework/testing), from a
// snapshot of a booted one where it can (framework/vm/snapshot.h); with
// -j N, N suites run at once.
// `tracebed test --local` runs them on this machine's own kernel instead
// (the agent runs here; tracefs through its local files), skipping every
// suite with the reason when this machine cannot (not root, no tracefs).
#include <sys/utsname.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <mutex>
#include <thread>
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

// One suite binary's run: its results, and its output when held back
// (parallel runs print each suite's output in one piece as it ends).
struct SuiteOutcome {
  std::vector<matrix::TestResult> tests;
  std::string output, release, accelerator;
  double wall_seconds = 0;

  double start_seconds() const {
    double s = 0;
    for (const auto& t : tests) s += t.guest_start.seconds;
    return s;
  }
  std::string summary() const {
    int n[3] = {};
    std::string starts;
    for (const auto& t : tests) {
      ++n[static_cast<int>(t.state)];
      if (!t.guest_start.kind.empty())
        starts += fmt::format("{}{} {:.2f} s", starts.empty() ? "" : ", ", t.guest_start.kind, t.guest_start.seconds);
    }
    return fmt::format("{} passed, {} skipped, {} failed in {:.1f} s ({}tests {:.1f} s)", n[0], n[1], n[2],
                       wall_seconds, starts.empty() ? "" : starts + "; ", wall_seconds - start_seconds());
  }
};

matrix::TestResult suite_row(const std::string& suite, matrix::State state, std::string message) {
  matrix::TestResult t;
  t.suite = suite;
  t.name = "(suite)";
  t.state = state;
  t.message = std::move(message);
  return t;
}

// Where the time went: guest starts (cold boots and snapshot restores) against tests.
std::string time_summary(const std::vector<SuiteOutcome>& outcomes, double wall, size_t jobs) {
  double start = 0, busy = 0;
  int boots = 0, restores = 0;
  for (const auto& o : outcomes) {
    start += o.start_seconds();
    busy += o.wall_seconds;
    for (const auto& t : o.tests) {
      boots += t.guest_start.kind == "boot";
      restores += t.guest_start.kind == "restore";
    }
  }
  return fmt::format("{:.1f} s wall, {} at a time; of {:.1f} s in suites, {:.1f} s starting guests ({} cold boots, "
                     "{} snapshot restores)",
                     wall, jobs, busy, start, boots, restores);
}

// One guest per CPU: a TCG guest keeps about one core busy.
size_t default_jobs() {
  long n = sysconf(_SC_NPROCESSORS_ONLN);
  return n > 0 ? static_cast<size_t>(n) : 1;
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
    bool local = false, ktap = false, no_snapshot = false;
    unsigned jobs = 0;
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
  cmd->add_option("-j,--jobs", args->jobs, "suites (guests) at a time (default: one per CPU)");
  cmd->add_flag("--no-snapshot", args->no_snapshot,
                "boot every guest cold instead of restoring a saved one (also $TRACEBED_NO_SNAPSHOT=1)");
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
    if (args->no_snapshot) setenv("TRACEBED_NO_SNAPSHOT", "1", 1);
    fs::path tmp = vm::cache_dir() / "run" / fmt::format("test-{}", getpid());
    fs::create_directories(tmp);
    // gtest's XML report, read as `tracebed matrix` reads it: unlike its
    // JSON, the XML keeps GTEST_SKIP's reason.
    matrix::KernelRun run;
    run.kernel = args->kernel;
    const auto timeout = std::chrono::seconds(std::chrono::hours(2));
    const auto t0 = std::chrono::steady_clock::now();
    std::vector<SuiteOutcome> outcomes(suites.size());
    auto run_suite = [&](size_t i, vm::Output output) {
      const fs::path& suite = suites[i];
      SuiteOutcome& o = outcomes[i];
      const std::string name = suite.filename().string();
      if (!local_problem.empty()) {
        o.tests.push_back(suite_row(name, matrix::State::skip, local_problem));
        return;
      }
      if (!fs::exists(suite)) {
        o.tests.push_back(suite_row(name, matrix::State::fail, "suite binary not built: " + suite.string()));
        return;
      }
      fs::path report = tmp / (name + ".xml");
      std::vector<std::string> argv = {suite.string(), "--tracebed_kernel=" + args->kernel,
                                       "--gtest_output=xml:" + report.string(), "--gtest_brief=1"};
      if (!args->filter.empty()) argv.push_back("--gtest_filter=" + args->filter);
      for (const auto& a : launcher_args(args->launcher, args->libvirt_uri)) argv.push_back(a);
      auto started = std::chrono::steady_clock::now();
      auto r = vm::run_process(argv, timeout, output);
      o.wall_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
      if (!r) {
        o.tests.push_back(suite_row(name, matrix::State::fail, r.error().message));
        return;
      }
      o.output = std::move(r->output);
      o.tests = matrix::suite_results(name, report, r->status, false, timeout, {}, &o.release, &o.accelerator);
    };
    const size_t jobs = std::max<size_t>(1, std::min<size_t>(args->jobs > 0 ? args->jobs : default_jobs(), suites.size()));
    std::mutex print_mutex;
    size_t finished = 0;
    auto report_suite = [&](size_t i) {
      std::lock_guard lock(print_mutex);
      const SuiteOutcome& o = outcomes[i];
      // Parallel suites' output is held until each ends, so it reads as one block.
      if (!o.output.empty()) fmt::print(stderr, "{}", o.output);
      fmt::print(stderr, "tracebed: [{}/{}] {} on {}: {}\n", ++finished, suites.size(), suites[i].filename().string(),
                 args->kernel, o.summary());
    };
    if (jobs == 1) {
      for (size_t i = 0; i < suites.size(); ++i) {
        fmt::print(stderr, "tracebed: running {} on {}\n", suites[i].filename().string(), args->kernel);
        run_suite(i, vm::Output::to_stderr);
        report_suite(i);
      }
    } else {
      fmt::print(stderr, "tracebed: {} suites on {}, {} at a time\n", suites.size(), args->kernel, jobs);
      std::atomic<size_t> next{0};
      std::vector<std::thread> workers;
      for (size_t w = 0; w < jobs; ++w)
        workers.emplace_back([&] {
          for (size_t i; (i = next++) < suites.size();) {
            run_suite(i, vm::Output::capture);
            report_suite(i);
          }
        });
      for (auto& w : workers) w.join();
    }
    // Results in the suites' own order, whatever order they finished in.
    for (auto& o : outcomes) {
      if (run.release.empty()) run.release = o.release;
      if (run.accelerator.empty()) run.accelerator = o.accelerator;
      run.tests.insert(run.tests.end(), o.tests.begin(), o.tests.end());
    }
    run.wall_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
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
    fmt::print(table, "{}\n", time_summary(outcomes, run.wall_seconds, jobs));
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
