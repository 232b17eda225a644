#include "framework/mutate/changed_lines.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "framework/mutate/owners.h"

namespace tracebed::mutate {
namespace {

using ::testing::ElementsAre;

// As `git diff -U0` prints a change of two files (one line deleted only).
TEST(ChangedLines, TheNewSidesLinesOfEveryHunk) {
  const std::string diff =
      "diff --git a/kernel/trace/trace_seq.c b/kernel/trace/trace_seq.c\n"
      "index 1..2 100644\n"
      "--- a/kernel/trace/trace_seq.c\n"
      "+++ b/kernel/trace/trace_seq.c\n"
      "@@ -232,0 +233 @@ void trace_seq_puts(struct trace_seq *s, const char *str)\n"
      "+\tunsigned int left;\n"
      "@@ -239 +240,2 @@ void trace_seq_puts(struct trace_seq *s, const char *str)\n"
      "-\tif (len > TRACE_SEQ_BUF_LEFT(s)) {\n"
      "+\tleft = TRACE_SEQ_BUF_LEFT(s);\n"
      "+\tif (len > left) {\n"
      "diff --git a/kernel/trace/trace.c b/kernel/trace/trace.c\n"
      "--- a/kernel/trace/trace.c\n"
      "+++ b/kernel/trace/trace.c\n"
      "@@ -10,2 +9,0 @@\n"
      "-gone\n-gone\n";
  auto lines = parse_unified_diff(diff);
  EXPECT_THAT(lines["kernel/trace/trace_seq.c"], ElementsAre(233, 240, 241));
  EXPECT_FALSE(lines.contains("kernel/trace/trace.c") && !lines["kernel/trace/trace.c"].empty());
}

TEST(Owners, AFileOfTheTableAndOneThatIsNot) {
  Owners hist = owners_of("kernel/trace/trace_events_hist.c");
  EXPECT_THAT(hist.suites, ElementsAre("hist", "synthetic", "sqlhist", "trigger"));
  EXPECT_EQ(kselftest_filter(hist), "Ftracetest.trigger/*");
  EXPECT_EQ(kselftest_filter(owners_of("kernel/trace/trace_events_user.c")), "UserEventsSelftest.*");
  Owners other = owners_of("kernel/trace/trace_osnoise.c");
  EXPECT_TRUE(other.suites.empty());  // every suite
  EXPECT_EQ(kselftest_filter(other), "");
}

}  // namespace
}  // namespace tracebed::mutate
