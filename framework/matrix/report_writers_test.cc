#include "framework/matrix/report_writers.h"

#include <regex>

#include <fmt/format.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace tracebed::matrix {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

// Two kernels; the older one lacks a feature, fails one case, and one suite
// binary died there before reporting.
Matrix sample() {
  Matrix m;
  m.filter = "Basics*";
  KernelRun a;
  a.kernel = "debian-6.12";
  a.release = "6.12.107+deb13-cloud-amd64";
  a.accelerator = "tcg";
  a.wall_seconds = 120;
  a.tests = {{"Basics", "Mounted", State::pass, "", "", "", 20, {}, {}},
             {"Basics", "Timerlat", State::pass, "", "", "", 1, {}, {}}};
  KernelRun b;
  b.kernel = "debian-5.10";
  b.expected_release = "5.10.0-32-cloud-amd64";
  b.wall_seconds = 60;
  b.tests = {{"Basics", "Mounted", State::fail, "Value of: x\n  Actual: <false> | \"quoted\"", "b.cc:7", "", 3, {}, {}},
             {"Basics", "Timerlat", State::skip, "needs timerlat: available_tracers has no timerlat", "b.cc:9", "", 0, {}, {}},
             {"tracebed_suite_hist", "(suite)", State::fail, "exited with status 137 without a report", "",
              "[   12.3] Kernel panic - not syncing: <script>alert(1)</script>", 0, {}, {}}};
  m.kernels = {a, b};
  return m;
}

TEST(Markdown, GridReleasesReasonsAndFailures) {
  std::string md = write_markdown(sample());
  EXPECT_THAT(md, HasSubstr("| test | debian-6.12 | debian-5.10 |"));
  EXPECT_THAT(md, HasSubstr("| Basics.Mounted | ✅ pass | ❌ FAIL |"));
  EXPECT_THAT(md, HasSubstr("| Basics.Timerlat | ✅ pass | ⚪ skip (needs timerlat) |"));
  EXPECT_THAT(md, HasSubstr("| tracebed_suite_hist.(suite) | — not run | ❌ FAIL |"));
  EXPECT_THAT(md, HasSubstr("| debian-6.12 | 6.12.107+deb13-cloud-amd64 | tcg | 2 | 0 | 0 | `████████████████████` 2 m 00 s |"));
  EXPECT_THAT(md, HasSubstr("| debian-5.10 | not reported (catalogue: 5.10.0-32-cloud-amd64) | — | 0 | 1 | 2 | `██████████` 1 m 00 s |"));
  EXPECT_THAT(md, HasSubstr("| Basics | 2 pass | 1 skip, 1 fail |"));
  EXPECT_THAT(md, HasSubstr("- **debian-5.10** `Basics.Timerlat`: needs timerlat: available_tracers has no timerlat"));
  EXPECT_THAT(md, HasSubstr("### debian-5.10 · tracebed_suite_hist.(suite)"));
  EXPECT_THAT(md, HasSubstr("Kernel panic - not syncing"));
}

int count(const std::string& s, const std::regex& re) {
  return static_cast<int>(std::distance(std::sregex_iterator(s.begin(), s.end(), re), std::sregex_iterator()));
}

