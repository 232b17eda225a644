#include "framework/coverage/coverage.h"

#include <filesystem>
#include <fstream>

#include <fmt/format.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "framework/base/files.h"

namespace tracebed::coverage {
namespace {

using ::testing::ElementsAre;
using ::testing::Field;
using ::testing::HasSubstr;
using ::testing::IsEmpty;
using ::testing::UnorderedElementsAre;

constexpr std::string_view kSource = R"(
TEST_F(Kprobe, First) {
  TRACEBED_COVERS("ftracetest: kprobe/a.tc");
}

// TRACEBED_COVERS("ftracetest: kprobe/in_a_comment.tc");
TEST_P(KprobeErrors,
       Second) {
  int x = 0;
  TRACEBED_COVERS("ftracetest: kprobe/b.tc",
                  "user_events: abi_test.c/forks");
}
)";

TEST(ScanSource, AttributesEachCoverToTheTestItIsIn) {
  auto covers = scan_source(kSource, "suites/kprobe/x_test.cc");
  ASSERT_EQ(covers.size(), 3u);
  EXPECT_EQ(covers[0].case_id, "ftracetest: kprobe/a.tc");
  EXPECT_EQ(covers[0].test, "Kprobe.First");
  EXPECT_EQ(covers[0].line, 3);
  EXPECT_EQ(covers[1].case_id, "ftracetest: kprobe/b.tc");
  EXPECT_EQ(covers[1].test, "KprobeErrors.Second");
  EXPECT_EQ(covers[2].case_id, "user_events: abi_test.c/forks");
  EXPECT_EQ(covers[2].file, "suites/kprobe/x_test.cc");
}

TEST(ParseLists, LinesNameTheirSuiteOrAreErrors) {
  auto cases = parse_case_list("# from: x\nftracetest: a/b.tc\n\nuser_events: f.c/t\n", "cases");
  ASSERT_TRUE(cases.ok());
  EXPECT_THAT(*cases, ElementsAre("ftracetest: a/b.tc", "user_events: f.c/t"));
  auto bad = parse_case_list("ftracetest: a.tc\nkprobe/b.tc\n", "cases");
  ASSERT_FALSE(bad.ok());
  EXPECT_THAT(bad.error().message, HasSubstr("cases:2:"));
  auto reasons = parse_reasons("ftracetest: remotes/* | no hypervisor\n", "r");
  ASSERT_TRUE(reasons.ok());
  EXPECT_EQ((*reasons)[0].pattern, "ftracetest: remotes/*");
  EXPECT_EQ((*reasons)[0].why, "no hypervisor");
  EXPECT_FALSE(parse_reasons("ftracetest: remotes/*\n", "r").ok()) << "a reason needs its why";
  auto open = parse_open("ftracetest: a.tc\nftracetest: b.tc | partly: x\n", "o");
  ASSERT_TRUE(open.ok());
  EXPECT_EQ((*open)[1].note, "partly: x");
}

TEST(Problems, NameEveryWayTheMapCanBeWrong) {
  std::vector<std::string> cases = {"ftracetest: a/covered.tc", "ftracetest: a/nothing.tc", "ftracetest: r/x.tc",
                                    "ftracetest: a/open.tc", "ftracetest: a/open_but_covered.tc"};
  std::vector<Cover> covers = {{"ftracetest: a/covered.tc", "T.A", "t.cc", 3},
                               {"ftracetest: a/typo.tc", "T.B", "t.cc", 9},
                               {"ftracetest: a/open_but_covered.tc", "T.C", "t.cc", 12}};
  Coverage c = join(cases, covers, {{"ftracetest: r/*", "why"}, {"ftracetest: gone/*", "why"}},
                    {{"ftracetest: a/open.tc", "partly: half"}, {"ftracetest: a/open_but_covered.tc", ""}});
  auto p = problems(c);
  EXPECT_THAT(p, UnorderedElementsAre(HasSubstr("a/nothing.tc: no test covers it"),
                                      HasSubstr("a/open_but_covered.tc: covered by T.C (t.cc:12): take it off"),
                                      HasSubstr("t.cc:9: T.B covers \"ftracetest: a/typo.tc\""),
                                      HasSubstr("reason \"ftracetest: gone/*\" matches no case")));
  EXPECT_THAT(problems(c, /*strict=*/true), ::testing::Contains(HasSubstr("a/open.tc: open")));
  Counts n = count(c);
  EXPECT_EQ(n.covered, 2);
  EXPECT_EQ(n.partly, 1);
  EXPECT_EQ(n.excused, 1);
  EXPECT_EQ(n.open, 1);
}

TEST(Problems, MoreThanTenReasonsIsOne) {
  std::vector<Reason> reasons;
  std::vector<std::string> cases;
  for (int i = 0; i < 11; ++i) {
    cases.push_back(fmt::format("ftracetest: r/{}.tc", i));
    reasons.push_back({cases.back(), "why"});
  }
  EXPECT_THAT(problems(join(cases, {}, reasons, {})), ElementsAre(HasSubstr("11 reasons, more than 10")));
}

// The total row is taken under the per-file table only (a "total" in the
// prose above it is not it), and a table without one is an error that
// names the file.
TEST(KernelReach, IsTheTotalRowOfThePerFileTable) {
  const std::string header =
      "| file | tracebed lines | ftracetest lines | both lines | tracebed functions | ftracetest functions | both "
      "functions |\n|---|---:|---:|---:|---:|---:|---:|\n";
  const std::string doc = "| **total** | not this one |\n\n" + header +
                          "| a.c | 1/2 (50.0 %) | 0/2 (0.0 %) | 1/2 (50.0 %) | 1/1 (100.0 %) | 0/1 (0.0 %) | 1/1 (100.0 %) |\n"
                          "| **total** | 7/9 (77.8 %) | 5/9 (55.6 %) | 8/9 (88.9 %) | 3/4 (75.0 %) | 2/4 (50.0 %) | 4/4 "
                          "(100.0 %) |\n";
  auto r = parse_kernel_reach(doc, "k.md");
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_EQ(r->tracebed_lines, "7/9 (77.8 %)");
  EXPECT_EQ(r->ftracetest_lines, "5/9 (55.6 %)");
  EXPECT_EQ(r->both_lines, "8/9 (88.9 %)");
  EXPECT_EQ(r->tracebed_functions, "3/4 (75.0 %)");
  EXPECT_EQ(r->ftracetest_functions, "2/4 (50.0 %)");
  EXPECT_EQ(r->both_functions, "4/4 (100.0 %)");

  auto none = parse_kernel_reach(header, "k.md");
  ASSERT_FALSE(none.ok());
  EXPECT_THAT(none.error().message, HasSubstr("k.md: no \"| **total** |\" row"));
  auto short_row = parse_kernel_reach(header + "| **total** | 1/2 |\n", "k.md");
  ASSERT_FALSE(short_row.ok());
  EXPECT_THAT(short_row.error().message, HasSubstr("2 cells, not 7"));
}

TEST(CasesInTree, ListsTcFilesAndHarnessTests) {
  namespace fs = std::filesystem;
  fs::path root = fs::temp_directory_path() / fmt::format("tracebed-coverage-test-{}", getpid());
  fs::create_directories(root / "tools/testing/selftests/ftrace/test.d/kprobe");
  fs::create_directories(root / "tools/testing/selftests/user_events");
  std::ofstream(root / "tools/testing/selftests/ftrace/test.d/kprobe/b.tc") << "#!/bin/sh\n";
  std::ofstream(root / "tools/testing/selftests/ftrace/test.d/template") << "#!/bin/sh\n";
  std::ofstream(root / "tools/testing/selftests/user_events/abi_test.c")
      << "FIXTURE(user) {};\nTEST_F(user, enablement) {\n}\nTEST_F(user, forks) {\n}\n";
  auto cases = cases_in_tree(root);
  fs::remove_all(root);
  ASSERT_TRUE(cases.ok()) << cases.error().message;
  EXPECT_THAT(*cases, ElementsAre("ftracetest: kprobe/b.tc", "user_events: abi_test.c/enablement",
                                  "user_events: abi_test.c/forks"));
}

// The tree's own map: the case list from linux-source-7.2 against the
// suites' TRACEBED_COVERS lines, the reasons and the open list.
class TreeCoverage : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    auto c = load(default_paths());
    ASSERT_TRUE(c.ok()) << c.error().message;
    coverage_ = new Coverage(std::move(c).value());
  }
  static void TearDownTestSuite() { delete coverage_; }
  static Coverage* coverage_;
};
Coverage* TreeCoverage::coverage_ = nullptr;

