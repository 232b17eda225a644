#include "framework/mutate/campaign.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "framework/mutate/mutation_report.h"

namespace tracebed::mutate {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

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

// --gcov: a mutant's line counted in the tracefiles of the suites that test
// it, and the survivors split by whether their line ran.
TEST(CampaignReach, TheLineIsCountedOnlyInItsSuitesTracefiles) {
  auto hist = coverage::parse_tracefile("SF:/build/src/kernel/trace/f.c\nDA:3,5\nDA:4,0\nend_of_record\n", "h");
  auto trig = coverage::parse_tracefile("SF:/build/src/kernel/trace/f.c\nDA:3,2\nend_of_record\n"
                                        "SF:/build/src/kernel/trace/g.c\nDA:9,7\nend_of_record\n", "t");
  ASSERT_TRUE(hist.ok() && trig.ok());
  std::map<std::string, coverage::Tracefile> per_suite = {{"tracebed_suite_hist", *hist},
                                                          {"tracebed_suite_trigger", *trig}};
  EXPECT_EQ(line_hits(per_suite, {"hist"}, "kernel/trace/f.c", 3), std::optional<uint64_t>(5));
  EXPECT_EQ(line_hits(per_suite, {"hist", "tracebed_suite_trigger"}, "kernel/trace/f.c", 3), std::optional<uint64_t>(7));
  EXPECT_EQ(line_hits(per_suite, {}, "kernel/trace/f.c", 3), std::optional<uint64_t>(7)) << "no suite named: all";
  EXPECT_EQ(line_hits(per_suite, {"hist"}, "kernel/trace/f.c", 4), std::optional<uint64_t>(0));
  EXPECT_EQ(line_hits(per_suite, {"hist"}, "kernel/trace/g.c", 9), std::nullopt) << "counted by trigger only";
  EXPECT_EQ(line_hits(per_suite, {}, "kernel/trace/f.c", 5), std::nullopt) << "not code gcov counts";
  EXPECT_EQ(line_hits(per_suite, {}, "trace/f.c", 3), std::optional<uint64_t>(7));
  EXPECT_EQ(line_hits(per_suite, {}, "ace/f.c", 3), std::nullopt) << "a path's tail, not any suffix";
}

TEST(CampaignReach, SurvivorsSayWhetherATestRanTheirLine) {
  std::vector<MutantResult> results = {result_of("\treturn a > 3;", Verdict::survived, Verdict::not_run),
                                       result_of("\treturn a == 3;", Verdict::survived, Verdict::not_run),
                                       result_of("\treturn a < 3;", Verdict::killed, Verdict::not_run)};
  results[0].line_hits = 0;
  results[1].line_hits = 40;
  results[2].line_hits = 40;
  auto back = parse_result_line(result_line(results[1]));
  ASSERT_TRUE(back.ok()) << back.error().message;
  EXPECT_EQ(back->line_hits, std::optional<uint64_t>(40));
  EXPECT_EQ(parse_result_line(result_line(result_of("\treturn a > 3;", Verdict::killed, Verdict::not_run)))->line_hits,
            std::nullopt);
  std::string md = write_markdown(results, {"tracebed mutate --gcov", "t", "", false, {}});
  EXPECT_THAT(md, HasSubstr("Kernel coverage of the unmutated tree: 1 survivors on lines no test of their suites runs, "
                            "1 on lines a test runs without noticing."));
  EXPECT_THAT(md, HasSubstr("its line never ran under its suites on the unmutated kernel: no test reaches it.\n"));
  EXPECT_THAT(md, HasSubstr("its line ran 40 times under its suites"));
  EXPECT_EQ(reach_note(result_of("\treturn a > 3;", Verdict::survived, Verdict::not_run)), "");
  EXPECT_THAT(write_markdown({results[2]}, {}), Not(HasSubstr("Kernel coverage")));
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
