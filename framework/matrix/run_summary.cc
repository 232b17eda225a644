#include "framework/matrix/run_summary.h"

#include <algorithm>
#include <map>
#include <vector>

#include <fmt/format.h>

#include "framework/matrix/report_writers.h"

namespace tracebed::matrix {
namespace {

std::string release_part(const KernelRun& run) {
  if (!run.release.empty()) return fmt::format(" ({})", run.release);
  if (!run.expected_release.empty()) return fmt::format(" (catalogue: {})", run.expected_release);
  return "";
}

// The tests in `state` grouped by their reason, under `heading`: reasons in
// order of count, then of first appearance.
std::string by_reason(const KernelRun& run, State state, std::string_view heading, size_t limit) {
  std::string out;
  std::vector<std::pair<std::string, size_t>> reasons;
  std::map<std::string, size_t> index;
  for (const auto& t : run.tests) {
    if (t.state != state) continue;
    std::string reason = t.summary().empty() ? "(no reason given)" : t.summary();
    auto [it, fresh] = index.emplace(reason, reasons.size());
    if (fresh) reasons.emplace_back(reason, 0);
    ++reasons[it->second].second;
  }
  std::stable_sort(reasons.begin(), reasons.end(), [](const auto& a, const auto& b) { return a.second > b.second; });
  if (reasons.empty()) return out;
  out += fmt::format("{}, by reason:\n", heading);
  for (size_t i = 0; i < reasons.size() && i < limit; ++i)
    out += fmt::format("  {:>3} × {}\n", reasons[i].second, reasons[i].first);
  if (reasons.size() > limit) {
    size_t tests = 0;
    for (size_t i = limit; i < reasons.size(); ++i) tests += reasons[i].second;
    out += fmt::format("  … {} more reasons ({} tests), in the table\n", reasons.size() - limit, tests);
  }
  return out;
}

}  // namespace

std::string write_run_summary(const KernelRun& run, const SummaryLimits& limits) {
  std::string out = fmt::format("{}{}: {}\n", run.kernel, release_part(run), run.counts().text());
  out += by_reason(run, State::skip, "skipped", limits.skip_reasons);
  out += by_reason(run, State::unresolved, "unresolved", limits.skip_reasons);
  size_t shown = 0, failed = 0;
  for (const auto& t : run.tests) {
    if (t.state != State::fail) continue;
    if (failed++ == 0) out += "failed:\n";
    if (shown == limits.failures) continue;
    ++shown;
    out += fmt::format("  {}{}\n    {}\n", t.full_name(), t.location.empty() ? "" : "  (" + t.location + ")",
                       t.summary().empty() ? "(no message)" : t.summary());
  }
  if (failed > shown) out += fmt::format("  … {} more failures, in the table\n", failed - shown);
  return out;
}

std::string write_test_table(const KernelRun& run) {
  std::string out = fmt::format("# tracebed test: {}{}\n\n{} in {:.1f} s", run.kernel, release_part(run),
                                run.counts().text(), run.wall_seconds);
  if (!run.accelerator.empty()) out += fmt::format(" under {}", run.accelerator);
  if (!run.timestamp.empty()) out += fmt::format(", started {} on {}", run.timestamp, run.hostname);
  out += ".\n\n| test | result | seconds | message |\n|---|---|---:|---|\n";
  for (const auto& t : run.tests)
    out += fmt::format("| {} | {} | {:.2f} | {} |\n", md_cell(t.full_name()),
                       t.state == State::fail ? "FAIL" : state_name(t.state), t.seconds,
                       t.state == State::pass ? "" : md_cell(t.summary()));
  for (const auto& t : run.tests) {
    if (t.state != State::fail) continue;
    out += fmt::format("\n## FAIL {}\n\n{}```\n{}\n```\n", t.full_name(),
                       t.location.empty() ? "" : fmt::format("At `{}`.\n\n", t.location), t.message);
    if (!t.console.empty()) out += fmt::format("\nConsole:\n\n```\n{}\n```\n", t.console);
  }
  return out;
}

}  // namespace tracebed::matrix
