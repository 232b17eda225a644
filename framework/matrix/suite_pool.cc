#include "framework/matrix/suite_pool.h"

#include <algorithm>
#include <atomic>
#include <map>
#include <mutex>
#include <sstream>
#include <thread>

#include <fmt/format.h>

#include "framework/base/files.h"
#include "framework/base/install_layout.h"
#include "framework/base/process.h"
#include "framework/matrix/runner.h"
#include "framework/matrix/schedule.h"
#include "framework/vm/cache/cache.h"

namespace tracebed::matrix {
namespace {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

fs::path timings_file(const std::string& kernel) {
  return vm::cache_dir() / "timings" / (file_name_for(kernel) + ".json");
}

// A kernel's last timings; before its first run, the ones shipped with
// tracebed (debian-6.12 under TCG), so that a fresh machine starts its
// slowest suites first too rather than last.
std::map<std::string, double> suite_timings(const std::string& kernel) {
  auto timings = read_suite_timings(timings_file(kernel));
  if (timings.empty())
    timings = read_suite_timings(base::shared_data("suite-timings.json", TRACEBED_SOURCE_DIR, "vmimages/suite-timings.json"));
  return timings;
}

// Puts a sharded suite's cases back in the order the binary lists them.
void in_listed_order(std::vector<TestResult>& tests, const std::vector<std::string>& listed) {
  std::map<std::string, size_t> rank;
  for (size_t i = 0; i < listed.size(); ++i) rank.emplace(listed[i], i);
  std::stable_sort(tests.begin(), tests.end(), [&](const auto& a, const auto& b) {
    auto ra = rank.find(a.full_name()), rb = rank.find(b.full_name());
    return (ra == rank.end() ? listed.size() : ra->second) < (rb == rank.end() ? listed.size() : rb->second);
  });
}

// A suite killed with its guest leaves the guest's run directory behind
// (framework/vm/guests/guest.cc make_run_dir: <cache>/run/<pid>-<n>, removed only
// by a clean stop). Keeps the last guest's console as `dest` and removes
// the leftovers; returns the copy's path, or empty when there was none.
fs::path keep_console(pid_t pid, const fs::path& dest) {
  std::error_code ec;
  std::string prefix = fmt::format("{}-", pid);
  fs::path last;
  long last_n = -1;
  std::vector<fs::path> leftovers;
  for (const auto& e : fs::directory_iterator(vm::cache_dir() / "run", ec)) {
    std::string name = e.path().filename().string();
    if (!name.starts_with(prefix)) continue;
    leftovers.push_back(e.path());
    long n = std::strtol(name.c_str() + prefix.size(), nullptr, 10);
    if (n > last_n && fs::exists(e.path() / "console.log", ec)) {
      last_n = n;
      last = e.path() / "console.log";
    }
  }
  fs::path kept;
  if (!last.empty() && fs::copy_file(last, dest, fs::copy_options::overwrite_existing, ec)) kept = dest;
  for (const auto& d : leftovers) fs::remove_all(d, ec);
  return kept;
}

struct PlannedRun {
  size_t kernel = 0;
  ScheduledRun run;
};

// Every kernel's runs, planned with that kernel's last timings, then all
// of them longest first.
std::vector<PlannedRun> plan_runs(const PoolOptions& o, const std::vector<std::vector<std::string>>& cases,
                                  const std::vector<bool>& selected) {
  std::vector<PlannedRun> plan;
  for (size_t k = 0; k < o.kernels.size(); ++k) {
    auto timings = suite_timings(o.kernels[k].name);
    std::vector<SuiteToSchedule> in;
    for (size_t s = 0; s < o.suites.size(); ++s) {
      std::string name = o.suites[s].filename().string();
      auto t = timings.find(name);
      in.push_back({name, cases[s].size(), t == timings.end() ? -1 : t->second});
    }
    for (const auto& r : schedule_suites(in, o.jobs))
      if (selected[r.suite]) plan.push_back({k, r});
  }
  std::stable_sort(plan.begin(), plan.end(),
                   [](const PlannedRun& a, const PlannedRun& b) { return a.run.estimate > b.run.estimate; });
  return plan;
}

// One process: a suite, or one shard of it, on one kernel.
PoolRun run_one(const PoolOptions& o, const PlannedRun& planned) {
  PoolRun r{planned.kernel, planned.run.suite, planned.run.shard, planned.run.shards, {}, {}};
  const PoolKernel& kernel = o.kernels[r.kernel];
  const fs::path& suite = o.suites[r.suite];
  const std::string name = suite.filename().string();
  const fs::path dir = o.work_dir / file_name_for(kernel.name);
  const std::string stem = r.shards > 1 ? fmt::format("{}.{}", name, r.shard) : name;
  const fs::path junit = dir / (stem + ".xml");
  r.log = dir / (stem + ".log");
  std::error_code ec;
  fs::remove(junit, ec);  // a report left by an earlier run must not pass for this one's
  if (!fs::exists(suite, ec)) {
    r.outcome.tests.push_back(TestResult::suite_row(name, State::fail, "suite binary not built: " + suite.string()));
    return r;
  }
  std::vector<std::string> argv;
  // gtest takes its shard only from the environment.
  if (r.shards > 1)
    argv = {"env", fmt::format("GTEST_TOTAL_SHARDS={}", r.shards), fmt::format("GTEST_SHARD_INDEX={}", r.shard)};
  argv.insert(argv.end(), {suite.string(), "--tracebed_kernel=" + kernel.name, "--gtest_output=xml:" + junit.string(),
                           "--gtest_brief=1"});
  if (!o.filter.empty()) argv.push_back("--gtest_filter=" + o.filter);
  argv.insert(argv.end(), o.suite_args.begin(), o.suite_args.end());
  argv.insert(argv.end(), kernel.args.begin(), kernel.args.end());

  base::ProcessOptions po;
  po.timeout = o.timeout;
  const bool stream = o.jobs == 1 && o.stream_when_serial;
  // Logged as it comes, so that a hang still leaves what was printed; shown
  // too when one suite runs at a time.
  po.output = stream ? base::Output::tee : base::Output::to_file;
  po.log = r.log;
  auto started = Clock::now();
  auto res = base::run_process(argv, po);
  r.outcome.wall_seconds = std::chrono::duration<double>(Clock::now() - started).count();
  if (!res) {
    r.outcome.tests.push_back(TestResult::suite_row(name, State::fail, res.error().message));
    return r;
  }
  if (stream) (void)vm::write_file_atomic(r.log, res->output);
  fs::path console;
  if (res->timed_out || res->status != 0) console = keep_console(res->pid, dir / (stem + ".console.log"));
  r.outcome.tests = suite_results(name, junit, res->status, res->timed_out, o.timeout, r.log, &r.outcome.release,
                                  &r.outcome.accelerator, console);
  return r;
}

void add_to(SuiteOutcome& into, const SuiteOutcome& part) {
  into.tests.insert(into.tests.end(), part.tests.begin(), part.tests.end());
  into.wall_seconds += part.wall_seconds;
  into.left_out |= part.left_out;
  if (into.release.empty()) into.release = part.release;
  if (into.accelerator.empty()) into.accelerator = part.accelerator;
}

}  // namespace

double SuiteOutcome::start_seconds() const {
  double s = 0;
  for (const auto& t : tests) s += t.guest_start.seconds;
  return s;
}

int SuiteOutcome::count(State s) const {
  return static_cast<int>(std::count_if(tests.begin(), tests.end(), [s](const TestResult& t) { return t.state == s; }));
}

std::optional<std::vector<std::string>> listed_cases(const fs::path& suite, const std::string& filter) {
  std::vector<std::string> argv = {suite.string(), "--gtest_list_tests"};
  if (!filter.empty()) argv.push_back("--gtest_filter=" + filter);
  auto r = base::run_process(argv, std::chrono::seconds(60), base::Output::capture_stdout);
  if (!r || r->status != 0) return std::nullopt;
  std::vector<std::string> out;
  std::istringstream in(r->output);
  std::string group;
  // "Suite." lines, then indented case names.
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

std::vector<std::vector<SuiteOutcome>> run_suite_pool(const PoolOptions& o) {
  const size_t kernels = o.kernels.size(), suites = o.suites.size();
  std::vector<std::vector<std::string>> cases(suites);
  std::vector<bool> selected(suites, true);  // a binary that cannot list its cases runs, to show why
  std::error_code ec;
  for (size_t s = 0; s < suites; ++s) {
    if (!fs::exists(o.suites[s], ec)) continue;
    auto listed = listed_cases(o.suites[s], o.filter);
    if (listed) cases[s] = std::move(*listed);
    selected[s] = !listed || !cases[s].empty();
  }
  for (const auto& k : o.kernels) fs::create_directories(o.work_dir / file_name_for(k.name), ec);

  const std::vector<PlannedRun> plan = plan_runs(o, cases, selected);
  std::vector<PoolRun> done(plan.size());
  std::vector<size_t> left(kernels, 0);
  for (const auto& p : plan) ++left[p.kernel];
  std::vector<Clock::time_point> first_start(kernels, Clock::time_point::max());
  std::vector<std::vector<SuiteOutcome>> out(kernels, std::vector<SuiteOutcome>(suites));
  std::mutex mutex;
  size_t finished = 0;

  std::atomic<bool> stopped{false};  // stop_after_failure: a run failed
  // Under the lock: the kernel's shards merged per suite, its timings kept
  // (unless runs were left out: a suite that did not run took no time).
  auto kernel_done = [&](size_t k) {
    for (size_t p = 0; p < plan.size(); ++p)
      if (plan[p].kernel == k) add_to(out[k][plan[p].run.suite], done[p].outcome);
    auto timings = read_suite_timings(timings_file(o.kernels[k].name));
    for (size_t s = 0; s < suites; ++s) {
      in_listed_order(out[k][s].tests, cases[s]);
      // Timed with the whole suite selected: a filtered run says little.
      if (o.filter.empty() && selected[s]) timings[o.suites[s].filename().string()] = out[k][s].wall_seconds;
    }
    if (o.filter.empty() && !stopped) (void)write_suite_timings(timings_file(o.kernels[k].name), timings);
    double wall = std::chrono::duration<double>(Clock::now() - first_start[k]).count();
    if (o.on_kernel_done) o.on_kernel_done(k, out[k], wall);
  };

  std::atomic<size_t> next{0};
  auto worker = [&] {
    for (size_t p; (p = next++) < plan.size();) {
      if (stopped) {
        // Left out after a failure: counted as done, with nothing in it.
        std::lock_guard lock(mutex);
        done[p].kernel = plan[p].kernel;
        done[p].suite = plan[p].run.suite;
        done[p].outcome.left_out = true;
        if (--left[plan[p].kernel] == 0) kernel_done(plan[p].kernel);
        continue;
      }
      {
        std::lock_guard lock(mutex);
        first_start[plan[p].kernel] = std::min(first_start[plan[p].kernel], Clock::now());
      }
      PoolRun r = run_one(o, plan[p]);
      if (o.stop_after_failure && r.outcome.count(State::fail) > 0) stopped = true;
      std::lock_guard lock(mutex);
      done[p] = std::move(r);
      if (o.on_run_done) o.on_run_done(done[p], ++finished, plan.size());
      if (--left[plan[p].kernel] == 0) kernel_done(plan[p].kernel);
    }
  };
  size_t jobs = std::max<size_t>(1, std::min(o.jobs, plan.size()));
  std::vector<std::thread> threads;
  for (size_t j = 0; j < jobs; ++j) threads.emplace_back(worker);
  for (auto& t : threads) t.join();
  // A kernel with no runs at all (no suites) is still done.
  for (size_t k = 0; k < kernels; ++k)
    if (plan.empty() || std::none_of(plan.begin(), plan.end(), [&](const PlannedRun& p) { return p.kernel == k; })) {
      first_start[k] = Clock::now();
      kernel_done(k);
    }
  return out;
}

}  // namespace tracebed::matrix
