// `tracebed test --kernel NAME [--junit FILE] [--filter F] [--suites a,b]
// [--launcher qemu|libvirt] [--libvirt-uri URI] [--ktap]`: runs the guest
// suite binaries against one kernel, prints a pass/skip/fail table and writes
// JUnit XML. Each suite starts its own guest (framework/testing), from a
// snapshot of a booted one where it can (framework/vm/snapshot.h); with
// -j N, N suites run at once.
// `tracebed test --kernel DIR` builds the kernel source tree DIR first
// (tree_build.h; make remakes only what changed since the last time).
// `tracebed test --local` runs them on this machine's own kernel instead
// (the agent runs here; tracefs through its local files), skipping every
// suite with the reason when this machine cannot (not root, no tracefs).
#include <sys/utsname.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <chrono>
#include <filesystem>

#include <fmt/format.h>

#include "framework/base/cpus.h"
#include "framework/base/files.h"
#include "framework/cli/commands.h"
#include "framework/cli/tree_options.h"
#include "framework/matrix/crosscheck.h"
#include "framework/matrix/junit.h"
#include "framework/matrix/report.h"
#include "framework/matrix/runner.h"
#include "framework/matrix/suite_pool.h"
#include "framework/matrix/suite_list.h"
#include "framework/vm/catalogue.h"
#include "framework/vm/local_tracing.h"
#include "framework/vm/process.h"

