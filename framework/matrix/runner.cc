#include "framework/matrix/runner.h"

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <mutex>
#include <thread>

#include <fmt/format.h>

#include "framework/base/files.h"
#include "framework/base/process.h"
#include "framework/matrix/junit.h"
#include "framework/matrix/report.h"
#include "framework/matrix/summary.h"
#include "framework/vm/process.h"

namespace tracebed::matrix {
namespace {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

std::mutex g_print;

void say(std::string_view message) {
  std::lock_guard lock(g_print);
  vm::progress(message);
}

// A suite killed with its guest leaves the guest's run directory behind
// (framework/vm/guest.cc make_run_dir: <cache>/run/<pid>-<n>, removed only
// by a clean stop). Keeps the last guest's console beside the suite's log as
// `<suite>.console.log` and removes the leftovers; returns the copy's path.
fs::path keep_console(pid_t pid, const fs::path& dest) {
  std::error_code ec;
  fs::path run = vm::cache_dir() / "run";
  std::string prefix = fmt::format("{}-", pid);
  fs::path last;
  long last_n = -1;
  std::vector<fs::path> leftovers;
  for (const auto& e : fs::directory_iterator(run, ec)) {
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

// Runs argv with stdout and stderr in `log` (so that a hang still leaves
// everything printed so far), killing its process group after `timeout`.
// The suites' guests die with them (PR_SET_PDEATHSIG in framework/vm).
Result<base::ProcessResult> run_logged(const std::vector<std::string>& argv, const fs::path& log,
                                       std::chrono::seconds timeout) {
  base::ProcessOptions o;
  o.output = base::Output::to_file;
  o.log = log;
  o.timeout = timeout;
  return base::run_process(argv, o);
}

std::string read_or_empty(const fs::path& p) {
  auto t = base::read_file(p);
  return t ? std::move(t).value() : std::string();
}

KernelRun run_kernel(const RunOptions& o, const KernelJob& job, const std::string& stamp) {
  KernelRun run;
  run.kernel = job.kernel;
  run.expected_release = job.expected_release;
  run.stamp = stamp;
  fs::path dir = o.out / "logs" / file_name_for(job.kernel);
  std::error_code ec;
  fs::remove_all(dir, ec);
  fs::create_directories(dir, ec);
  auto start = Clock::now();
  size_t i = 0;
  for (const auto& suite : o.suites) {
    ++i;
    std::string base = suite.filename().string();
    if (!fs::exists(suite)) {
      run.tests.push_back({base, "(suite)", State::fail, "suite binary not built: " + suite.string(), "", "", 0, {}});
      continue;
    }
    fs::path junit = dir / (base + ".xml");
    fs::path log = dir / (base + ".log");
    std::vector<std::string> argv = {suite.string(), "--tracebed_kernel=" + job.kernel,
                                     "--gtest_output=xml:" + junit.string(), "--gtest_brief=1"};
    if (!o.accel.empty()) argv.push_back("--tracebed_accel=" + o.accel);
    argv.insert(argv.end(), o.suite_args.begin(), o.suite_args.end());
    argv.insert(argv.end(), job.suite_args.begin(), job.suite_args.end());
    if (!o.filter.empty()) argv.push_back("--gtest_filter=" + o.filter);
    say(fmt::format("{}: {} ({}/{})", job.kernel, base, i, o.suites.size()));
    auto r = run_logged(argv, log, o.suite_timeout);
    if (!r) {
      run.tests.push_back({base, "(suite)", State::fail, r.error().message, "", "", 0, {}});
      continue;
    }
    fs::path console;
    if (r->timed_out || r->status != 0) console = keep_console(r->pid, dir / (base + ".console.log"));
    auto got = suite_results(base, junit, r->status, r->timed_out, o.suite_timeout, log, &run.release,
                             &run.accelerator, console);
    run.tests.insert(run.tests.end(), got.begin(), got.end());
  }
  run.wall_seconds = std::chrono::duration<double>(Clock::now() - start).count();
  return run;
}

}  // namespace

std::string file_name_for(std::string_view kernel) {
  std::string out;
  for (char c : kernel) {
    bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '.' || c == '-' ||
              c == '_' || c == '+';
    out += ok ? c : '_';
  }
  if (out.empty() || out[0] == '.') out.insert(0, "k");
  return out;
}

std::string suites_hash(const std::vector<fs::path>& suites) {
  std::string all;
  for (const auto& s : suites) {
    auto text = base::read_file(s);
    all += fmt::format("{}={};", s.filename().string(), text ? vm::content_hash(*text) : "missing");
  }
  return vm::content_hash(all);
}

std::string stamp_for(const KernelJob& job, std::string_view suites_hash, std::string_view filter,
                      std::string_view accel, std::chrono::seconds timeout) {
  return vm::content_hash(fmt::format("suites={}\nkernel={}\nidentity={}\nfilter={}\naccel={}\ntimeout={}\n",
                                      suites_hash, job.kernel, job.identity, filter, accel, timeout.count()));
}

std::string log_tail(std::string_view text, size_t max_lines) {
  constexpr size_t kMaxBytes = 6 * 1024;
  while (!text.empty() && (text.back() == '\n' || text.back() == '\r')) text.remove_suffix(1);
  size_t pos = text.size();
  for (size_t lines = 0; pos > 0 && lines < max_lines; ++lines) {
    size_t nl = text.rfind('\n', pos - 1);
    if (nl == std::string_view::npos) {
      pos = 0;
      break;
    }
    if (text.size() - nl > kMaxBytes) break;
    pos = nl;
  }
  std::string_view tail = text.substr(pos);
  if (!tail.empty() && tail.front() == '\n') tail.remove_prefix(1);
  if (tail.size() > kMaxBytes) tail = tail.substr(tail.size() - kMaxBytes);
  return std::string(tail);
}

std::vector<TestResult> suite_results(const std::string& suite_binary, const fs::path& junit, int status,
                                      bool timed_out, std::chrono::seconds timeout, const fs::path& log,
                                      std::string* release, std::string* accelerator, const fs::path& console) {
  std::vector<TestResult> out;
  auto died = [&](std::string why) {
    TestResult t;
    t.suite = suite_binary;
    t.name = "(suite)";
    t.state = State::fail;
    t.message = std::move(why);
    t.console = log_tail(read_or_empty(log));
    if (!console.empty()) {
      std::string c = log_tail(read_or_empty(console));
      if (!c.empty()) t.console += fmt::format("\n--- guest console ({}) ---\n{}", console.filename().string(), c);
    }
    out.push_back(std::move(t));
  };
  if (timed_out) {
    died(fmt::format("{} did not finish within {} s and was killed (hung guest?); log: {}", suite_binary,
                     timeout.count(), log.filename().string()));
    // A report cannot exist: gtest writes it at the end.
    return out;
  }
  std::error_code ec;
  if (!fs::exists(junit, ec)) {
    if (status != 0)
      died(fmt::format("{} exited with status {} without a report (guest did not boot, or the suite crashed)",
                       suite_binary, status));
    // Status 0 without a report: nothing matched the filter and gtest wrote
    // nothing; there is nothing to report.
    return out;
  }
  auto text = base::read_file(junit);
  if (!text) {
    died(text.error().message);
    return out;
  }
  auto parsed = read_junit(*text, junit.string());
  if (!parsed) {
    died(fmt::format("{} exited with status {} and an unreadable report: {}", suite_binary, status,
                     parsed.error().message));
    return out;
  }
  if (auto it = parsed->properties.find("kernel_release"); it != parsed->properties.end() && release->empty())
    *release = it->second;
  if (auto it = parsed->properties.find("accelerator"); it != parsed->properties.end() && accelerator->empty())
    *accelerator = it->second;
  out = std::move(parsed->tests);
  bool any_fail = std::any_of(out.begin(), out.end(), [](const TestResult& t) { return t.state == State::fail; });
  if (status != 0 && !any_fail)
    died(fmt::format("{} exited with status {} although its report has no failure", suite_binary, status));
  return out;
}

Result<Matrix> run_matrix(const RunOptions& o) {
  std::error_code ec;
  fs::create_directories(o.out / "runs", ec);
  if (ec) return Error{fmt::format("{}: cannot create: {}", (o.out / "runs").string(), ec.message())};
  std::vector<fs::path> inputs = o.suites;
  inputs.insert(inputs.end(), o.stamp_files.begin(), o.stamp_files.end());
  std::string hash = suites_hash(inputs);
  Matrix m;
  m.filter = o.filter;
  m.kernels.resize(o.kernels.size());
  std::vector<size_t> todo;
  for (size_t i = 0; i < o.kernels.size(); ++i) {
    const auto& job = o.kernels[i];
    // The launcher flags change where the suites ran: part of the accelerator's stamp.
    std::string accel = o.accel;
    for (const auto& a : o.suite_args) accel += " " + a;
    for (const auto& a : job.suite_args) accel += " " + a;
    std::string stamp = stamp_for(job, hash, o.filter, accel, o.suite_timeout);
    fs::path record = o.out / "runs" / (file_name_for(job.kernel) + ".json");
    if (!o.force && fs::exists(record, ec)) {
      auto text = base::read_file(record);
      auto run = text ? read_kernel_run(*text, record.string()) : Result<KernelRun>(text.error());
      if (!run) {
        say(fmt::format("{}: ignoring its previous results: {}", job.kernel, run.error().message));
      } else if (run->stamp == stamp) {
        say(fmt::format("{}: results are current (same suites, kernel and filter), not run again", job.kernel));
        m.kernels[i] = std::move(run).value();
        continue;
      }
    }
    m.kernels[i].kernel = job.kernel;
    m.kernels[i].stamp = stamp;
    todo.push_back(i);
  }
  std::atomic<size_t> next{0};
  std::vector<std::string> errors(o.kernels.size());
  auto worker = [&] {
    for (size_t n; (n = next++) < todo.size();) {
      size_t i = todo[n];
      const auto& job = o.kernels[i];
      say(fmt::format("{}: starting", job.kernel));
      KernelRun run = run_kernel(o, job, m.kernels[i].stamp);
      say(fmt::format("{}: done in {:.1f} s: {} passed, {} skipped, {} failed", job.kernel, run.wall_seconds,
                      run.count(State::pass), run.count(State::skip), run.count(State::fail)));
      fs::path record = o.out / "runs" / (file_name_for(job.kernel) + ".json");
      if (Status st = vm::write_file_atomic(record, write_kernel_run(run)); !st) errors[i] = st.error().message;
      m.kernels[i] = std::move(run);
    }
  };
  int jobs = std::max(1, std::min<int>(o.jobs, static_cast<int>(todo.size())));
  std::vector<std::thread> threads;
  for (int j = 0; j < jobs && !todo.empty(); ++j) threads.emplace_back(worker);
  for (auto& t : threads) t.join();
  for (const auto& e : errors)
    if (!e.empty()) return Error{e};
  return m;
}

Status write_outputs(const Matrix& m, const fs::path& dir) {
  TRACEBED_TRY(vm::write_file_atomic(dir / "summary.json", write_summary(m)));
  TRACEBED_TRY(vm::write_file_atomic(dir / "report.md", write_markdown(m)));
  TRACEBED_TRY(vm::write_file_atomic(dir / "report.html", write_html(m)));
  for (const auto& k : m.kernels) {
    std::string name = file_name_for(k.kernel);
    TRACEBED_TRY(vm::write_file_atomic(dir / "junit" / (name + ".xml"), write_junit(k)));
    TRACEBED_TRY(vm::write_file_atomic(dir / "ktap" / (name + ".ktap"), write_ktap(k)));
  }
  return {};
}

}  // namespace tracebed::matrix
