// `tracebed test --kernel NAME [--junit FILE] [--filter F] [--suites a,b]
// [--launcher qemu|libvirt] [--libvirt-uri URI] [--ktap]`: runs the guest
// suite binaries against one kernel, prints a pass/skip/fail table and writes
// JUnit XML. Each suite starts its own guest (framework/testing), from a
// snapshot of a booted one where it can (framework/vm/guests/snapshot.h); with
// -j N, N suites run at once.
// `tracebed test --kernel DIR` builds the kernel source tree DIR first
// (tree_build.h; make remakes only what changed since the last time).
// `tracebed test --local` runs them on this machine's own kernel instead
// (the agent runs here; tracefs through its local files), skipping every
// suite with the reason when this machine cannot (not root, no tracefs).
#include <sys/utsname.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <chrono>
#include <filesystem>
#include <fstream>

#include <fmt/format.h>

#include "framework/base/cpus.h"
#include "framework/base/files.h"
#include "framework/cli/commands.h"
#include "framework/cli/gcov_run.h"
#include "framework/cli/tree_options.h"
#include "framework/matrix/boot_check.h"
#include "framework/matrix/crosscheck.h"
#include "framework/matrix/junit.h"
#include "framework/matrix/report_writers.h"
#include "framework/matrix/run_summary.h"
#include "framework/matrix/runner.h"
#include "framework/matrix/suite_pool.h"
#include "framework/matrix/suite_list.h"
#include "framework/vm/guests/boot_history.h"
#include "framework/vm/kernels/catalogue.h"
#include "framework/vm/guests/local_tracing.h"
#include "framework/vm/cache/cache.h"