TEST(Html, EveryCellPresentAndNothingExternal) {
  Matrix m = sample();
  std::string html = write_html(m);
  // The grid: one row per test (3) plus the header, one cell per kernel.
  size_t grid = html.find("<table id=\"grid\">");
  ASSERT_NE(grid, std::string::npos);
  std::string table = html.substr(grid, html.find("</table>", grid) - grid);
  EXPECT_EQ(count(table, std::regex("<tr>")), 4);
  EXPECT_EQ(count(table, std::regex("<td class=\"(pass|skip|fail|absent)\"")), 3 * 2);
  EXPECT_EQ(count(table, std::regex("<td class=\"fail\"")), 2);
  EXPECT_EQ(count(table, std::regex("<td class=\"absent\"")), 1);
  // Balanced structure.
  for (const char* tag : {"table", "tr", "td", "th", "pre", "ul", "li", "h2", "h3", "code"}) {
    std::regex open(fmt::format("<{}[ >]", tag)), close(fmt::format("</{}>", tag));
    EXPECT_EQ(count(html, open), count(html, close)) << tag;
  }
  // Self-contained: no external references, no scripts (console text is escaped).
  EXPECT_EQ(count(html, std::regex(R"((src|href)\s*=\s*["']?[^"'>]*http)", std::regex::icase)), 0);
  EXPECT_THAT(html, Not(HasSubstr("<script")));
  EXPECT_THAT(html, Not(HasSubstr("<link")));
  EXPECT_THAT(html, HasSubstr("&lt;script&gt;alert(1)&lt;/script&gt;"));
  EXPECT_THAT(html, HasSubstr("needs timerlat: available_tracers has no timerlat"));
  EXPECT_THAT(html, HasSubstr("not reported (catalogue: 5.10.0-32-cloud-amd64)"));
  // Timing bars scale to the slowest kernel.
  EXPECT_THAT(html, HasSubstr("style=\"width: 300px\""));
  EXPECT_THAT(html, HasSubstr("style=\"width: 150px\""));
}

TEST(Ktap, NestedSuitesSkipsAndDiagnostics) {
  EXPECT_EQ(write_ktap(sample().kernels[1]),
            "KTAP version 1\n"
            "# kernel: debian-5.10\n"
            "# release: not reported (catalogue: 5.10.0-32-cloud-amd64)\n"
            "1..2\n"
            "    KTAP version 1\n"
            "    # Subtest: Basics\n"
            "    1..2\n"
            "    # b.cc:7\n"
            "    # Value of: x\n"
            "    #   Actual: <false> | \"quoted\"\n"
            "    not ok 1 Mounted\n"
            "    ok 2 Timerlat # SKIP needs timerlat: available_tracers has no timerlat\n"
            "    # Basics: pass:0 fail:1 skip:1 total:2\n"
            "not ok 1 Basics\n"
            "    KTAP version 1\n"
            "    # Subtest: tracebed_suite_hist\n"
            "    1..1\n"
            "    # exited with status 137 without a report\n"
            "    # console:\n"
            "    # [   12.3] Kernel panic - not syncing: <script>alert(1)</script>\n"
            "    not ok 1 (suite)\n"
            "    # tracebed_suite_hist: pass:0 fail:1 skip:0 total:1\n"
            "not ok 2 tracebed_suite_hist\n"
            "# Totals: pass:0 fail:2 skip:1 total:3\n");
}

// As ftracetest's own KTAP has an UNRESOLVED case: "not ok", the reason
// after the directive, counted as an error; its suite is not ok either.
TEST(Ktap, UnresolvedIsNotOkWithItsDirective) {
  KernelRun k;
  k.kernel = "k";
  k.release = "r";
  k.tests = {{"Ftracetest", "ftrace/func-filter-pid.tc", State::unresolved,
              "ftracetest UNRESOLVED on the top level: no # poll\nlog", "", "", 0, {}, {}},
             {"Ftracetest", "kprobe/profile.tc", State::pass, "", "", "", 0, {}, {}}};
  const std::string ktap = write_ktap(k);
  EXPECT_THAT(ktap, HasSubstr("    not ok 1 ftrace/func-filter-pid.tc # UNRESOLVED: ftracetest UNRESOLVED on the top "
                              "level: no _ poll\n"
                              "    ok 2 kprobe/profile.tc\n"
                              "    # Ftracetest: pass:1 fail:0 skip:0 error:1 total:2\n"
                              "not ok 1 Ftracetest\n"
                              "# Totals: pass:1 fail:0 skip:0 error:1 total:2\n"));
}

TEST(Markdown, UnresolvedHasItsOwnCellColumnAndReasons) {
  Matrix m = sample();
  m.kernels[0].tests[1].state = State::unresolved;
  m.kernels[0].tests[1].message = "ftracetest UNRESOLVED on an instance: no poll";
  std::string md = write_markdown(m);
  EXPECT_THAT(md, HasSubstr("2 kernel(s), 3 test(s); 1 passed, 1 skipped, 1 unresolved, 2 failed"));
  EXPECT_THAT(md, HasSubstr("| kernel | release | accelerator | pass | skip | unresolved | fail | wall time |\n"
                            "|---|---|---|---:|---:|---:|---:|---|\n"));
  EXPECT_THAT(md, HasSubstr("| debian-6.12 | 6.12.107+deb13-cloud-amd64 | tcg | 1 | 0 | 1 | 0 |"));
  EXPECT_THAT(md, HasSubstr("| debian-5.10 | not reported (catalogue: 5.10.0-32-cloud-amd64) | — | 0 | 1 | 0 | 2 |"));
  EXPECT_THAT(md, HasSubstr("| Basics.Timerlat | 🔵 unresolved | ⚪ skip (needs timerlat) |"));
  EXPECT_THAT(md, HasSubstr("| Basics | 1 pass, 1 unresolved | 1 skip, 1 fail |"));
  EXPECT_THAT(md, HasSubstr("## Unresolved (ran, could not decide)\n\n"
                            "- **debian-6.12** `Basics.Timerlat`: ftracetest UNRESOLVED on an instance: no poll\n"));
  std::string html = write_html(m);
  EXPECT_THAT(html, HasSubstr("<td class=\"unresolved\""));
  EXPECT_THAT(html, HasSubstr("<th>unresolved</th>"));
  // Without an unresolved case, no such column.
  EXPECT_THAT(write_markdown(sample()), Not(HasSubstr("unresolved")));
  EXPECT_THAT(write_html(sample()), Not(HasSubstr("<th>unresolved</th>")));
}

TEST(Ktap, AllSkippedSuiteIsSkipped) {
  KernelRun k;
  k.kernel = "k";
  k.release = "r";
  k.tests = {{"Fprobe", "A", State::skip, "needs fprobe", "", "", 0, {}, {}}};
  EXPECT_THAT(write_ktap(k), HasSubstr("ok 1 Fprobe # SKIP all cases skipped\n"));
}

}  // namespace
}  // namespace tracebed::matrix
