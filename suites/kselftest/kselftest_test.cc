// The kernel's own tracing selftests in the guest, from Debian's
// linux-source of the kernel's series (vm::fetch_selftests): one case per
// ftracetest .tc file (Ftracetest.<area>/<case>.tc) and per user_events
// selftest (UserEventsSelftest.<file>.c/<test>), registered at run time from
// that kernel's own tree, so every kernel runs exactly the cases its source
// has.
//
// ftracetest's verdict is kept as it is: PASS passes, FAIL fails with the
// case's log, UNSUPPORTED / UNTESTED skip with ftracetest's own reason,
// UNRESOLVED is unresolved (a skip with the property result=unresolved),
// XFAIL passes with a note. A case flagged `instance` runs twice, as
// ftracetest runs it (on the top level and on an instance); the test fails
// when either run fails, else is unresolved when either run is. The cases
// run on the suite's guest, the cases of an area in one ftracetest call
// (ftracetest_batch.h); a case that hangs or crashes the kernel fails alone
// (with the console) and the rest continue on a fresh guest.
#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <map>
#include <memory>
#include <regex>
#include <set>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <gtest/gtest.h>

#include "framework/agent/protocol.h"
#include "framework/base/files.h"
#include "framework/coverage/selftest_output.h"
#include "framework/matrix/results.h"
#include "framework/testing/guest_environment.h"
#include "framework/testing/tool_fixture.h"
#include "framework/vm/images/debian_tool.h"
#include "framework/vm/kernels/selftests.h"
#include "suites/kselftest/ftracetest_batch.h"

