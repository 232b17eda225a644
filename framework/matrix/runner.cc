#include "framework/matrix/runner.h"

#include <algorithm>
#include <cstdlib>
#include <mutex>

#include <fmt/format.h>

#include "framework/base/files.h"
#include "framework/base/process.h"
#include "framework/matrix/boot_check.h"
#include "framework/matrix/junit.h"
#include "framework/matrix/report_writers.h"
#include "framework/matrix/suite_pool.h"
#include "framework/matrix/summary.h"
#include "framework/vm/cache/cache.h"

namespace tracebed::matrix {
namespace {

namespace fs = std::filesystem;

std::mutex g_print;

void say(std::string_view message) {
  std::lock_guard lock(g_print);
  vm::progress(message);
}

std::string read_or_empty(const fs::path& p) {
  auto t = base::read_file(p);
  return t ? std::move(t).value() : std::string();
}

}  // namespace

std::string file_name_for(std::string_view kernel) {
  std::string out;
  for (char c : kernel) {
    bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '.' || c == '-' ||
              c == '_' || c == '+';
    out += ok ? c : '_';
  }
  if (out.empty() || out[0] == '.') out = "k" + out;
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
    TestResult t = TestResult::suite_row(suite_binary, State::fail, std::move(why));
    t.console = log_tail(read_or_empty(log));
    if (!console.empty()) {
      std::string c = log_tail(read_or_empty(console));
      if (!c.empty()) t.console += fmt::format("\n--- guest console ({}) ---\n{}", console.filename().string(), c);
    }
    out.push_back(std::move(t));
  };
  if (timed_out) {
    died(fmt::format("{} {} {} s and was killed (hung guest?); log: {}", suite_binary, kDidNotFinish,
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

namespace {

fs::path run_record(const RunOptions& o, const std::string& kernel) {
  return o.out / "runs" / (file_name_for(kernel) + ".json");
}

// The kernels whose recorded results are not current, each started in m;
// the current ones are taken into m as they were.
std::vector<size_t> kernels_to_run(const RunOptions& o, Matrix& m) {
  std::vector<fs::path> inputs = o.suites;
  inputs.insert(inputs.end(), o.stamp_files.begin(), o.stamp_files.end());
  const std::string hash = suites_hash(inputs);
  std::vector<size_t> todo;
  std::error_code ec;
  for (size_t i = 0; i < o.kernels.size(); ++i) {
    const auto& job = o.kernels[i];
    // The launcher flags change where the suites ran: part of the accelerator's stamp.
    std::string accel = o.accel;
    for (const auto& a : o.suite_args) accel += " " + a;
    for (const auto& a : job.suite_args) accel += " " + a;
    std::string stamp = stamp_for(job, hash, o.filter, accel, o.suite_timeout);
    fs::path record = run_record(o, job.kernel);
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
    m.kernels[i].stamp_start();
    todo.push_back(i);
  }
  return todo;
}

// Each kernel boots once first: one that cannot is its column's one result
// ("did not boot"), recorded, and leaves todo; the others go on.
void drop_kernels_that_do_not_boot(const RunOptions& o, Matrix& m, std::vector<size_t>& todo,
                                   std::vector<std::string>& errors) {
  std::erase_if(todo, [&](size_t i) {
    std::vector<std::string> args = o.suite_args;
    args.insert(args.end(), o.kernels[i].suite_args.begin(), o.kernels[i].suite_args.end());
    if (!o.accel.empty()) args.push_back("--tracebed_accel=" + o.accel);
    auto booted = o.boot_check(o.kernels[i].kernel, args);
    if (booted) return false;
    KernelRun& run = m.kernels[i];
    run.expected_release = o.kernels[i].expected_release;
    run.tests = {did_not_boot(run.kernel, booted.error())};
    run.stamp.clear();  // not current: the next run tries the boot again
    say(fmt::format("{}: did not boot, its suites are not run: {}", run.kernel, booted.error().message));
    if (Status st = vm::write_file_atomic(run_record(o, run.kernel), write_kernel_run(run)); !st)
      errors[i] = st.error().message;
    return true;
  });
}

// One pool for all the kernels to run: their suites share the machine's
// guests, and each kernel is recorded as it finishes.
void run_kernels(const RunOptions& o, Matrix& m, const std::vector<size_t>& todo, std::vector<std::string>& errors) {
  PoolOptions pool;
  std::error_code ec;
  for (size_t i : todo) {
    pool.kernels.push_back({o.kernels[i].kernel, o.kernels[i].suite_args});
    fs::remove_all(o.out / "logs" / file_name_for(o.kernels[i].kernel), ec);
  }
  pool.suites = o.suites;
  pool.filter = o.filter;
  pool.suite_args = o.suite_args;
  if (!o.accel.empty()) pool.suite_args.push_back("--tracebed_accel=" + o.accel);
  pool.jobs = static_cast<size_t>(std::max(1, o.jobs));
  pool.timeout = o.suite_timeout;
  pool.work_dir = o.out / "logs";
  pool.on_run_done = [&](const PoolRun& r, size_t finished, size_t total) {
    say(fmt::format("[{}/{}] {}: {}{}: {} in {:.1f} s", finished, total, pool.kernels[r.kernel].name,
                    o.suites[r.suite].filename().string(),
                    r.shards > 1 ? fmt::format(" (shard {}/{})", r.shard + 1, r.shards) : "",
                    count_states(r.outcome.tests).text(), r.outcome.wall_seconds));
  };
  pool.on_kernel_done = [&](size_t k, const std::vector<SuiteOutcome>& outcomes, double wall) {
    size_t i = todo[k];
    KernelRun& run = m.kernels[i];
    run.expected_release = o.kernels[i].expected_release;
    for (const auto& s : outcomes) {
      if (run.release.empty()) run.release = s.release;
      if (run.accelerator.empty()) run.accelerator = s.accelerator;
      run.tests.insert(run.tests.end(), s.tests.begin(), s.tests.end());
    }
    run.wall_seconds = wall;
    say(fmt::format("{}: done in {:.1f} s: {}", run.kernel, run.wall_seconds, run.counts().text()));
    if (Status st = vm::write_file_atomic(run_record(o, run.kernel), write_kernel_run(run)); !st)
      errors[i] = st.error().message;
  };
  say(fmt::format("{} suites on {} kernels, {} guests at a time", o.suites.size(), todo.size(), pool.jobs));
  (void)run_suite_pool(pool);
}

}  // namespace

Result<Matrix> run_matrix(const RunOptions& o) {
  std::error_code ec;
  fs::create_directories(o.out / "runs", ec);
  if (ec) return Error{fmt::format("{}: cannot create: {}", (o.out / "runs").string(), ec.message())};
  Matrix m;
  m.filter = o.filter;
  m.kernels.resize(o.kernels.size());
  std::vector<size_t> todo = kernels_to_run(o, m);
  std::vector<std::string> errors(o.kernels.size());
  drop_kernels_that_do_not_boot(o, m, todo, errors);
  if (!todo.empty()) run_kernels(o, m, todo, errors);
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
