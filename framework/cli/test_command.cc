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
#include <map>
#include <sstream>

#include <fmt/format.h>

#include "framework/base/cpus.h"
#include "framework/cli/commands.h"
#include "framework/matrix/junit.h"
#include "framework/matrix/report.h"
#include "framework/matrix/runner.h"
#include "framework/matrix/schedule.h"
#include "framework/matrix/suite_list.h"
#include "framework/vm/catalogue.h"
#include "framework/vm/local_tracing.h"
#include "framework/vm/process.h"

namespace tracebed::cli {
namespace {

namespace fs = std::filesystem;

// One suite binary's run (or one shard of it): its results, and its output
// when held back (parallel runs print each one's output in one piece).
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


// The cases of a suite binary the filter selects, in its own order
// (--gtest_list_tests: "Suite." lines, then indented case names).
std::vector<std::string> listed_cases(const fs::path& suite, const std::string& filter) {
  std::vector<std::string> argv = {suite.string(), "--gtest_list_tests"};
  if (!filter.empty()) argv.push_back("--gtest_filter=" + filter);
  auto r = vm::run_process(argv, std::chrono::seconds(60));
  std::vector<std::string> out;
  if (!r || r->status != 0) return out;
  std::istringstream in(r->output);
  std::string group;
  for (std::string line; std::getline(in, line);) {
    if (line.empty() || line.starts_with("tracebed:")) continue;
    std::string name = line.substr(0, line.find("  #"));  // parameterised cases carry a comment
    while (!name.empty() && name.back() == ' ') name.pop_back();
    if (name.empty()) continue;
    if (name[0] != ' ') group = name;
    else out.push_back(group + name.substr(name.find_first_not_of(' ')));
  }
  return out;
}

// Puts a sharded suite's cases back in the order the binary lists them.
void in_listed_order(std::vector<matrix::TestResult>& tests, const std::vector<std::string>& listed) {
  std::map<std::string, size_t> rank;
  for (size_t i = 0; i < listed.size(); ++i) rank.emplace(listed[i], i);
  std::stable_sort(tests.begin(), tests.end(), [&](const auto& a, const auto& b) {
    auto ra = rank.find(a.full_name()), rb = rank.find(b.full_name());
    return (ra == rank.end() ? listed.size() : ra->second) < (rb == rank.end() ? listed.size() : rb->second);
  });
}

struct TestRunArgs {
  std::string kernel, filter, launcher, libvirt_uri, local_problem;
  size_t jobs = 1;
};

// Runs the suites (sharded and ordered by matrix::schedule_suites), returns
// one outcome per suite in the order given, shards merged.
std::vector<SuiteOutcome> run_suites(const std::vector<fs::path>& suites, const TestRunArgs& a, const fs::path& tmp) {
  const auto timeout = std::chrono::seconds(std::chrono::hours(2));
  fs::path timings_file = vm::cache_dir() / "timings" / (matrix::file_name_for(a.kernel) + ".json");
  auto timings = matrix::read_suite_timings(timings_file);
  std::vector<std::vector<std::string>> cases(suites.size());
  std::vector<matrix::SuiteToSchedule> plan_in;
  for (size_t i = 0; i < suites.size(); ++i) {
    std::string name = suites[i].filename().string();
    if (a.local_problem.empty() && fs::exists(suites[i])) cases[i] = listed_cases(suites[i], a.filter);
    auto t = timings.find(name);
    plan_in.push_back({name, cases[i].size(), t == timings.end() ? -1 : t->second});
  }
  const auto plan = matrix::schedule_suites(plan_in, a.jobs);
  std::vector<SuiteOutcome> shards(plan.size());

  auto run_one = [&](size_t p, vm::Output output) {
    const auto& unit = plan[p];
    const fs::path& suite = suites[unit.suite];
    const std::string name = suite.filename().string();
    SuiteOutcome& o = shards[p];
    if (!a.local_problem.empty()) return o.tests.push_back(suite_row(name, matrix::State::skip, a.local_problem));
    if (!fs::exists(suite))
      return o.tests.push_back(suite_row(name, matrix::State::fail, "suite binary not built: " + suite.string()));
    fs::path report = tmp / fmt::format("{}.{}.xml", name, unit.shard);
    std::vector<std::string> argv;
    // gtest takes its shard only from the environment.
    if (unit.shards > 1)
      argv = {"env", fmt::format("GTEST_TOTAL_SHARDS={}", unit.shards), fmt::format("GTEST_SHARD_INDEX={}", unit.shard)};
    argv.insert(argv.end(), {suite.string(), "--tracebed_kernel=" + a.kernel, "--gtest_output=xml:" + report.string(),
                             "--gtest_brief=1"});
    if (!a.filter.empty()) argv.push_back("--gtest_filter=" + a.filter);
    for (const auto& f : launcher_args(a.launcher, a.libvirt_uri)) argv.push_back(f);
    auto started = std::chrono::steady_clock::now();
    auto r = vm::run_process(argv, timeout, output);
    o.wall_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
    if (!r) return o.tests.push_back(suite_row(name, matrix::State::fail, r.error().message));
    o.output = std::move(r->output);
    o.tests = matrix::suite_results(name, report, r->status, false, timeout, {}, &o.release, &o.accelerator);
  };
  std::mutex print_mutex;
  size_t finished = 0;
  auto report_one = [&](size_t p) {
    std::lock_guard lock(print_mutex);
    const SuiteOutcome& o = shards[p];
    if (!o.output.empty()) fmt::print(stderr, "{}", o.output);
    const auto& unit = plan[p];
    fmt::print(stderr, "tracebed: [{}/{}] {}{} on {}: {}\n", ++finished, plan.size(),
               suites[unit.suite].filename().string(),
               unit.shards > 1 ? fmt::format(" (shard {}/{})", unit.shard + 1, unit.shards) : "", a.kernel,
               o.summary());
  };
  if (a.jobs == 1) {
    for (size_t p = 0; p < plan.size(); ++p) {
      fmt::print(stderr, "tracebed: running {} on {}\n", suites[plan[p].suite].filename().string(), a.kernel);
      run_one(p, vm::Output::to_stderr);
      report_one(p);
    }
  } else {
    fmt::print(stderr, "tracebed: {} suites on {} as {} runs, {} at a time\n", suites.size(), a.kernel, plan.size(),
               a.jobs);
    std::atomic<size_t> next{0};
    std::vector<std::thread> workers;
    for (size_t w = 0; w < a.jobs; ++w)
      workers.emplace_back([&] {
        for (size_t p; (p = next++) < plan.size();) {
          run_one(p, vm::Output::capture);
          report_one(p);
        }
      });
    for (auto& w : workers) w.join();
  }

  // Back to one outcome per suite, in the suites' order; remember the times.
  std::vector<SuiteOutcome> out(suites.size());
  for (size_t p = 0; p < plan.size(); ++p) {
    SuiteOutcome& o = out[plan[p].suite];
    SuiteOutcome& shard = shards[p];
    o.tests.insert(o.tests.end(), shard.tests.begin(), shard.tests.end());
    o.wall_seconds += shard.wall_seconds;
    if (o.release.empty()) o.release = shard.release;
    if (o.accelerator.empty()) o.accelerator = shard.accelerator;
  }
  for (size_t i = 0; i < suites.size(); ++i) {
    in_listed_order(out[i].tests, cases[i]);
    // Timed with the whole suite selected: a filtered run says little.
    if (a.filter.empty() && a.local_problem.empty()) timings[suites[i].filename().string()] = out[i].wall_seconds;
  }
  if (a.filter.empty() && a.local_problem.empty()) (void)matrix::write_suite_timings(timings_file, timings);
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
    auto suites = matrix::built_suites();
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
    if (args->no_snapshot) setenv("TRACEBED_NO_SNAPSHOT", "1", 1);
    fs::path tmp = vm::cache_dir() / "run" / fmt::format("test-{}", getpid());
    fs::create_directories(tmp);
    TestRunArgs run_args{args->kernel, args->filter, args->launcher, args->libvirt_uri,
                         args->local ? vm::local_tracing_problem() : "", 1};
    run_args.jobs = std::max<size_t>(1, args->jobs > 0 ? args->jobs : static_cast<size_t>(base::usable_cpus()));
    // gtest's XML report, read as `tracebed matrix` reads it: unlike its
    // JSON, the XML keeps GTEST_SKIP's reason.
    matrix::KernelRun run;
    run.kernel = args->kernel;
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
    fmt::print(table, "{}\n", time_summary(outcomes, run.wall_seconds, run_args.jobs));
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