namespace tracebed::suites {
namespace {

namespace fs = std::filesystem;
using namespace std::chrono_literals;
using coverage::SelftestVerdict;

constexpr std::string_view kGuestRoot = "/opt/kselftest";
// A batch with no new result line for this long has a hung case. The
// slowest ftracetest cases (every tracer on every function, in turn) take
// a few minutes under TCG on a loaded host.
constexpr auto kStallTimeout = 600s;

struct Shared {
  vm::Selftests selftests;
  std::string source;  // "linux-source-6.12 6.12.107-1"
  Result<fs::path> user_events_bin = Error{""};
  std::set<std::string> instance;  // cases flagged to run on an instance too
  std::map<std::string, FtracetestResult> results;
  // Cases whose batch's guest died before their results were read, and how.
  std::map<std::string, std::string> batch_deaths;
  uint64_t prepared_boot = 0;
  // user_events: each program runs once per guest; its results serve every case of its file.
  std::map<std::string, Result<std::vector<coverage::HarnessResult>>> harness;
  uint64_t harness_boot = 0;
};

// argv as one shell command line (testlib::shell_word for each).
std::string shell_words(const std::vector<std::string>& argv) {
  std::string out;
  for (const auto& a : argv) out += (out.empty() ? "" : " ") + testlib::shell_word(a);
  return out;
}

// Runs before each case on a new guest: the awk ftracetest needs.
void prepare(Shared& s) {
  auto& env = testlib::environment();
  auto& g = testlib::guest();  // boots it first, so boots() counts it
  if (s.prepared_boot == env.boots()) return;
  s.prepared_boot = env.boots();
  // busybox awk lacks gawk's strtonum, which trace_marker_raw.tc needs:
  // Debian's gawk through its own loader, named awk first on the PATH.
  const auto& gawk = testlib::debian_tool("gawk");
  // What ftracetest takes from an installed system and the image lacks: a
  // user database with a second group and user (mount_options.tc,
  // test_ownership.tc; Debian's base-passwd first entries), the loopback
  // interface up (the inter-event cases ping 127.0.0.1), and /bin/sh a file
  // of its own rather than a link to busybox (add_remove_uprobe.tc probes
  // the shell it finds in /proc/self/maps by a name ending in "sh").
  // Each step on its own: a kernel without INET has no loopback to bring up.
  std::string script = fmt::format(
      "ip link set lo up 2>/dev/null; "
      "[ -e /etc/group ] || printf 'root:x:0:\\ndaemon:x:1:\\nbin:x:2:\\nsys:x:3:\\n' > /etc/group; "
      "[ -e /etc/passwd ] || printf 'root:x:0:0:root:/root:/bin/sh\\ndaemon:x:1:1:daemon:/:/bin/false\\n"
      "bin:x:2:2:bin:/bin:/bin/false\\n' > /etc/passwd; "
      "[ -L /bin/sh ] && cp /bin/busybox /bin/sh.tmp && mv -f /bin/sh.tmp /bin/sh; "
      "mkdir -p {0}/bin",
      kGuestRoot);
  auto r = g.sh(script, 30s);
  if (!r || r->shell_status() != 0)
    ADD_FAILURE() << "preparing the guest: " << (r ? r->out + r->err : r.error().message);
  if (!gawk) return;
  std::string wrapper = "#!/bin/sh\nexec " + shell_words(vm::guest_command(*gawk)) + " \"$@\"\n";
  auto w = g.agent().write_file(std::string(kGuestRoot) + "/bin/awk", wrapper, agent::kWriteCreate, 0755);
  if (!w || *w != 0) ADD_FAILURE() << "writing the awk wrapper: " << (w ? std::strerror(*w) : w.error().message);
}

// The selected cases of `tc`'s area that have no result yet, `tc` first:
// one batch (gtest's filter and sharding decide what is selected).
std::vector<std::string> batch_for(const Shared& s, const std::string& tc) {
  std::string area = fs::path(tc).parent_path().string();
  std::vector<std::string> batch = {tc};
  const auto* unit = ::testing::UnitTest::GetInstance();
  for (int i = 0; i < unit->total_test_suite_count(); ++i) {
    const auto* suite = unit->GetTestSuite(i);
    if (std::string_view(suite->name()) != "Ftracetest") continue;
    for (int j = 0; j < suite->total_test_count(); ++j) {
      const auto* info = suite->GetTestInfo(j);
      std::string name = info->name();
      if (name == tc || !info->should_run() || s.results.count(name)) continue;
      if (fs::path(name).parent_path().string() == area) batch.push_back(name);
    }
  }
  return batch;
}

class FtracetestCase : public ::testing::Test {
 public:
  FtracetestCase(std::shared_ptr<Shared> shared, std::string tc) : shared_(std::move(shared)), tc_(std::move(tc)) {}

