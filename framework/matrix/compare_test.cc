#include "framework/matrix/compare.h"

#include <gtest/gtest.h>

namespace tracebed::matrix {
namespace {

Matrix run(std::vector<TestResult> tests) {
  Matrix m;
  KernelRun k;
  k.kernel = "debian-6.12";
  k.tests = std::move(tests);
  m.kernels.push_back(std::move(k));
  return m;
}

TEST(Compare, NewFailuresThenFixedThenOthers) {
  Matrix before = run({{"S", "Breaks", State::pass, "", "", "", 0, {}, {}},
                       {"S", "Heals", State::fail, "old", "", "", 0, {}, {}},
                       {"S", "Skips", State::pass, "", "", "", 0, {}, {}},
                       {"S", "Same", State::pass, "", "", "", 0, {}, {}},
                       {"S", "Gone", State::pass, "", "", "", 0, {}, {}}});
  Matrix after = run({{"S", "Breaks", State::fail, "Expected: 1\n  Actual: 2", "", "", 0, {}, {}},
                      {"S", "Heals", State::pass, "", "", "", 0, {}, {}},
                      {"S", "Skips", State::skip, "needs x", "", "", 0, {}, {}},
                      {"S", "Same", State::pass, "", "", "", 0, {}, {}},
                      {"S", "New", State::fail, "boom", "", "", 0, {}, {}}});
  auto changes = compare(before, after);
  ASSERT_EQ(changes.size(), 5u);
  EXPECT_EQ(changes[0].kind, Change::new_failure);
  EXPECT_EQ(changes[0].test, "S.Breaks");
  EXPECT_EQ(changes[1].kind, Change::new_failure);
  EXPECT_EQ(changes[1].test, "S.New");
  EXPECT_FALSE(changes[1].before.has_value());
  EXPECT_EQ(changes[2].kind, Change::fixed);
  EXPECT_EQ(changes[3].kind, Change::other);
  EXPECT_EQ(changes[3].test, "S.Gone");
  EXPECT_EQ(changes[4].test, "S.Skips");
  EXPECT_EQ(format_changes(changes),
            "new failures (2):\n"
            "  debian-6.12    S.Breaks                                           pass -> fail  Expected: 1\n"
            "  debian-6.12    S.New                                              absent -> fail  boom\n"
            "\nfixed (1):\n"
            "  debian-6.12    S.Heals                                            fail -> pass\n"
            "\nother changes (2):\n"
            "  debian-6.12    S.Gone                                             pass -> absent\n"
            "  debian-6.12    S.Skips                                            pass -> skip  needs x\n");
}

// Neither a failure nor a fix: a case that stops or starts being decided
// is another change, with its reason.
TEST(Compare, UnresolvedIsAnOtherChange) {
  Matrix before = run({{"Ftracetest", "a.tc", State::pass, "", "", "", 0, {}, {}},
                       {"Ftracetest", "b.tc", State::unresolved, "ftracetest UNRESOLVED", "", "", 0, {}, {}}});
  Matrix after = run({{"Ftracetest", "a.tc", State::unresolved, "ftracetest UNRESOLVED on an instance: x", "", "", 0,
                       {}, {}},
                      {"Ftracetest", "b.tc", State::fail, "FAIL", "", "", 0, {}, {}}});
  auto changes = compare(before, after);
  ASSERT_EQ(changes.size(), 2u);
  EXPECT_EQ(changes[0].kind, Change::new_failure);
  EXPECT_EQ(changes[1].kind, Change::other);
  EXPECT_NE(format_changes(changes).find("pass -> unresolved  ftracetest UNRESOLVED on an instance: x\n"),
            std::string::npos);
}

TEST(Compare, NothingChanged) {
  Matrix m = run({{"S", "A", State::pass, "", "", "", 0, {}, {}}});
  EXPECT_TRUE(compare(m, m).empty());
  EXPECT_EQ(format_changes({}), "no changes\n");
}

}  // namespace
}  // namespace tracebed::matrix
