#include "framework/matrix/crosscheck.h"

#include <fnmatch.h>

#include <map>

#include <fmt/format.h>

#include "framework/base/files.h"

namespace tracebed::matrix {
namespace {

std::string property(const TestResult& t, std::string_view name) {
  for (const auto& [k, v] : t.properties)
    if (k == name) return v;
  return "";
}

bool glob(const std::string& pattern, std::string_view text) {
  return pattern == "*" || fnmatch(pattern.c_str(), std::string(text).c_str(), 0) == 0;
}

// The first line that says something (gtest's FAIL() message starts with "Failed").
std::string first_line(std::string_view s) {
  while (s.starts_with("Failed\n")) s.remove_prefix(7);
  return std::string(s.substr(0, s.find('\n')));
}

}  // namespace

std::string selftest_verdict(const TestResult& t) {
  if (t.suite == kFtracetestSuite) {
    std::string top = property(t, "ftracetest"), inst = property(t, "ftracetest_instance");
    for (const auto& v : {top, inst})
      if (v == "FAIL" || v == "UNDEFINED" || v == "HANG") return "FAIL";
    // As the case's own test judges it (suites/kselftest): a run that could
    // not decide leaves the case undecided.
    if (top == "UNRESOLVED" || inst == "UNRESOLVED") return "UNRESOLVED";
    return top;
  }
  if (t.suite == kUserEventsSelftestSuite) {
    std::string v = property(t, "kselftest");
    return v == "SKIP" ? "UNSUPPORTED" : v;
  }
  return "";
}

std::string selftest_case_id(const TestResult& t) {
  if (t.suite == kFtracetestSuite) return "ftracetest: " + t.name;
  if (t.suite == kUserEventsSelftestSuite) return "user_events: " + t.name;
  return "";
}

std::string Disagreement::kind() const { return fmt::format("{} vs {}", selftest, state_name(ours)); }

std::vector<Disagreement> cross_check(const std::vector<coverage::Cover>& covers,
                                      const std::vector<TestResult>& tests) {
  std::map<std::string, const TestResult*> ours;
  for (const auto& t : tests) ours[t.full_name()] = &t;
  std::vector<Disagreement> out;
  for (const auto& t : tests) {
    std::string verdict = selftest_verdict(t), id = selftest_case_id(t);
    if (verdict.empty() || id.empty()) continue;
    for (const auto& c : covers) {
      if (c.case_id != id) continue;
      auto it = ours.find(c.test);
      if (it == ours.end()) continue;  // that suite did not run here
      const TestResult& mine = *it->second;
      // Only a decided verdict can be contradicted: an UNRESOLVED selftest
      // agrees with anything of ours (with our own unresolved most of all),
      // while our test failing to decide where the selftest passed is as
      // telling as our skipping there.
      const bool undecided = mine.state == State::skip || mine.state == State::unresolved;
      bool disagree = (verdict == "PASS" && undecided) || (verdict == "UNSUPPORTED" && mine.state == State::pass) ||
                      (verdict == "FAIL" && mine.state == State::pass);
      if (!disagree) continue;
      std::string detail = undecided ? mine.summary() : first_line(t.message);
      out.push_back({id, verdict, c.test, mine.state, detail});
    }
  }
  return out;
}

const Explanation* explain(const std::vector<Explanation>& all, std::string_view kernel, const Disagreement& d) {
  for (const auto& e : all)
    if (glob(e.kernel, kernel) && glob(e.case_id, d.case_id) && glob(e.test, d.test)) return &e;
  return nullptr;
}

std::string format_cross_check(std::string_view kernel, const std::vector<Disagreement>& disagreements,
                               const std::vector<Explanation>& explanations) {
  std::string out =
      fmt::format("### {}: {} disagreement{}\n\n", kernel, disagreements.size(), disagreements.size() == 1 ? "" : "s");
  if (disagreements.empty()) return out;
  out += "| selftest case | verdicts | tracebed test | detail | explanation |\n|---|---|---|---|---|\n";
  for (const auto& d : disagreements) {
    const Explanation* e = explain(explanations, kernel, d);
    std::string detail = d.detail;
    for (auto& ch : detail)
      if (ch == '|') ch = '/';
    out += fmt::format("| {} | {} | {} | {} | {} |\n", d.case_id, d.kind(), d.test, detail,
                       e ? e->why : "**unexplained**");
  }
  return out + "\n";
}

std::string cross_check_report(const std::vector<KernelRun>& runs) {
  bool any = false;
  for (const auto& r : runs)
    for (const auto& t : r.tests) any = any || !selftest_verdict(t).empty();
  if (!any) return "";
  coverage::Paths paths = coverage::default_paths();
  auto covers = coverage::scan_suites(paths.suites(), paths.root);
  if (!covers) return fmt::format("cross-check: no coverage registry: {}\n", covers.error().message);
  std::vector<Explanation> explanations;
  if (auto text = base::read_file(paths.disagreements())) {
    auto e = coverage::parse_explanations(*text, paths.disagreements().string());
    if (!e) return fmt::format("cross-check: {}\n", e.error().message);
    explanations = std::move(e).value();
  }
  std::string out = "## Cross-check: the kernel's selftests against tracebed's tests\n\n";
  for (const auto& r : runs) {
    bool ran = false;
    for (const auto& t : r.tests) ran = ran || !selftest_verdict(t).empty();
    if (ran) out += format_cross_check(r.kernel, cross_check(*covers, r.tests), explanations);
  }
  return out;
}

}  // namespace tracebed::matrix