  void TestBody() override {
    RecordProperty("selftests", shared_->source);
    // ftracetest under Debian's dash, not the guest's busybox sh: busybox
    // runs its own applets before the PATH (so awk stayed busybox's, which
    // lacks gawk's strtonum) and execs them as /proc/self/exe (so the
    // dynstring case's histogram, keyed on the exec'd file, had no "ping").
    const auto& dash = testlib::debian_tool("dash");
    if (!dash) FAIL() << "ftracetest's shell: " << dash.error().message;
    const std::string shell = shell_words(vm::guest_command(*dash));
    // Twice at most: a case left without a result by another's hang runs
    // again on a fresh guest, alone, so that a guest that dies names it.
    for (int attempt = 0; attempt < 2 && !shared_->results.count(tc_); ++attempt) {
      prepare(*shared_);
      auto batch = attempt == 0 ? batch_for(*shared_, tc_) : std::vector<std::string>{tc_};
      std::string death;
      auto results = run_ftracetest_batch(batch, shared_->instance, std::string(kGuestRoot) + "/ftrace",
                                          std::string(kGuestRoot) + "/bin", shell, kStallTimeout, &death);
      if (!death.empty())
        for (const auto& c : batch)
          if (!results.count(c)) shared_->batch_deaths.emplace(c, death);
      for (auto& [c, r] : results) shared_->results.insert_or_assign(c, std::move(r));
    }
    auto it = shared_->results.find(tc_);
    if (it == shared_->results.end()) FAIL() << "ftracetest gave no result for " << tc_ << " in two batches";
    const FtracetestResult& r = it->second;
    RecordProperty("ftracetest_seconds", fmt::format("{:.1f}", r.seconds));
    // The guest died in this case's batch, with it among the cases whose
    // results went with the guest: a kernel that dies under ftracetest has
    // failed, whichever case it was and whatever the case did alone.
    if (auto d = shared_->batch_deaths.find(tc_); d != shared_->batch_deaths.end()) {
      std::string alone;
      for (const auto& run : r.runs)
        alone += fmt::format(" {}{}", verdict_name(run.run.verdict), run.run.instance ? " (on an instance)" : "");
      ADD_FAILURE() << "ftracetest " << tc_ << ": the guest died in its batch, while this case or one after it ran: "
                    << d->second << "\nrun again alone on a fresh guest:" << (alone.empty() ? " no result" : alone)
                    << (r.error.empty() ? "" : " (" + r.error + ")");
    }
    if (!r.error.empty()) {
      RecordProperty("ftracetest", "HANG");
      std::string before;
      for (const auto& run : r.runs)
        before += fmt::format(" (before it: {} {})", verdict_name(run.run.verdict),
                              run.run.instance ? "on an instance" : "on the top level");
      FAIL() << "ftracetest " << tc_ << " did not finish on " << testlib::environment().options().kernel << before
             << ": " << r.error;
    }
    judge(r);
  }

 private:
  void judge(const FtracetestResult& r) {
    std::vector<std::string> failures, unresolved, skips;
    bool passed = false;
    for (const auto& [run, log, console] : r.runs) {
      std::string where = run.instance ? "on an instance" : "on the top level";
      RecordProperty(run.instance ? "ftracetest_instance" : "ftracetest", std::string(verdict_name(run.verdict)));
      if (!console.empty()) failures.push_back(fmt::format("the console {}: {}\n", where, console));
      switch (run.verdict) {
        case SelftestVerdict::pass:
          passed = true;
          break;
        case SelftestVerdict::xfail:
          passed = true;
          RecordProperty("note", fmt::format("XFAIL {}: {}", where, coverage::ftracetest_reason(log)));
          break;
        case SelftestVerdict::fail:
        case SelftestVerdict::undefined:
          failures.push_back(fmt::format("{} {} ({}):\n{}", verdict_name(run.verdict), where, run.description,
                                         coverage::log_tail(log, 40)));
          break;
        case SelftestVerdict::unresolved:
          unresolved.push_back(
              fmt::format("{} {}: {}", verdict_name(run.verdict), where, coverage::ftracetest_reason(log)));
          break;
        default:
          skips.push_back(fmt::format("{} {}: {}", verdict_name(run.verdict), where, coverage::ftracetest_reason(log)));
      }
    }
    if (!failures.empty()) {
      std::string all;
      for (const auto& f : failures) all += f;
      FAIL() << "ftracetest " << tc_ << ": " << all;
    }
    // A run ftracetest could not decide leaves the case undecided, even
    // beside a pass: neither a pass nor a failure. gtest has only those and
    // skips, so it is a skip that says so, which framework/matrix reads as
    // State::unresolved; its message starts "ftracetest UNRESOLVED".
    if (!unresolved.empty()) {
      RecordProperty(std::string(matrix::kUnresolvedProperty.first), std::string(matrix::kUnresolvedProperty.second));
      skips.insert(skips.begin(), unresolved.begin(), unresolved.end());
    } else if (passed) {
      if (!skips.empty()) RecordProperty("note", skips.front());
      return;
    }
    if (skips.empty()) FAIL() << "ftracetest " << tc_ << ": no result line";
    GTEST_SKIP() << "ftracetest " << skips.front();
  }

