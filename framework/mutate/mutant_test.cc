#include "framework/mutate/mutant.h"

#include <algorithm>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "framework/mutate/sample.h"

namespace tracebed::mutate {
namespace {

using ::testing::ElementsAre;
using ::testing::IsEmpty;

// What each operator makes of one line in a function body: the mutated
// lines, in order. Written out by hand, from the operator's definition.
std::vector<std::string> mutated(const std::string& body_line) {
  std::string text = "int f(int a, int b)\n{\n" + body_line + "\n}\n";
  std::vector<std::string> out;
  for (const auto& m : mutants_of("f.c", CSource::parse(text))) {
    EXPECT_EQ(m.line, 3u);
    EXPECT_EQ(m.function, "f");
    out.push_back(m.mutated_line);
  }
  return out;
}

TEST(Mutants, RelationalBoundariesBothWays) {
  EXPECT_THAT(mutated("\tx = a < b;"), ElementsAre("\tx = a <= b;"));
  EXPECT_THAT(mutated("\tx = a <= b;"), ElementsAre("\tx = a < b;"));
  EXPECT_THAT(mutated("\tx = a > b;"), ElementsAre("\tx = a >= b;"));
  EXPECT_THAT(mutated("\tx = a >= b;"), ElementsAre("\tx = a > b;"));
}

TEST(Mutants, ShiftsAndArrowsAreNotComparisons) {
  EXPECT_THAT(mutated("\tx = a << b;"), IsEmpty());
  EXPECT_THAT(mutated("\tx = a >>= b;"), IsEmpty());
  EXPECT_THAT(mutated("\tx = p->a;"), IsEmpty());
}

TEST(Mutants, EqualityAndLogical) {
  EXPECT_THAT(mutated("\tx = a == b;"), ElementsAre("\tx = a != b;"));
  EXPECT_THAT(mutated("\tx = a != b;"), ElementsAre("\tx = a == b;"));
  EXPECT_THAT(mutated("\tx = a && b;"), ElementsAre("\tx = a || b;"));
  EXPECT_THAT(mutated("\tx = a || b;"), ElementsAre("\tx = a && b;"));
}

TEST(Mutants, NegatedConditionOfIfAndWhile) {
  EXPECT_THAT(mutated("\tif (ready(a)) go();"),
              ElementsAre("\tif (!(ready(a))) go();", "\tif (ready(a)) ;"));
  EXPECT_THAT(mutated("\twhile (a)"), ElementsAre("\twhile (!(a))"));
}

TEST(Mutants, OffByOneRemovedOnlyFromBinaryPlusOrMinusOne) {
  EXPECT_THAT(mutated("\tx = a + 1;"), ElementsAre("\tx = a;", "\tx = a + 2;"));
  EXPECT_THAT(mutated("\tx = buf[a - 1U];"), ElementsAre("\tx = buf[a];", "\tx = buf[a - 2U];"));
  EXPECT_THAT(mutated("\tx = -1;"), ElementsAre("\tx = -2;"));  // unary: only the constant
}

TEST(Mutants, ConstantsPlusOneKeepTheirBaseAndSuffix) {
  EXPECT_THAT(mutated("\tx = 0x1f;"), ElementsAre("\tx = 0x20;"));
  EXPECT_THAT(mutated("\tx = 16UL;"), ElementsAre("\tx = 17UL;"));
  EXPECT_THAT(mutated("\tx = 017;"), ElementsAre("\tx = 020;"));
  EXPECT_THAT(mutated("\tx = 1.5;"), IsEmpty());  // not an integer
}

TEST(Mutants, ACallStatementIsRemovedNotACallInAnExpression) {
  EXPECT_THAT(mutated("\tlock(&a, b);"), ElementsAre("\t;"));
  EXPECT_THAT(mutated("\tx = lock(&a);"), IsEmpty());
  EXPECT_THAT(mutated("\treturn lock(a);"), IsEmpty());
  EXPECT_THAT(mutated("\t(void)lock(a);"), IsEmpty());  // a cast: removing the call would not build
}

TEST(Mutants, ReturnedValues) {
  EXPECT_THAT(mutated("\treturn 0;"), ElementsAre("\treturn 1;"));  // 0 + 1 is the same line: once
  EXPECT_THAT(mutated("\treturn 1;"), ElementsAre("\treturn 0;", "\treturn 2;"));
  EXPECT_THAT(mutated("\treturn -EINVAL;"), ElementsAre("\treturn 0;"));
  EXPECT_THAT(mutated("\treturn true;"), ElementsAre("\treturn false;"));
}

TEST(Mutants, NothingOutsideFunctionBodiesCommentsStringsOrMacros) {
  const std::string text =
      "static int table[] = { 1, 2 };\n"
      "#define MAX(a, b) ((a) > (b) ? \\\n  (a) : (b))\n"
      "struct s { int x : 3; };\n"
      "int f(void)\n{\n"
      "\t/* a < b */ // c == d\n"
      "\tputs(\"a < b == c\");\n"
      "\tx = 'a' == y;\n"
      "}\n";
  auto mutants = mutants_of("f.c", CSource::parse(text));
  std::vector<std::string> lines;
  for (const auto& m : mutants) lines.push_back(m.mutated_line);
  EXPECT_THAT(lines, ElementsAre("\t;", "\tx = 'a' != y;"));
}

TEST(Mutants, FunctionNamesSurviveAttributesAndMultiLineHeads) {
  const std::string text =
      "static void __init\nsetup(struct a *p,\n      int n) __acquires(p->lock)\n{\n\tx = n < 3;\n}\n";
  auto mutants = mutants_of("f.c", CSource::parse(text));
  ASSERT_FALSE(mutants.empty());
  for (const auto& m : mutants) EXPECT_EQ(m.function, "setup");
}

TEST(Mutants, ApplyDiffAndIdAreOfTheOneChange) {
  const std::string text = "int f(int a)\n{\n\treturn a > 3;\n}\n";
  auto mutants = mutants_of("kernel/trace/f.c", CSource::parse(text));
  ASSERT_EQ(mutants.size(), 2u);
  const Mutant& m = mutants[0];
  EXPECT_EQ(m.apply(text), "int f(int a)\n{\n\treturn a >= 3;\n}\n");
  EXPECT_EQ(m.diff(),
            "--- a/kernel/trace/f.c\n+++ b/kernel/trace/f.c\n@@ -3,1 +3,1 @@ f\n-\treturn a > 3;\n+\treturn a >= 3;\n");
  EXPECT_THAT(m.id(), ::testing::StartsWith("kernel/trace/f.c:3:relational-boundary:"));
  EXPECT_NE(m.id(), mutants[1].id());
}

TEST(Sample, SpreadsOverTheOperatorsAndIsTheSameForTheSameSeed) {
  std::string body;
  for (int i = 0; i < 50; ++i) body += "\tx = " + std::to_string(i + 10) + ";\n";  // 50 constants
  body += "\tx = a < b;\n\tx = a == b;\n";
  auto all = mutants_of("f.c", CSource::parse("int f(void)\n{\n" + body + "}\n"));
  ASSERT_EQ(all.size(), 52u);
  auto s = sample_mutants(all, 6, 7);
  ASSERT_EQ(s.size(), 6u);
  auto count = [&](Operator op) { return std::count_if(s.begin(), s.end(), [&](const Mutant& m) { return m.op == op; }); };
  EXPECT_EQ(count(Operator::relational_boundary), 1);
  EXPECT_EQ(count(Operator::equality), 1);
  EXPECT_EQ(count(Operator::constant_plus_one), 4);
  auto again = sample_mutants(all, 6, 7);
  auto other = sample_mutants(all, 6, 8);
  std::vector<std::string> a, b, c;
  for (const auto& m : s) a.push_back(m.id());
  for (const auto& m : again) b.push_back(m.id());
  for (const auto& m : other) c.push_back(m.id());
  EXPECT_EQ(a, b);
  EXPECT_NE(a, c);
}

}  // namespace
}  // namespace tracebed::mutate
