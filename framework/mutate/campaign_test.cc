#include "framework/mutate/campaign.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "framework/mutate/mutation_report.h"

namespace tracebed::mutate {
namespace {

using ::testing::HasSubstr;

MutantResult result_of(const std::string& line_text, Verdict tracebed, Verdict kselftest) {
  auto mutants = mutants_of("kernel/trace/f.c", CSource::parse("int f(int a)\n{\n" + line_text + "\n}\n"));
  EXPECT_FALSE(mutants.empty());
  MutantResult r;
  r.mutant = mutants.front();
  r.tracebed.verdict = tracebed;
  r.kselftest.verdict = kselftest;
  if (tracebed == Verdict::killed) r.tracebed.failed = {"Hist.Counts"};
  r.build_seconds = 61;
  return r;
}

TEST(CampaignResults, ALineGoesAndComesBack) {
  MutantResult r = result_of("\treturn a > 3;", Verdict::killed, Verdict::survived);
  r.tracebed.seconds = 12.5;
  r.kselftest.note = "why";
  auto back = parse_result_line(result_line(r));
  ASSERT_TRUE(back.ok()) << back.error().message;
  EXPECT_EQ(back->mutant.id(), r.mutant.id());
  EXPECT_EQ(back->mutant.apply("int f(int a)\n{\n\treturn a > 3;\n}\n"), r.mutant.apply("int f(int a)\n{\n\treturn a > 3;\n}\n"));
  EXPECT_EQ(back->tracebed.verdict, Verdict::killed);
  EXPECT_EQ(back->tracebed.failed, r.tracebed.failed);
  EXPECT_EQ(back->kselftest.verdict, Verdict::survived);
  EXPECT_EQ(back->kselftest.note, "why");
  EXPECT_DOUBLE_EQ(back->build_seconds, 61);
  EXPECT_FALSE(parse_result_line("{\"id\": 1}").ok());
  EXPECT_FALSE(parse_result_line("not json").ok());
}

TEST(CampaignReport, RatesLeaveStillbornAndEquivalentOutAndSurvivorsAreDiffs) {
  std::vector<MutantResult> results = {
      result_of("\treturn a > 3;", Verdict::killed, Verdict::killed),
      result_of("\treturn a == 3;", Verdict::crashed, Verdict::survived),
      result_of("\treturn a < 3;", Verdict::survived, Verdict::killed),
      result_of("\treturn a && 3;", Verdict::stillborn, Verdict::stillborn),
      result_of("\treturn a >= 3;", Verdict::equivalent, Verdict::equivalent),
  };
  RunDescription run{"tracebed mutate --tree t --files f", "t", "1", true, {}};
  std::string md = write_markdown(results, run);
  EXPECT_THAT(md, HasSubstr("5 mutants, 1 stillborn, 1 equivalent (the same object code, a file this "
                            "configuration does not compile, or read and explained below); of the other 3, tracebed caught 2 (67 %, 1 of them "
                            "crashed the kernel), ftracetest 2 (67 %)"));
  EXPECT_THAT(md, HasSubstr("| `kernel/trace/f.c` | 5 | 1 | 1 | 2 (67 %) | 2 (67 %) | 1 | 0 |"));
  EXPECT_THAT(md, HasSubstr("### kernel/trace/f.c:3 (relational-boundary, f)"));
  EXPECT_THAT(md, HasSubstr("-\treturn a < 3;\n+\treturn a <= 3;"));
  EXPECT_THAT(md, HasSubstr("ftracetest catches it"));
  std::string junit = write_junit(results);
  EXPECT_THAT(junit, HasSubstr("tests=\"5\" failures=\"1\" skipped=\"2\""));
  EXPECT_THAT(write_json(results, {}), HasSubstr("\"format\": \"tracebed-mutate 1\""));
}

TEST(CampaignReport, ASurvivorReadAsEquivalentLeavesTheRateWithItsReason) {
  std::vector<MutantResult> results = {result_of("\treturn a > 3;", Verdict::killed, Verdict::killed),
                                       result_of("\treturn a < 3;", Verdict::survived, Verdict::survived)};
  RunDescription run{"tracebed mutate", "t", "1", false, {}};
  auto equivalent = parse_equivalent("# read by hand\n" + results[1].mutant.id() + "  a is never 3 here\n", "eq.txt");
  ASSERT_TRUE(equivalent.ok()) << equivalent.error().message;
  run.equivalent = *equivalent;
  std::string md = write_markdown(results, run);
  EXPECT_THAT(md, HasSubstr("of the other 1, tracebed caught 1 (100 %"));
  EXPECT_THAT(md, HasSubstr("## Survivors\n\nNone."));
  EXPECT_THAT(md, HasSubstr("a is never 3 here\n\n```diff\n"));
  EXPECT_THAT(md, HasSubstr("| equivalent: a is never 3 here |"));
  auto bad = parse_equivalent("\n" + results[1].mutant.id() + "\n", "eq.txt");
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.error().message, "eq.txt:2: a mutant id with no reason");
}

// The unmutated tree's failures leave a mutant's filter as negative
// patterns, after the user's own filter and its own negatives.
TEST(CampaignFilter, TheUnmutatedTreesFailuresAreLeftOut) {
  EXPECT_EQ(filter_without("", {}), "");
  EXPECT_EQ(filter_without("Hist.*", {}), "Hist.*");
  EXPECT_EQ(filter_without("", {"A.One", "B.Two"}), "*-A.One:B.Two");
  EXPECT_EQ(filter_without("Hist.*:Synthetic.*", {"Hist.X"}), "Hist.*:Synthetic.*-Hist.X");
  EXPECT_EQ(filter_without("*-Slow.*", {"Hist.X"}), "*-Slow.*:Hist.X");
}

}  // namespace
}  // namespace tracebed::mutate
