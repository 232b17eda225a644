#include "suites/kselftest/ftracetest_batch.h"

#include <algorithm>
#include <cstdlib>
#include <thread>

#include <fmt/format.h>

#include "framework/testing/guest_environment.h"

namespace tracebed::suites {
namespace {

using Clock = std::chrono::steady_clock;
using namespace std::chrono_literals;

constexpr const char* kLogDir = "/tmp/kselftest-log";
constexpr const char* kOut = "/tmp/kselftest-out";
constexpr const char* kDone = "/tmp/kselftest-done";

// Which case each of ftracetest's run numbers is: the top-level runs in the
// order given, then the instance runs of the flagged ones in the same order.
std::vector<std::string> run_order(const std::vector<std::string>& cases, const std::set<std::string>& instance) {
  std::vector<std::string> order = cases;
  for (const auto& c : cases)
    if (instance.count(c)) order.push_back(c);
  return order;
}

// The kept logs by run number: "<N>-<case file>-log.XXXXXX".
std::map<int, std::string> read_logs(vm::Guest& g, const std::set<int>& wanted) {
  std::map<int, std::string> logs;
  auto entries = g.agent().list_dir(kLogDir);
  if (!entries) return logs;
  for (const auto& e : *entries) {
    int n = std::atoi(e.name.c_str());
    if (n <= 0 || !wanted.count(n) || e.name.find("-log.") == std::string::npos) continue;
    auto text = g.agent().read_file(std::string(kLogDir) + "/" + e.name, 4u << 20);
    if (text) logs[n] = coverage::log_tail(*text, 300);
  }
  return logs;
}

}  // namespace

std::map<std::string, FtracetestResult> run_ftracetest_batch(const std::vector<std::string>& cases,
                                                             const std::set<std::string>& instance,
                                                             const std::string& ftrace_dir,
                                                             const std::string& path_prefix,
                                                             const std::string& shell,
                                                             std::chrono::seconds stall_timeout,
                                                             std::string* unblamed_death) {
  std::map<std::string, FtracetestResult> out;
  const std::vector<std::string> order = run_order(cases, instance);
  auto& g = testlib::guest();
  std::string args;
  for (const auto& c : cases) args += " test.d/" + c;
  // In the background, detached from the agent's pipes: the host polls its log.
  std::string script = fmt::format(
      "rm -rf {0} {1} {2}; cd {3} || exit 99; "
      "(PATH={4}:$PATH setsid {6} ./ftracetest -k -l {0}{5} > {1} 2>&1; echo $? > {2}) < /dev/null > /dev/null 2>&1 &",
      kLogDir, kOut, kDone, ftrace_dir, path_prefix, args, shell);
  if (auto r = g.sh(script, 60s); !r || r->shell_status() != 0) {
    std::string why = r ? r->out + r->err : r.error().message;
    out[cases.front()].error = "starting ftracetest failed: " + why;
    return out;
  }
  std::vector<coverage::FtracetestRun> runs;
  std::vector<double> ended;              // seconds since the start, per run
  std::map<size_t, std::string> console;  // run index -> console fault seen by then
  const auto start = Clock::now();
  auto last = start;
  std::string error;
  bool died = false;
  bool done = false;
  while (!done) {
    std::this_thread::sleep_for(1s);
    auto log = g.agent().read_file(std::string(kLogDir) + "/ftracetest.log", 16u << 20);
    if (!log && (g.agent().broken() || !g.alive())) {
      error = "the guest died: " + g.explain(log.error()).message;
      died = true;
      break;
    }
    size_t before = runs.size();
    if (log) runs = coverage::parse_ftracetest_output(*log);
    double now = std::chrono::duration<double>(Clock::now() - start).count();
    while (ended.size() < runs.size()) ended.push_back(now);
    if (runs.size() > before) {
      last = Clock::now();
      // A fault printed while these runs ran belongs to the last of them.
      if (Status st = g.check_console(); !st) console[runs.size() - 1] = st.error().message;
    }
    done = g.agent().stat(kDone).ok();
    if (!done && Clock::now() - last > stall_timeout) {
      error = fmt::format("no result for {} s (hung)", stall_timeout.count());
      break;
    }
  }
  if (done) {
    if (auto rest = g.agent().read_file(std::string(kLogDir) + "/ftracetest.log", 16u << 20))
      runs = coverage::parse_ftracetest_output(*rest);
    if (runs.size() < order.size()) {
      auto text = g.agent().read_file(kOut, 1u << 20);
      error = fmt::format("ftracetest stopped after {} of {} runs:\n{}", runs.size(), order.size(),
                          text ? coverage::log_tail(*text, 40) : text.error().message);
    }
  }
  std::set<int> wanted;
  for (const auto& r : runs)
    if (r.verdict != coverage::SelftestVerdict::pass) wanted.insert(r.number);
  if (error.empty() || g.alive()) {
    // The log of a hung run too, while its guest still answers.
    if (!error.empty() && runs.size() < order.size()) wanted.insert(static_cast<int>(runs.size()) + 1);
    auto logs = read_logs(g, wanted);
    for (size_t i = 0; i < runs.size() && i < order.size(); ++i) {
      auto& res = out[order[i]];
      auto it = logs.find(runs[i].number);
      res.runs.push_back({runs[i], it == logs.end() ? "" : it->second, console.count(i) ? console[i] : ""});
      res.seconds += ended[i] - (i == 0 ? 0 : ended[i - 1]);
    }
    if (!error.empty() && runs.size() < order.size()) {
      auto it = logs.find(static_cast<int>(runs.size()) + 1);
      if (it != logs.end()) error += "\nits log so far:\n" + it->second;
    }
  } else {
    for (size_t i = 0; i < runs.size() && i < order.size(); ++i) out[order[i]].runs.push_back({runs[i], "", ""});
  }
  if (error.empty()) return out;
  // The run in progress failed the batch; no later case may share this guest.
  if (g.alive()) g.kill();
  const std::string culprit = runs.size() < order.size() ? order[runs.size()] : order.back();
  // A guest that died took the last second of the log with it: a case may
  // have passed and the next one killed the kernel before the log was read.
  // Only when every unread run is one case's is that case the culprit;
  // otherwise none is blamed and each runs again (alone: the caller's
  // second attempt).
  const std::set<std::string> unread(order.begin() + static_cast<long>(std::min(runs.size(), order.size())),
                                     order.end());
  const bool certain = !died || unread.size() <= 1;
  if (!certain && unblamed_death) *unblamed_death = error;
  if (certain) {
    out[culprit].error = error;
    out[culprit].seconds += std::chrono::duration<double>(Clock::now() - last).count();
  }
  // Cases whose runs are incomplete (an instance run still to come) run again.
  for (auto it = out.begin(); it != out.end();) {
    size_t want = instance.count(it->first) ? 2 : 1;
    if ((it->first != culprit || !certain) && it->second.runs.size() < want)
      it = out.erase(it);
    else
      ++it;
  }
  return out;
}

}  // namespace tracebed::suites