// ftracetest's 142 .tc files and the 18 user_events selftests of 7.2.
TEST_F(TreeCoverage, CaseListIsLinux72s) {
  size_t ftrace = 0, user = 0;
  for (const auto& c : coverage_->cases) (c.id.starts_with("ftracetest: ") ? ftrace : user)++;
  EXPECT_EQ(ftrace, 142u);
  EXPECT_EQ(user, 18u);
}

// The acceptance check of the map: every case is covered by a test, or has
// a reason no test can cover it here, or is on the open list; an open case
// that gained a cover must leave the list; every cover names a real case.
// `tracebed coverage check --strict` also fails on open cases.
TEST_F(TreeCoverage, EveryCaseIsCoveredOrHasAReason) {
  auto p = problems(*coverage_);
  EXPECT_THAT(p, IsEmpty()) << fmt::format("{}", fmt::join(p, "\n"));
}

// docs/coverage.md is what `tracebed coverage report` writes today.
TEST_F(TreeCoverage, DocIsCurrent) {
  auto source = case_list_source(default_paths());
  ASSERT_TRUE(source.ok());
  auto doc = base::read_file(default_paths().doc());
  ASSERT_TRUE(doc.ok()) << doc.error().message;
  EXPECT_TRUE(*doc == render_markdown(*coverage_, *source))
      << "docs/coverage.md is stale: run `build/tracebed coverage report`";
}

}  // namespace
}  // namespace tracebed::coverage
