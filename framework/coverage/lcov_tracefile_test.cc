#include "framework/coverage/lcov_tracefile.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "framework/base/files_for_tests.h"

namespace tracebed::coverage {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

Tracefile lcov_fixture(const std::string& name) {
  auto t = parse_tracefile(base::source_file("fixtures/lcov/" + name), name);
  EXPECT_TRUE(t) << t.error().message;
  return t ? *t : Tracefile{};
}

// The totals lcov --summary printed for the same files (fixtures/lcov/README.md).
TEST(LcovTracefile, SummaryAgreesWithLcovsOwn) {
  auto rows = summarize(lcov_fixture("small-no-args.info"));
  ASSERT_EQ(rows.size(), 2u);
  EXPECT_EQ(rows[0].file, "/src/small.c");
  const FileSummary& total = rows[1];
  EXPECT_EQ(total.file, "total");
  EXPECT_EQ(total.lines_hit, 11u);
  EXPECT_EQ(total.lines, 12u);
  EXPECT_EQ(total.functions_hit, 3u);
  EXPECT_EQ(total.functions, 4u);
  EXPECT_EQ(total.branches_hit, 7u);
  EXPECT_EQ(total.branches, 8u);
  auto six = summarize(lcov_fixture("small-six-args.info"));
  EXPECT_EQ(six.back().lines_hit, 12u);
  EXPECT_EQ(six.back().functions_hit, 4u);
}

// The counts are the program's: classify() was called once per loop pass.
TEST(LcovTracefile, CountsAreThoseTheProgramRan) {
  Tracefile t = lcov_fixture("small-no-args.info");
  const SourceRecord& r = t.files.at("/src/small.c");
  EXPECT_EQ(r.functions.at("classify"), 6u);  // i = -2 .. argc + 2, argc 1
  EXPECT_EQ(r.functions.at("never"), 0u);
  EXPECT_EQ(r.function_lines.at("classify"), 5u);
  EXPECT_EQ(r.lines.at(12), 7u);  // the loop's test: six passes and the exit
  EXPECT_EQ(r.lines.at(4), 0u);
}

TEST(LcovTracefile, CompareNamesWhatOnlyOneRunReaches) {
  Comparison c = compare(lcov_fixture("small-no-args.info"), lcov_fixture("small-six-args.info"), "/src/");
  EXPECT_TRUE(c.only_a.functions.empty());
  EXPECT_TRUE(c.only_a.lines.empty());
  EXPECT_THAT(c.only_b.functions, ElementsAre("small.c: never"));
  EXPECT_THAT(c.only_b.lines, ElementsAre("small.c:4"));
}

TEST(LcovTracefile, TableStripsThePrefixAndEndsWithTheTotal) {
  std::string md = summary_table(summarize(lcov_fixture("small-no-args.info")), "/src/");
  EXPECT_THAT(md, HasSubstr("| small.c | 11/12 | 91.7 % | 3/4 | 75.0 % | 7/8 | 87.5 % |"));
  EXPECT_THAT(md, HasSubstr("| **total** | 11/12 |"));
}

// The same file in two records (two test names) adds up, as lcov -a does.
TEST(LcovTracefile, RecordsOfOneFileAddUp) {
  auto t = parse_tracefile("SF:/a.c\nFN:1,f\nFNDA:0,f\nDA:1,0\nDA:2,3\nend_of_record\n"
                           "SF:/a.c\nFN:1,f\nFNDA:2,f\nDA:1,2\nend_of_record\n",
                           "two.info");
  ASSERT_TRUE(t) << t.error().message;
  const SourceRecord& r = t->files.at("/a.c");
  EXPECT_EQ(r.functions.at("f"), 2u);
  EXPECT_EQ(r.lines.at(1), 2u);
  EXPECT_EQ(r.lines.at(2), 3u);
}

TEST(LcovTracefile, BadRecordsNameTheLine) {
  struct Case {
    const char* text;
    const char* error;
  } cases[] = {
      {"DA:1,1\n", "x.info:1: a record outside SF"},
      {"SF:/a.c\nDA:one,1\nend_of_record\n", "x.info:2: DA is not LINE,COUNT: DA:one,1"},
      {"SF:/a.c\nBRDA:1,0,0\nend_of_record\n", "x.info:2: BRDA is not"},
      {"SF:/a.c\nXY:1\nend_of_record\n", "x.info:2: unknown record XY"},
      {"SF:/a.c\nDA:1,1\n", "the last SF has no end_of_record"},
      {"end_of_record\n", "x.info:1: end_of_record without SF"},
  };
  for (const auto& c : cases) {
    auto t = parse_tracefile(c.text, "x.info");
    ASSERT_FALSE(t) << c.text;
    EXPECT_THAT(t.error().message, HasSubstr(c.error)) << c.text;
  }
}

}  // namespace
}  // namespace tracebed::coverage