  std::shared_ptr<Shared> shared_;
  std::string tc_;
};

// Runs the user_events program `file` once on this guest.
const Result<std::vector<coverage::HarnessResult>>& harness_results(Shared& s, const std::string& program) {
  auto& env = testlib::environment();
  auto& g = testlib::guest();
  if (s.harness_boot != env.boots()) {
    s.harness.clear();
    s.harness_boot = env.boots();
  }
  auto it = s.harness.find(program);
  if (it != s.harness.end()) return it->second;
  Result<std::vector<coverage::HarnessResult>> out = Error{""};
  // The harness's assertion messages (TH_LOG) go to stderr: keep them in order with the results.
  auto r = g.sh(fmt::format("{}/user_events/{} 2>&1", kGuestRoot, program), 300s);
  if (!r) {
    if (g.alive()) g.kill();
    out = Error{fmt::format("{} did not finish: {}", program, r.error().message)};
  } else {
    auto results = coverage::parse_harness_output(r->out);
    if (results.empty())
      out = Error{fmt::format("{} printed no result (status {}):\n{}", program, r->shell_status(),
                              coverage::log_tail(r->out + r->err, 40))};
    else
      out = std::move(results);
  }
  return s.harness.insert_or_assign(program, std::move(out)).first->second;
}

class UserEventsCase : public ::testing::Test {
 public:
  UserEventsCase(std::shared_ptr<Shared> shared, std::string file, std::string test)
      : shared_(std::move(shared)), file_(std::move(file)), test_(std::move(test)) {}

  void TestBody() override {
    RecordProperty("selftests", shared_->source);
    if (!shared_->user_events_bin)
      GTEST_SKIP() << "needs the user_events selftests: " << shared_->user_events_bin.error().message;
    std::string program = fs::path(file_).stem().string();
    const auto& results = harness_results(*shared_, program);
    if (!results) FAIL() << results.error().message;
    for (const auto& h : *results) {
      if (h.test != test_) continue;
      std::string verdict = !h.ok ? "FAIL" : h.directive.empty() ? "PASS" : h.directive;
      RecordProperty("kselftest", verdict);
      if (!h.ok) FAIL() << program << " " << h.full << " failed: " << h.reason << "\n" << h.log;
      if (h.directive == "SKIP") GTEST_SKIP() << program << " " << h.full << " skipped: " << h.reason;
      if (!h.directive.empty()) RecordProperty("note", h.directive + " " + h.reason);
      return;
    }
    FAIL() << program << " reported no result for " << test_;
  }