namespace tracebed::cli {
namespace {

namespace fs = std::filesystem;

std::string summary_of(const matrix::SuiteOutcome& o) {
  std::string starts;
  for (const auto& t : o.tests) {
    if (!t.guest_start.kind.empty())
      starts += fmt::format("{}{} {:.2f} s", starts.empty() ? "" : ", ", t.guest_start.kind, t.guest_start.seconds);
  }
  return fmt::format("{} in {:.1f} s ({}tests {:.1f} s)", matrix::count_states(o.tests).text(), o.wall_seconds,
                     starts.empty() ? "" : starts + "; ", o.wall_seconds - o.start_seconds());
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
  std::string kernel, filter, local_problem;
  std::vector<std::string> suite_args;  // the guest flags of every suite binary
  size_t jobs = 1;
  std::chrono::seconds timeout{std::chrono::hours(2)};
  bool verbose = false;  // each suite's own output on the terminal
  bool fail_fast = false;  // no suite started after one that failed
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
  o.kernels = {{a.kernel, a.suite_args}};
  o.suites = suites;
  o.filter = a.filter;
  o.jobs = a.jobs;
  o.timeout = a.timeout;
  o.work_dir = tmp;
  o.stream_when_serial = a.verbose;
  o.stop_after_failure = a.fail_fast;
  if (a.jobs > 1) fmt::print(stderr, "tracebed: {} suites on {}, {} at a time\n", suites.size(), a.kernel, a.jobs);
  o.on_run_done = [&](const matrix::PoolRun& r, size_t finished, size_t total) {
    if (a.jobs > 1 && a.verbose) {
      auto log = base::read_file(r.log);
      if (log) fmt::print(stderr, "{}", *log);
    }
    fmt::print(stderr, "tracebed: [{}/{}] {}{} on {}: {}\n", finished, total, suites[r.suite].filename().string(),
               r.shards > 1 ? fmt::format(" (shard {}/{})", r.shard + 1, r.shards) : "", a.kernel,
               summary_of(r.outcome));
    // Quiet, a failure still shows where its suite's whole output is.
    if (!a.verbose && r.outcome.count(matrix::State::fail) > 0) fmt::print(stderr, "tracebed:   its log: {}\n", r.log.string());
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

// One row per test (skips and unresolved tests with their reason), then the counts.
void print_table(FILE* table, const matrix::KernelRun& run) {
  size_t width = 20;
  for (const auto& t : run.tests) width = std::max(width, t.full_name().size());
  fmt::print(table, "\n{:<{}}  {:<6} {:>8}\n", "TEST", width, "RESULT", "SECONDS");
  for (const auto& t : run.tests) {
    std::string shown(matrix::state_name(t.state));
    std::transform(shown.begin(), shown.end(), shown.begin(), [](unsigned char c) { return std::toupper(c); });
    fmt::print(table, "{:<{}}  {:<6} {:>8.2f}", t.full_name(), width, shown, t.seconds);
    if (t.state == matrix::State::skip || t.state == matrix::State::unresolved) fmt::print(table, "  {}", t.summary());
    fmt::print(table, "\n");
  }
  fmt::print(table, "\n{}: {}\n", run.kernel, run.counts().text());
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

namespace {

struct TestArgs {
  std::string kernel, junit, table, filter, launcher, libvirt_uri, accel, cmdline;
  std::vector<std::string> suites;
  bool local = false, ktap = false, no_snapshot = false, list = false, verbose = false, fail_fast = false;
  unsigned jobs = 0, timeout_seconds = 7200, boot_timeout_seconds = 0;
  TreeArgs tree;  // --kernel DIR: a source tree, built first
  GcovArgs gcov;
  std::vector<std::string> gcov_paths;  // from `gcov`, once the kernel is resolved
};

void declare_test_options(CLI::App& cmd, TestArgs& args) {
  cmd.add_option("-k,--kernel", args.kernel,
                 "catalogue name, bzImage path, or your kernel source tree (built first, out of tree, as "
                 "`kernels build --tree` does) (default: debian-6.12)");
  add_tree_config_options(cmd, args.tree, "kernel-");
  add_gcov_options(cmd, args.gcov);
  cmd.add_option("--junit", args.junit, "write JUnit XML here (the full table goes beside it, as .md)");
  cmd.add_option("--table", args.table, "write the full per-test table (Markdown) here");
  cmd.add_option("--filter", args.filter, "GoogleTest filter (e.g. Smoke.*)");
  cmd.add_option("--suites", args.suites,
                 "only these suites: binary names (hist or tracebed_suite_hist) or the test suites --filter names "
                 "(Hist, TraceCmd); see --list")
      ->delimiter(',');
  cmd.add_flag("--list", args.list, "list the suites and their tests (with --suites and --filter: those chosen)");
  cmd.add_option("--accel", args.accel, "kvm or tcg (default: probe KVM, else TCG)")
      ->check(CLI::IsMember({"kvm", "tcg"}));
  cmd.add_option("--cmdline", args.cmdline, "more kernel command line for every guest (e.g. reserve_mem=...)");
  add_timeout_option(cmd, args.timeout_seconds,
                     "seconds after which a suite binary (and its guest) is killed and reported");
  cmd.add_option("--boot-timeout", args.boot_timeout_seconds,
                 "seconds to wait for a cold-booted guest's agent; by default " + vm::boot_timeout_rule())
      ->check(CLI::Range(1u, 3600u));
  cmd.add_flag("--local", args.local,
               "run the suites on this machine's own kernel and tracefs (as root; skipped, with the reason, where "
               "that cannot work)");
  cmd.add_option("-j,--jobs", args.jobs, "suites (guests) at a time (default: one per CPU we may run on; a TCG guest keeps about one busy)");
  cmd.add_flag("--no-snapshot", args.no_snapshot,
               "boot every guest cold instead of restoring a saved one (also $TRACEBED_NO_SNAPSHOT=1)");
  cmd.add_flag("--ktap", args.ktap, "print KTAP on stdout (the summary goes to stderr)");
  cmd.add_flag("--fail-fast", args.fail_fast,
               "start no more suites once one has a failure (those running finish; the rest are left out)");
  cmd.add_flag("-v,--verbose", args.verbose,
               "each suite's own output on the terminal as it runs, and the whole table at the end");
  cmd.add_option("--launcher", args.launcher, "qemu or libvirt (default: $TRACEBED_LAUNCHER, else qemu)")
      ->check(CLI::IsMember({"qemu", "libvirt"}));
  cmd.add_option("--libvirt-uri", args.libvirt_uri,
                 "libvirt connection (default: $TRACEBED_LIBVIRT_URI, else libvirt's)");
}

// The kernel to test, built first when it is a source tree; exits on a bad one.
void resolve_test_kernel(TestArgs& args) {
  if (args.local && (!args.kernel.empty() || !args.launcher.empty() || !args.libvirt_uri.empty()))
    usage_error("--local tests this machine's kernel: it takes no --kernel, --launcher or --libvirt-uri");
  if (args.local && (args.gcov.gcov || !args.gcov.paths.empty()))
    usage_error("--gcov profiles a kernel tracebed builds; --local tests this machine's own");
  if (args.local) {
    args.kernel = "local";
    args.launcher = "local";
    return;
  }
  args.gcov_paths = gcov_paths(args.gcov);
  const std::vector<std::string>& gcov = args.gcov_paths;
  if (vm::is_kernel_tree(args.kernel)) {
    args.tree.tree = args.kernel;
    args.tree.gcov_paths = gcov;
    auto built = build_tree_or_exit(args.tree);
    args.kernel = built.kernel_dir.string();
  } else if (!args.tree.fragment.empty() || !args.tree.config.empty() || args.tree.base != "tinyconfig") {
    usage_error("--kernel-fragment, --kernel-base and --kernel-config are for --kernel DIR, a kernel source tree");
  }
  const vm::Catalogue c = load_catalogue();
  if (args.kernel.empty()) args.kernel = c.default_kernel();
  if (!gcov.empty()) args.kernel = gcov_kernel_or_exit(args.kernel, gcov, tree_build_options_jobs());
  (void)resolve_kernel(c, args.kernel, "--kernel");
}

std::vector<fs::path> chosen_suites(const TestArgs& args) {
  auto suites = matrix::built_suites();
  if (suites.empty()) cannot_run("no guest suites were built (tracebed-suites.txt is missing beside the executable)");
  if (args.suites.empty()) return matrix::default_suites(suites);  // kselftest and bpftrace only when named
  auto chosen = matrix::choose_suites(suites, args.suites, gtest_groups);
  if (!chosen) usage_error(chosen.error().message);
  return std::move(chosen).value();
}

// One boot before the suites: a kernel that cannot boot ends the run here,
// once, with its console; one that boots leaves the snapshot they restore.
void boot_before_suites(const TestArgs& args, const std::vector<std::string>& suite_args) {
  if (args.local) return;
  auto booted = matrix::boot_once(args.kernel, suite_args);
  if (!booted)
    cannot_run(fmt::format("{} did not boot, so nothing was tested: {}", args.kernel, booted.error().message));
  fmt::print(stderr, "tracebed: {} ({}) ready in {:.2f} s ({}) under {}\n", args.kernel, booted->release,
             booted->seconds, booted->kind, booted->accelerator);
}

// Where the suites' own output and the full table go: beside the JUnit
// file when there is one, else in the cache (replaced by the next run).
struct RunFiles {
  fs::path logs, table;
};
RunFiles run_files(const TestArgs& args) {
  RunFiles f;
  if (!args.junit.empty()) {
    f.logs = fs::path(args.junit).replace_extension(".logs");
    f.table = fs::path(args.junit).replace_extension(".md");
  } else {
    f.logs = vm::cache_dir() / "logs" / fmt::format("test-{}", matrix::file_name_for(args.kernel));
    f.table = f.logs / "results.md";
  }
  if (!args.table.empty()) f.table = args.table;
  std::error_code ec;
  fs::remove_all(f.logs, ec);
  fs::create_directories(f.logs, ec);
  if (ec) cannot_run(fmt::format("cannot create {}: {}", f.logs.string(), ec.message()));
  return f;
}

void print_outcome(FILE* out, const TestArgs& args, const matrix::KernelRun& run, const RunFiles& files,
                   const std::vector<matrix::SuiteOutcome>& outcomes, size_t jobs) {
  if (args.verbose) {
    print_table(out, run);
    for (const auto& t : run.tests) {
      if (t.state != matrix::State::fail) continue;
      fmt::print(out, "\nFAIL {}\n{}{}\n", t.full_name(), t.location.empty() ? "" : t.location + "\n", t.message);
      if (!t.console.empty()) fmt::print(out, "{}\n", t.console);
    }
  }
  fmt::print(out, "\n{}", matrix::write_run_summary(run));
  fmt::print(out, "{}\n", time_summary(outcomes, run.wall_seconds, jobs));
  // With the kernel's own selftests in the run: where they and our tests disagree.
  if (std::string cc = matrix::cross_check_report({run}); !cc.empty()) fmt::print(out, "\n{}", cc);
  if (run.tests.empty() && !args.filter.empty())
    fmt::print(out, "\nno test of the chosen suites matches --filter '{}' (tracebed test --list shows them)\n",
               args.filter);
  if (Status st = vm::write_file_atomic(files.table, matrix::write_test_table(run)); st)
    fmt::print(out, "every test: {}\n", files.table.string());
  else
    fmt::print(stderr, "tracebed: cannot write the table: {}\n", st.error().message);
  fmt::print(out, "the suites' own output: {}\n", files.logs.string());
}

Exit run_test(TestArgs& args) {
  resolve_test_kernel(args);
  auto suites = chosen_suites(args);
  if (args.list) {
    print_list(suites, args.filter);
    return Exit::passed;
  }
  if (args.no_snapshot) setenv("TRACEBED_NO_SNAPSHOT", "1", 1);
  if (args.boot_timeout_seconds > 0) setenv("TRACEBED_BOOT_TIMEOUT", std::to_string(args.boot_timeout_seconds).c_str(), 1);
  TestRunArgs run_args;
  run_args.kernel = args.kernel;
  run_args.filter = args.filter;
  if (args.local) run_args.local_problem = vm::local_tracing_problem();
  run_args.suite_args = launcher_args(args.launcher, args.libvirt_uri);
  if (!args.accel.empty()) run_args.suite_args.push_back("--tracebed_accel=" + args.accel);
  if (!args.cmdline.empty()) run_args.suite_args.push_back("--tracebed_cmdline=" + args.cmdline);
  run_args.timeout = std::chrono::seconds(args.timeout_seconds);
  run_args.jobs = std::max<size_t>(1, args.jobs > 0 ? args.jobs : static_cast<size_t>(base::usable_cpus()));
  run_args.verbose = args.verbose;
  run_args.fail_fast = args.fail_fast;
  if (run_args.local_problem.empty()) boot_before_suites(args, run_args.suite_args);
  RunFiles files = run_files(args);
  // gtest's XML report, read as `tracebed matrix` reads it: unlike its
  // JSON, the XML keeps GTEST_SKIP's reason.
  matrix::KernelRun run;
  run.kernel = args.kernel;
  run.stamp_start();
  const auto t0 = std::chrono::steady_clock::now();
  const bool gcov = !args.gcov_paths.empty();
  const fs::path counts = files.logs / "gcov-counts";
  if (gcov) collect_gcov_counts(counts);
  auto outcomes = run_suites(suites, run_args, files.logs);
  for (auto& o : outcomes) {
    if (run.release.empty()) run.release = o.release;
    if (run.accelerator.empty()) run.accelerator = o.accelerator;
    run.tests.insert(run.tests.end(), o.tests.begin(), o.tests.end());
  }
  run.wall_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  if (args.local && run.release.empty()) {
    utsname u{};
    if (uname(&u) == 0) run.release = u.release;
  }
  // With --ktap, stdout carries only KTAP; people read the summary on stderr.
  FILE* out = args.ktap ? stderr : stdout;
  print_outcome(out, args, run, files, outcomes, run_args.jobs);
  if (gcov) {
    // Beside the run's logs; its per-file table joins the results table.
    if (auto report = report_gcov(args.kernel, counts, files.logs / "gcov", out)) {
      std::ofstream(files.table, std::ios::app) << "\n" << report->markdown;
    }
  }
  const auto left_out = std::count_if(outcomes.begin(), outcomes.end(), [](const auto& o) { return o.left_out; });
  if (left_out > 0) fmt::print(out, "--fail-fast: {} suites were not started after the first failure\n", left_out);
  bool junit_failed = false;
  if (!args.junit.empty()) {
    if (Status st = vm::write_file_atomic(args.junit, matrix::write_junit(run)); st) {
      fmt::print(out, "JUnit XML: {}\n", args.junit);
    } else {
      fmt::print(stderr, "tracebed: cannot write the JUnit XML: {}\n", st.error().message);
      junit_failed = true;
    }
  }
  if (args.ktap) fmt::print("{}", matrix::write_ktap(run));
  // No test at all: a --filter that matches nothing is a usage error;
  // without one, the suites ran nothing, which tests nothing.
  if (run.tests.empty()) return args.filter.empty() ? Exit::infrastructure : Exit::usage;
  Exit status = exit_for(matrix::verdict(run.tests));
  return status == Exit::passed && junit_failed ? Exit::failed : status;
}

}  // namespace

void add_test_command(CLI::App& app) {
  auto* cmd = app.add_subcommand("test", "run the guest suites on one kernel; a summary, the full table and JUnit XML");
  auto args = std::make_shared<TestArgs>();
  declare_test_options(*cmd, *args);
  cmd->final_callback([args] { exit_with(run_test(*args)); });
}

}  // namespace tracebed::cli