namespace tracebed::cli {
namespace {

namespace fs = std::filesystem;

std::string summary_of(const matrix::SuiteOutcome& o) {
  std::string starts;
  for (const auto& t : o.tests) {
    if (!t.guest_start.kind.empty())
      starts += fmt::format("{}{} {:.2f} s", starts.empty() ? "" : ", ", t.guest_start.kind, t.guest_start.seconds);
  }
  return fmt::format("{} passed, {} skipped, {} failed in {:.1f} s ({}tests {:.1f} s)", o.count(matrix::State::pass),
                     o.count(matrix::State::skip), o.count(matrix::State::fail),
                     o.wall_seconds, starts.empty() ? "" : starts + "; ", o.wall_seconds - o.start_seconds());
}

// Where the time went: guest starts (cold boots and snapshot restores) against tests.
std::string time_summary(const std::vector<matrix::SuiteOutcome>& outcomes, double wall, size_t jobs) {
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

struct TestRunArgs {
  std::string kernel, filter, launcher, libvirt_uri, accel, local_problem;
  size_t jobs = 1;
  std::chrono::seconds timeout{std::chrono::hours(2)};
};

// Runs the suites from matrix's pool of guests; one outcome per suite, in
// the order given. Each run's output is printed in one piece as it ends
// (as it comes with -j 1).
std::vector<matrix::SuiteOutcome> run_suites(const std::vector<fs::path>& suites, const TestRunArgs& a,
                                             const fs::path& tmp) {
  if (!a.local_problem.empty()) {
    std::vector<matrix::SuiteOutcome> out(suites.size());
    for (size_t i = 0; i < suites.size(); ++i)
      out[i].tests.push_back(matrix::TestResult::suite_row(suites[i].filename().string(), matrix::State::skip, a.local_problem));
    return out;
  }
  matrix::PoolOptions o;
  o.kernels = {{a.kernel, launcher_args(a.launcher, a.libvirt_uri)}};
  if (!a.accel.empty()) o.kernels[0].args.push_back("--tracebed_accel=" + a.accel);
  o.suites = suites;
  o.filter = a.filter;
  o.jobs = a.jobs;
  o.timeout = a.timeout;
  o.work_dir = tmp;
  o.stream_when_serial = true;
  if (a.jobs > 1) fmt::print(stderr, "tracebed: {} suites on {}, {} at a time\n", suites.size(), a.kernel, a.jobs);
  o.on_run_done = [&](const matrix::PoolRun& r, size_t finished, size_t total) {
    if (a.jobs > 1) {
      auto log = base::read_file(r.log);
      if (log) fmt::print(stderr, "{}", *log);
    }
    fmt::print(stderr, "tracebed: [{}/{}] {}{} on {}: {}\n", finished, total, suites[r.suite].filename().string(),
               r.shards > 1 ? fmt::format(" (shard {}/{})", r.shard + 1, r.shards) : "", a.kernel,
               summary_of(r.outcome));
  };
  return matrix::run_suite_pool(o).front();
}

// `--list`: each suite binary with the cases the filter selects.
void print_list(const std::vector<fs::path>& suites, const std::string& filter) {
  size_t total = 0;
  for (const auto& suite : suites) {
    auto cases = matrix::listed_cases(suite, filter);
    if (!cases) {
      fmt::print("{} ({}): cannot list its tests\n", matrix::short_suite_name(suite), suite.filename().string());
      continue;
    }
    if (cases->empty()) continue;
    fmt::print("{} ({}): {} tests\n", matrix::short_suite_name(suite), suite.filename().string(), cases->size());
    for (const auto& c : *cases) fmt::print("  {}\n", c);
    total += cases->size();
  }
  fmt::print("{} tests{}\n", total, filter.empty() ? "" : fmt::format(" match --filter '{}'", filter));
}

// The GoogleTest suites a binary holds ("Hist." lines of its list).
std::vector<std::string> gtest_groups(const fs::path& suite) {
  std::vector<std::string> out;
  auto cases = matrix::listed_cases(suite, "");
  if (!cases) return out;
  for (const auto& c : *cases) {
    std::string group = c.substr(0, c.find('.'));
    if (std::find(out.begin(), out.end(), group) == out.end()) out.push_back(group);
  }
  return out;
}

// One row per test (skips with their reason), then the counts.
void print_table(FILE* table, const matrix::KernelRun& run) {
  size_t width = 20;
  for (const auto& t : run.tests) width = std::max(width, t.full_name().size());
  fmt::print(table, "\n{:<{}}  {:<6} {:>8}\n", "TEST", width, "RESULT", "SECONDS");
  for (const auto& t : run.tests) {
    static constexpr std::string_view kShown[] = {"PASS", "SKIP", "FAIL"};
    fmt::print(table, "{:<{}}  {:<6} {:>8.2f}", t.full_name(), width, kShown[static_cast<int>(t.state)], t.seconds);
    if (t.state == matrix::State::skip) fmt::print(table, "  {}", t.summary());
    fmt::print(table, "\n");
  }
  fmt::print(table, "\n{}: {} passed, {} skipped, {} failed\n", run.kernel, run.count(matrix::State::pass),
             run.count(matrix::State::skip), run.count(matrix::State::fail));
}

}  // namespace

Exit exit_for(matrix::Verdict verdict) {
  switch (verdict) {
    case matrix::Verdict::passed: return Exit::passed;
    case matrix::Verdict::failed: return Exit::failed;
    case matrix::Verdict::timed_out: return Exit::timeout;
    case matrix::Verdict::not_tested: return Exit::infrastructure;
  }
  return Exit::failed;
}

std::vector<std::string> launcher_args(const std::string& launcher, const std::string& libvirt_uri) {
  std::vector<std::string> out;
  if (!launcher.empty()) out.push_back("--tracebed_launcher=" + launcher);
  if (!libvirt_uri.empty()) out.push_back("--tracebed_libvirt_uri=" + libvirt_uri);
  return out;
}

void add_test_command(CLI::App& app) {
  auto* cmd = app.add_subcommand("test", "run the guest suites on one kernel; table + JUnit XML");
  struct Args {
    std::string kernel, junit, filter, launcher, libvirt_uri, accel;
    std::vector<std::string> suites;
    bool local = false, ktap = false, no_snapshot = false, list = false;
    unsigned jobs = 0, timeout_seconds = 7200;
    TreeArgs tree;  // --kernel DIR: a source tree, built first
  };
  auto args = std::make_shared<Args>();
  cmd->add_option("-k,--kernel", args->kernel,
                  "catalogue name, bzImage path, or your kernel source tree (built first, out of tree, as "
                  "`kernels build --tree` does) (default: debian-6.12)");
  add_tree_config_options(*cmd, args->tree, "kernel-");
  cmd->add_option("--junit", args->junit, "write JUnit XML here");
  cmd->add_option("--filter", args->filter, "GoogleTest filter (e.g. Smoke.*)");
  cmd->add_option("--suites", args->suites,
                  "only these suites: binary names (hist or tracebed_suite_hist) or the test suites --filter names "
                  "(Hist, TraceCmd); see --list")
      ->delimiter(',');
  cmd->add_flag("--list", args->list, "list the suites and their tests (with --suites and --filter: those chosen)");
  cmd->add_option("--accel", args->accel, "kvm or tcg (default: probe KVM, else TCG)")
      ->check(CLI::IsMember({"kvm", "tcg"}));
  add_timeout_option(*cmd, args->timeout_seconds,
                     "seconds after which a suite binary (and its guest) is killed and reported");
  cmd->add_flag("--local", args->local,
                "run the suites on this machine's own kernel and tracefs (as root; skipped, with the reason, where "
                "that cannot work)");
  cmd->add_option("-j,--jobs", args->jobs, "suites (guests) at a time (default: one per CPU we may run on; a TCG guest keeps about one busy)");
  cmd->add_flag("--no-snapshot", args->no_snapshot,
                "boot every guest cold instead of restoring a saved one (also $TRACEBED_NO_SNAPSHOT=1)");
  cmd->add_flag("--ktap", args->ktap, "print KTAP on stdout (the table goes to stderr)");
  cmd->add_option("--launcher", args->launcher, "qemu or libvirt (default: $TRACEBED_LAUNCHER, else qemu)")
      ->check(CLI::IsMember({"qemu", "libvirt"}));
  cmd->add_option("--libvirt-uri", args->libvirt_uri,
                  "libvirt connection (default: $TRACEBED_LIBVIRT_URI, else libvirt's)");
  cmd->final_callback([args] {
    if (args->local && (!args->kernel.empty() || !args->launcher.empty() || !args->libvirt_uri.empty()))
      usage_error("--local tests this machine's kernel: it takes no --kernel, --launcher or --libvirt-uri");
    if (args->local) {
      args->kernel = "local";
      args->launcher = "local";
    }
    if (!args->local && vm::is_kernel_tree(args->kernel)) {
      args->tree.tree = args->kernel;
      auto built = build_tree_or_exit(args->tree);
      args->kernel = built.kernel_dir.string();
    } else if (!args->tree.fragment.empty() || !args->tree.config.empty() || args->tree.base != "tinyconfig") {
      usage_error("--kernel-fragment, --kernel-base and --kernel-config are for --kernel DIR, a kernel source tree");
    }
    if (!args->local) {
      const vm::Catalogue c = load_catalogue();
      if (args->kernel.empty()) args->kernel = c.default_kernel();
      (void)resolve_kernel(c, args->kernel, "--kernel");
    }
    auto suites = matrix::built_suites();
    if (suites.empty()) cannot_run("no guest suites were built (tracebed-suites.txt is missing beside the executable)");
    if (!args->suites.empty()) {
      auto chosen = matrix::choose_suites(suites, args->suites, gtest_groups);
      if (!chosen) usage_error(chosen.error().message);
      suites = std::move(chosen).value();
    } else {
      suites = matrix::default_suites(suites);  // kselftest and bpftrace only when named
    }
    if (args->list) {
      print_list(suites, args->filter);
      exit_with(Exit::passed);
    }
    if (args->no_snapshot) setenv("TRACEBED_NO_SNAPSHOT", "1", 1);
    fs::path tmp = vm::cache_dir() / "run" / fmt::format("test-{}", getpid());
    fs::create_directories(tmp);
    TestRunArgs run_args{args->kernel, args->filter, args->launcher, args->libvirt_uri, args->accel,
                         args->local ? vm::local_tracing_problem() : ""};
    run_args.timeout = std::chrono::seconds(args->timeout_seconds);
    run_args.jobs = std::max<size_t>(1, args->jobs > 0 ? args->jobs : static_cast<size_t>(base::usable_cpus()));
    // gtest's XML report, read as `tracebed matrix` reads it: unlike its
    // JSON, the XML keeps GTEST_SKIP's reason.
    matrix::KernelRun run;
    run.kernel = args->kernel;
    run.stamp_start();
    const auto t0 = std::chrono::steady_clock::now();
    auto outcomes = run_suites(suites, run_args, tmp);
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
    print_table(table, run);
    fmt::print(table, "{}\n", time_summary(outcomes, run.wall_seconds, run_args.jobs));
    // With the kernel's own selftests in the run: where they and our tests disagree.
    if (std::string cc = matrix::cross_check_report({run}); !cc.empty()) fmt::print(table, "\n{}", cc);
    for (const auto& t : run.tests) {
      if (t.state != matrix::State::fail) continue;
      fmt::print(table, "\nFAIL {}\n{}{}\n", t.full_name(), t.location.empty() ? "" : t.location + "\n", t.message);
      if (!t.console.empty()) fmt::print(table, "{}\n", t.console);
    }
    if (run.tests.empty() && !args->filter.empty())
      fmt::print(table, "\nno test of the chosen suites matches --filter '{}' (tracebed test --list shows them)\n",
                 args->filter);
    bool junit_failed = false;
    if (!args->junit.empty()) {
      if (Status st = vm::write_file_atomic(args->junit, matrix::write_junit(run)); st) {
        fmt::print(table, "JUnit XML: {}\n", args->junit);
      } else {
        fmt::print(stderr, "tracebed: cannot write the JUnit XML: {}\n", st.error().message);
        junit_failed = true;
      }
    }
    if (args->ktap) fmt::print("{}", matrix::write_ktap(run));
    // No test at all: a --filter that matches nothing is a usage error;
    // without one, the suites ran nothing, which tests nothing.
    if (run.tests.empty()) exit_with(args->filter.empty() ? Exit::infrastructure : Exit::usage);
    Exit status = exit_for(matrix::verdict(run.tests));
    exit_with(status == Exit::passed && junit_failed ? Exit::failed : status);
  });
}

}  // namespace tracebed::cli