 private:
  std::shared_ptr<Shared> shared_;
  std::string file_, test_;
};

void register_unavailable(const std::string& why) {
  ::testing::RegisterTest("Ftracetest", "Unavailable", nullptr, nullptr, __FILE__, __LINE__,
                          [why]() -> ::testing::Test* {
                            class Skip : public ::testing::Test {
                             public:
                              explicit Skip(std::string w) : w_(std::move(w)) {}
                              void TestBody() override { GTEST_SKIP() << "needs the kernel's selftests: " << w_; }
                              std::string w_;
                            };
                            return new Skip(why);
                          });
}

// The files of `dir` as payloads under `guest`.
std::vector<vm::Payload> payloads(const fs::path& dir, const std::string& guest) {
  std::vector<vm::Payload> out;
  std::error_code ec;
  for (auto it = fs::recursive_directory_iterator(dir, ec); !ec && it != fs::recursive_directory_iterator();
       it.increment(ec))
    if (it->is_regular_file()) out.push_back({it->path(), guest + "/" + fs::relative(it->path(), dir).string()});
  std::sort(out.begin(), out.end(), [](const auto& a, const auto& b) { return a.guest < b.guest; });
  return out;
}

void register_user_events(const std::shared_ptr<Shared>& shared) {
  if (!fs::is_directory(shared->selftests.user_events())) return;  // before 6.4: no such selftests
  std::vector<std::pair<std::string, std::string>> cases;
  static const std::regex kTest(R"((?:^|\n)TEST(?:_F)?\(\s*(?:\w+\s*,\s*)?(\w+)\s*\))");
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(shared->selftests.user_events(), ec)) {
    if (e.path().extension() != ".c") continue;
    auto text = base::read_file(e.path());
    if (!text) continue;
    for (std::sregex_iterator m(text->begin(), text->end(), kTest), end; m != end; ++m)
      cases.emplace_back(e.path().filename().string(), (*m)[1].str());
  }
  std::sort(cases.begin(), cases.end());
  shared->user_events_bin = vm::build_user_events(shared->selftests);
  if (shared->user_events_bin)
    testlib::environment().add_image_files(
        payloads(*shared->user_events_bin, std::string(kGuestRoot) + "/user_events"));
  else
    fmt::print(stderr, "tracebed: user_events selftests: {}\n", shared->user_events_bin.error().message);
  for (const auto& entry : cases) {
    // Copies, not structured bindings: clang 14 cannot capture those.
    std::string file = entry.first, test = entry.second;
    std::string name = file + "/" + test;
    ::testing::RegisterTest(
        "UserEventsSelftest", name.c_str(), nullptr, nullptr, __FILE__, __LINE__,
        [shared, file, test]() -> ::testing::Test* { return new UserEventsCase(shared, file, test); });
  }
}

void register_selftests() {
  auto& env = testlib::environment();
  const std::string kernel = env.options().kernel;
  auto catalogue = vm::Catalogue::load();
  if (!catalogue) return register_unavailable(catalogue.error().message);
  auto spec = catalogue->resolve(kernel);
  if (!spec) return register_unavailable(spec.error().message);
  std::string release = spec->release;
  if (spec->local())
    if (auto r = vm::bzimage_release(spec->local_image)) release = *r;
  auto source = vm::selftest_source(*catalogue, *spec, release);
  if (!source) return register_unavailable(source.error().message);
  if (!source->note.empty()) fmt::print(stderr, "tracebed: kselftest: {}\n", source->note);
  auto st = vm::fetch_selftests(*catalogue, *source);
  if (!st) return register_unavailable(st.error().message);
  auto cases = vm::ftracetest_cases(*st);
  if (!cases) return register_unavailable(cases.error().message);
  auto shared = std::make_shared<Shared>();
  shared->selftests = *st;
  shared->source = fmt::format("{} {}{}", source->package.name, source->package.version,
                               source->note.empty() ? "" : " (" + source->note + ")");
  static const std::regex kInstance(R"((^|\n)#[ \t]*flags:.*instance)");
  for (const auto& tc : *cases)
    if (auto text = base::read_file(st->ftrace() / "test.d" / tc); text && std::regex_search(*text, kInstance))
      shared->instance.insert(tc);
  env.add_image_files(payloads(st->ftrace(), std::string(kGuestRoot) + "/ftrace"));
  // ftracetest's helper (poll), where its tests look for it: beside ftracetest.
  if (auto helpers = vm::build_ftrace_helpers(*st)) {
    for (auto& p : payloads(*helpers, std::string(kGuestRoot) + "/ftrace"))
      if (fs::path(p.guest).filename() != ".complete") env.add_image_files({p});
  } else {
    fmt::print(stderr, "tracebed: kselftest: {} (its cases stay UNRESOLVED)\n", helpers.error().message);
  }
  for (const auto& tc : *cases)
    ::testing::RegisterTest("Ftracetest", tc.c_str(), nullptr, nullptr, __FILE__, __LINE__,
                            [shared, tc]() -> ::testing::Test* { return new FtracetestCase(shared, tc); });
  register_user_events(shared);
}

const bool registered_ = testlib::register_kernel_tests(register_selftests);

}  // namespace
}  // namespace tracebed::suites
