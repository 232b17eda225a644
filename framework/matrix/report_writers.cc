#include "framework/matrix/report_writers.h"

#include <algorithm>
#include <map>

#include <fmt/format.h>

#include "framework/base/utf8.h"
#include "framework/matrix/junit.h"

namespace tracebed::matrix {
namespace {

// The union of every kernel's tests, in the order first seen, with each
// kernel's result per test (nullptr: that kernel did not report it).
struct Grid {
  std::vector<std::string> suites;
  std::vector<std::pair<std::string, std::string>> tests;  // suite, full name
  std::vector<std::map<std::string, const TestResult*>> cells;  // per kernel
};

Grid grid_of(const Matrix& m) {
  Grid g;
  std::map<std::string, bool> seen_test, seen_suite;
  for (const auto& k : m.kernels) {
    auto& cells = g.cells.emplace_back();
    for (const auto& t : k.tests) {
      std::string full = t.full_name();
      cells[full] = &t;
      if (!seen_suite[t.suite]) {
        seen_suite[t.suite] = true;
        g.suites.push_back(t.suite);
      }
      if (!seen_test[full]) {
        seen_test[full] = true;
        g.tests.emplace_back(t.suite, full);
      }
    }
  }
  // Grouped by suite, cases in the order the suites ran them.
  std::stable_sort(g.tests.begin(), g.tests.end(), [&](const auto& a, const auto& b) {
    auto pa = std::find(g.suites.begin(), g.suites.end(), a.first);
    auto pb = std::find(g.suites.begin(), g.suites.end(), b.first);
    return pa < pb;
  });
  return g;
}

std::string duration(double s) {
  if (s < 60) return fmt::format("{:.1f} s", s);
  int total = static_cast<int>(s + 0.5);
  if (total < 3600) return fmt::format("{} m {:02} s", total / 60, total % 60);
  return fmt::format("{} h {:02} m", total / 3600, total % 3600 / 60);
}

std::string release_of(const KernelRun& k) {
  if (k.did_not_boot()) return "did not boot";
  if (!k.release.empty()) return k.release;
  if (!k.expected_release.empty()) return fmt::format("not reported (catalogue: {})", k.expected_release);
  return "not reported";
}

double max_wall(const Matrix& m) {
  double w = 0;
  for (const auto& k : m.kernels) w = std::max(w, k.wall_seconds);
  return w;
}

Counts suite_totals(const KernelRun& k, const std::string& suite) {
  Counts t;
  for (const auto& r : k.tests)
    if (r.suite == suite) t.add(r.state);
  return t;
}

Counts all_totals(const Matrix& m) {
  Counts t;
  for (const auto& k : m.kernels) t.add(k.counts());
  return t;
}

std::string totals_text(const Counts& t) {
  if (t.total() == 0) return "not run";
  std::vector<std::string> parts;
  if (t.pass) parts.push_back(fmt::format("{} pass", t.pass));
  if (t.skip) parts.push_back(fmt::format("{} skip", t.skip));
  if (t.unresolved) parts.push_back(fmt::format("{} unresolved", t.unresolved));
  if (t.fail) parts.push_back(fmt::format("{} fail", t.fail));
  return fmt::format("{}", fmt::join(parts, ", "));
}

// The kernels tables have an unresolved column only when some case is, so
// a matrix without any reads as it always did.
bool any_unresolved(const Matrix& m) { return all_totals(m).unresolved > 0; }

// A suite's results on one kernel, or why it has none.
std::string suite_cell(const KernelRun& k, const std::string& suite) {
  if (k.did_not_boot()) return "did not boot";
  return totals_text(suite_totals(k, suite));
}

std::string html_escape(std::string_view s) { return xml_escape(s); }

const char* mark(State s) {
  switch (s) {
    case State::pass: return "✅ pass";
    case State::skip: return "⚪ skip";
    case State::fail: return "❌ FAIL";
    case State::unresolved: return "🔵 unresolved";
  }
  return "?";
}

}  // namespace

std::string md_cell(std::string_view s) {
  std::string out;
  for (char c : s) {
    if (c == '|') out += "\\|";
    else if (c == '\n' || c == '\r') out += ' ';
    else out += c;
  }
  return out;
}

std::string write_markdown(const Matrix& m) {
  Grid g = grid_of(m);
  Counts all = all_totals(m);
  const bool unresolved = any_unresolved(m);
  std::string out = "# tracebed matrix\n\n";
  out += fmt::format("{} kernel(s), {} test(s); {}", m.kernels.size(), g.tests.size(), all.text());
  if (!m.filter.empty()) out += fmt::format("; filter `{}`", m.filter);
  out += fmt::format(".\n\n## Kernels\n\n| kernel | release | accelerator | pass | skip | {}fail | wall time |\n"
                     "|---|---|---|---:|---:|---:|{}---|\n",
                     unresolved ? "unresolved | " : "", unresolved ? "---:|" : "");
  double widest = max_wall(m);
  for (const auto& k : m.kernels) {
    int bar = widest > 0 ? std::max(1, static_cast<int>(k.wall_seconds / widest * 20 + 0.5)) : 0;
    std::string bars;
    for (int i = 0; i < bar; ++i) bars += "█";
    Counts c = k.counts();
    out += fmt::format("| {} | {} | {} | {} | {} | {}{} | `{}` {} |\n", md_cell(k.kernel), md_cell(release_of(k)),
                       k.accelerator.empty() ? "—" : k.accelerator, c.pass, c.skip,
                       unresolved ? fmt::format("{} | ", c.unresolved) : "", c.fail, bars, duration(k.wall_seconds));
  }
  auto header = [&](std::string_view first) {
    std::string h = fmt::format("| {} |", first), rule = "|---|";
    for (const auto& k : m.kernels) {
      h += fmt::format(" {} |", md_cell(k.kernel));
      rule += "---|";
    }
    return h + "\n" + rule + "\n";
  };
  out += "\n## Suites\n\n" + header("suite");
  for (const auto& s : g.suites) {
    out += fmt::format("| {} |", md_cell(s));
    for (const auto& k : m.kernels) out += fmt::format(" {} |", suite_cell(k, s));
    out += "\n";
  }
  out += "\n## Tests\n\n" + header("test");
  for (const auto& [suite, full] : g.tests) {
    out += fmt::format("| {} |", md_cell(full));
    for (const auto& cells : g.cells) {
      auto it = cells.find(full);
      if (it == cells.end()) {
        out += " — not run |";
        continue;
      }
      const TestResult& t = *it->second;
      out += fmt::format(" {}", mark(t.state));
      // The feature a skip names ("needs timerlat: ..."); the whole reason is under Skips.
      if (t.state == State::skip && !t.summary().empty()) {
        std::string what = t.summary().substr(0, t.summary().find(':'));
        if (what.size() > 40) what = what.substr(0, 37) + "...";
        out += fmt::format(" ({})", md_cell(what));
      }
      out += " |";
    }
    out += "\n";
  }
  std::string skips, undecided, failures;
  for (const auto& k : m.kernels) {
    for (const auto& t : k.tests) {
      if (t.state == State::skip || t.state == State::unresolved)
        (t.state == State::skip ? skips : undecided) +=
            fmt::format("- **{}** `{}`: {}\n", md_cell(k.kernel), t.full_name(),
                        t.summary().empty() ? "(no reason given)" : md_cell(t.summary()));
      if (t.state == State::fail) {
        failures += fmt::format("\n### {} · {}\n\n", k.kernel, t.full_name());
        if (!t.location.empty()) failures += fmt::format("at `{}`\n\n", t.location);
        failures += fmt::format("~~~text\n{}\n~~~\n", t.message.empty() ? "(no message)" : t.message);
        if (!t.console.empty()) failures += fmt::format("\nconsole / log excerpt:\n\n~~~text\n{}\n~~~\n", t.console);
      }
    }
  }
  if (!skips.empty()) out += "\n## Skips\n\n" + skips;
  if (!undecided.empty()) out += "\n## Unresolved (ran, could not decide)\n\n" + undecided;
  if (!failures.empty()) out += "\n## Failures\n" + failures;
  return out;
}

namespace {

constexpr std::string_view kHtmlHead = R"(<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<title>tracebed matrix</title>
<style>
body { font: 14px/1.4 system-ui, sans-serif; margin: 1.5em; color: #222; }
table { border-collapse: collapse; margin: 0.5em 0 1.5em; }
th, td { border: 1px solid #ccc; padding: 3px 8px; text-align: left; vertical-align: top; }
th { background: #f3f3f3; }
td.pass { background: #d9f2d9; }
td.skip { background: #fff3c4; }
td.fail { background: #f8c8c8; font-weight: bold; }
td.unresolved { background: #cfe0fa; }
td.absent { background: #eee; color: #888; }
td.num { text-align: right; }
.bar { background: #5b8def; height: 12px; display: inline-block; vertical-align: middle; }
.reason { display: block; font-size: 11px; font-weight: normal; color: #555; max-width: 28em; }
pre { background: #f7f7f7; border: 1px solid #ddd; padding: 6px; white-space: pre-wrap; max-width: 110em; }
code { font-size: 12px; }
</style>
</head>
<body>
<h1>tracebed matrix</h1>
)";

// The table of kernels: release, accelerator, counts and a bar of wall time.
std::string html_kernels(const Matrix& m, bool unresolved) {
  std::string out = fmt::format(
      "<h2>Kernels</h2>\n<table id=\"kernels\">\n<tr><th>kernel</th><th>release</th>"
      "<th>accelerator</th><th>pass</th><th>skip</th>{}<th>fail</th><th>wall time</th></tr>\n",
      unresolved ? "<th>unresolved</th>" : "");
  double widest = max_wall(m);
  for (const auto& k : m.kernels) {
    double pct = widest > 0 ? k.wall_seconds / widest * 100 : 0;
    Counts c = k.counts();
    out += fmt::format(
        "<tr><td>{}</td><td>{}</td><td>{}</td><td class=\"num\">{}</td><td class=\"num\">{}</td>{}"
        "<td class=\"num\">{}</td><td><span class=\"bar\" style=\"width: {:.0f}px\"></span> {}</td></tr>\n",
        html_escape(k.kernel), html_escape(release_of(k)), k.accelerator.empty() ? "—" : html_escape(k.accelerator),
        c.pass, c.skip, unresolved ? fmt::format("<td class=\"num\">{}</td>", c.unresolved) : "", c.fail, pct * 3,
        duration(k.wall_seconds));
  }
  return out + "</table>\n";
}

std::string html_header_row(const Matrix& m, std::string_view first) {
  std::string h = fmt::format("<tr><th>{}</th>", first);
  for (const auto& k : m.kernels) h += fmt::format("<th>{}</th>", html_escape(k.kernel));
  return h + "</tr>\n";
}

// A suite per row, a kernel per column, each cell its counts.
std::string html_suites(const Matrix& m, const Grid& g) {
  std::string out = "<h2>Suites</h2>\n<table id=\"suites\">\n" + html_header_row(m, "suite");
  for (const auto& s : g.suites) {
    out += fmt::format("<tr><td>{}</td>", html_escape(s));
    for (const auto& k : m.kernels) {
      Counts t = suite_totals(k, s);
      const char* cls = t.fail ? "fail" : t.unresolved ? "unresolved" : t.pass ? "pass" : t.skip ? "skip" : "absent";
      out += fmt::format("<td class=\"{}\">{}</td>", cls, totals_text(t));
    }
    out += "</tr>\n";
  }
  return out + "</table>\n";
}

// A test per row, a kernel per column, each cell its result and reason.
std::string html_tests(const Matrix& m, const Grid& g) {
  std::string out = "<h2>Tests</h2>\n<table id=\"grid\">\n" + html_header_row(m, "test");
  for (const auto& [suite, full] : g.tests) {
    out += fmt::format("<tr><td><code>{}</code></td>", html_escape(full));
    for (const auto& cells : g.cells) {
      auto it = cells.find(full);
      if (it == cells.end()) {
        out += "<td class=\"absent\">not run</td>";
        continue;
      }
      const TestResult& t = *it->second;
      std::string reason = t.state == State::pass ? "" : t.summary();
      out += reason.empty() ? fmt::format("<td class=\"{}\">{}", state_name(t.state), state_name(t.state))
                            : fmt::format("<td class=\"{}\" title=\"{}\">{}", state_name(t.state),
                                          html_escape(reason), state_name(t.state));
      if (!reason.empty()) out += fmt::format("<span class=\"reason\">{}</span>", html_escape(reason));
      out += "</td>";
    }
    out += "</tr>\n";
  }
  return out + "</table>\n";
}

// The skips and unresolved cases as lists, each failure with its message
// and console.
std::string html_details(const Matrix& m) {
  std::string skips, undecided, failures;
  for (const auto& k : m.kernels) {
    for (const auto& t : k.tests) {
      if (t.state == State::skip || t.state == State::unresolved)
        (t.state == State::skip ? skips : undecided) +=
            fmt::format("<li><b>{}</b> <code>{}</code>: {}</li>\n", html_escape(k.kernel), html_escape(t.full_name()),
                        t.summary().empty() ? "(no reason given)" : html_escape(t.summary()));
      if (t.state == State::fail) {
        failures += fmt::format("<h3>{} · <code>{}</code></h3>\n", html_escape(k.kernel), html_escape(t.full_name()));
        if (!t.location.empty()) failures += fmt::format("<p>at <code>{}</code></p>\n", html_escape(t.location));
        failures += fmt::format("<pre>{}</pre>\n", html_escape(t.message.empty() ? "(no message)" : t.message));
        if (!t.console.empty())
          failures += fmt::format("<p>console / log excerpt:</p>\n<pre>{}</pre>\n", html_escape(t.console));
      }
    }
  }
  std::string out;
  if (!skips.empty()) out += "<h2>Skips</h2>\n<ul>\n" + skips + "</ul>\n";
  if (!undecided.empty()) out += "<h2>Unresolved (ran, could not decide)</h2>\n<ul>\n" + undecided + "</ul>\n";
  if (!failures.empty()) out += "<h2>Failures</h2>\n" + failures;
  return out;
}

}  // namespace

std::string write_html(const Matrix& m) {
  Grid g = grid_of(m);
  Counts all = all_totals(m);
  std::string out(kHtmlHead);
  out += fmt::format("<p>{} kernel(s), {} test(s): {}", m.kernels.size(), g.tests.size(), all.text());
  if (!m.filter.empty()) out += fmt::format("; filter <code>{}</code>", html_escape(m.filter));
  out += ".</p>\n";
  out += html_kernels(m, any_unresolved(m));
  out += html_suites(m, g);
  out += html_tests(m, g);
  out += html_details(m);
  out += "</body>\n</html>\n";
  return out;
}

std::string write_ktap(const KernelRun& run) {
  std::vector<std::string> suites;
  for (const auto& t : run.tests)
    if (std::find(suites.begin(), suites.end(), t.suite) == suites.end()) suites.push_back(t.suite);
  // KTAP lines are single lines; '#' would start a directive inside a name.
  auto one_line = [](std::string s) {
    std::replace(s.begin(), s.end(), '\n', ' ');
    std::replace(s.begin(), s.end(), '#', '_');
    return s;
  };
  std::string out = "KTAP version 1\n";
  out += fmt::format("# kernel: {}\n# release: {}\n", run.kernel, release_of(run));
  out += fmt::format("1..{}\n", suites.size());
  // Unresolved cases as ftracetest's own KTAP has them (ktaptest in
  // tools/testing/selftests/ftrace/ftracetest): "not ok ... # UNRESOLVED",
  // counted in its totals' "error:", here only when there are some.
  auto counts_line = [](const Counts& c, size_t total) {
    return fmt::format("pass:{} fail:{} skip:{}{} total:{}", c.pass, c.fail, c.skip,
                       c.unresolved ? fmt::format(" error:{}", c.unresolved) : "", total);
  };
  int n = 0;
  Counts all;
  for (const auto& suite : suites) {
    out += fmt::format("    KTAP version 1\n    # Subtest: {}\n", one_line(suite));
    std::vector<const TestResult*> list;
    for (const auto& t : run.tests)
      if (t.suite == suite) list.push_back(&t);
    out += fmt::format("    1..{}\n", list.size());
    Counts totals;
    int i = 0;
    for (const auto* t : list) {
      ++i;
      totals.add(t->state);
      // Diagnostics before the result line, as KUnit prints them.
      if (t->state == State::fail) {
        std::string text = t->location.empty() ? t->message : t->location + "\n" + t->message;
        if (!t->console.empty()) text += "\nconsole:\n" + t->console;
        size_t pos = 0;
        while (pos <= text.size()) {
          size_t nl = text.find('\n', pos);
          std::string line = text.substr(pos, nl == std::string::npos ? std::string::npos : nl - pos);
          out += fmt::format("    # {}\n", line);
          if (nl == std::string::npos) break;
          pos = nl + 1;
        }
      }
      std::string name = one_line(t->name);
      if (t->state == State::pass) out += fmt::format("    ok {} {}\n", i, name);
      else if (t->state == State::skip) out += fmt::format("    ok {} {} # SKIP {}\n", i, name, one_line(t->summary()));
      else if (t->state == State::unresolved)
        out += fmt::format("    not ok {} {} # UNRESOLVED{}\n", i, name,
                           t->summary().empty() ? "" : ": " + one_line(t->summary()));
      else out += fmt::format("    not ok {} {}\n", i, name);
    }
    ++n;
    out += fmt::format("    # {}: {}\n", one_line(suite), counts_line(totals, list.size()));
    all.add(totals);
    if (totals.fail || totals.unresolved) out += fmt::format("not ok {} {}\n", n, one_line(suite));
    else if (totals.pass == 0 && totals.skip > 0) out += fmt::format("ok {} {} # SKIP all cases skipped\n", n, one_line(suite));
    else out += fmt::format("ok {} {}\n", n, one_line(suite));
  }
  // As KUnit ends a run (lib/kunit/test.c kunit_print_suite_stats).
  out += fmt::format("# Totals: {}\n", counts_line(all, run.tests.size()));
  // Console excerpts are whatever the guest printed: KTAP is UTF-8 text.
  return base::valid_utf8(out);
}

}  // namespace tracebed::matrix
