#include "framework/base/text.h"

#include <cctype>
#include <cstdint>
#include <cstdio>
#include <string>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace tracebed::base {
namespace {

using ::testing::ElementsAre;
using ::testing::IsEmpty;
using ::testing::Optional;

TEST(Trim, RemovesEveryCLocaleBlankAtBothEnds) {
  EXPECT_EQ(trim(" \t\v\f\r\n x y \r\n"), "x y");
  EXPECT_EQ(trim_left("\n\tx "), "x ");
  EXPECT_EQ(trim_right(" x\r\n"), " x");
  EXPECT_EQ(trim(" \t\n"), "");
  EXPECT_EQ(trim(""), "");
}

TEST(Trim, MatchesIsspaceOnEveryByte) {
  for (int c = 0; c < 256; ++c) {
    SCOPED_TRACE(c);
    EXPECT_EQ(is_blank(static_cast<char>(c)), std::isspace(c) != 0);
  }
}

TEST(Split, KeepsEmptyFieldsAndTrimsOnRequest) {
  EXPECT_THAT(split("a,,b", ','), ElementsAre("a", "", "b"));
  EXPECT_THAT(split("", ','), ElementsAre(""));
  EXPECT_THAT(split("a,", ','), ElementsAre("a", ""));
  EXPECT_THAT(split(" libc6 (>= 2.38) | libc6t64 ", '|', {.trim = true}), ElementsAre("libc6 (>= 2.38)", "libc6t64"));
  EXPECT_THAT(split(",a,,b,", ',', {.skip_empty = true}), ElementsAre("a", "b"));
  EXPECT_THAT(split(" ; u32 a;  ;", ';', {.trim = true, .skip_empty = true}), ElementsAre("u32 a"));
  EXPECT_THAT(split(" ; ", ';', {.skip_empty = true}), ElementsAre(" ", " "));
  EXPECT_THAT(split("", ',', {.skip_empty = true}), IsEmpty());
}

TEST(SplitLines, AFinalNewlineStartsNoLine) {
  EXPECT_THAT(split_lines("a\nb\n"), ElementsAre("a", "b"));
  EXPECT_THAT(split_lines("a\n\nb"), ElementsAre("a", "", "b"));
  EXPECT_THAT(split_lines(""), IsEmpty());
  EXPECT_THAT(split_lines("\n"), ElementsAre(""));
}

TEST(ContentLines, TrimmedAndNumberedWithoutBlanksAndComments) {
  auto lines = content_lines("# a list\n\n  first | x \n\t\n#second\n third\n");
  ASSERT_EQ(lines.size(), 2u);
  EXPECT_EQ(lines[0].number, 3u);
  EXPECT_EQ(lines[0].text, "first | x");
  EXPECT_EQ(lines[1].number, 6u);
  EXPECT_EQ(lines[1].text, "third");
  EXPECT_THAT(content_lines(" # indented comment\n"), IsEmpty());
}

TEST(SplitWords, AnyRunOfBlanksSeparates) {
  EXPECT_THAT(split_words("  p:kprobes/p1 \t do_sys_open\n arg1=%di "),
              ElementsAre("p:kprobes/p1", "do_sys_open", "arg1=%di"));
  EXPECT_THAT(split_words(" \n "), IsEmpty());
}

TEST(ParseNumber, WholeInputOnly) {
  EXPECT_THAT(parse_number<uint64_t>("18446744073709551615"), Optional(UINT64_MAX));
  EXPECT_EQ(parse_number<uint64_t>("18446744073709551616"), std::nullopt);
  EXPECT_EQ(parse_number<uint32_t>("4294967296"), std::nullopt);
  EXPECT_EQ(parse_number<unsigned>(""), std::nullopt);
  EXPECT_EQ(parse_number<unsigned>(" 1"), std::nullopt);
  EXPECT_EQ(parse_number<unsigned>("1\n"), std::nullopt);
  EXPECT_EQ(parse_number<unsigned>("-1"), std::nullopt);
  EXPECT_THAT(parse_number<int>("-17"), Optional(-17));
  EXPECT_THAT(parse_number<int64_t>("-9223372036854775808"), Optional(INT64_MIN));
}

TEST(ParseNumber, HexTakesAnOptionalPrefix) {
  EXPECT_THAT(parse_number<uint64_t>("ffffffff81000000", 16), Optional(0xffffffff81000000));
  EXPECT_THAT(parse_number<uint64_t>("0xFF", 16), Optional(255u));
  EXPECT_EQ(parse_number<uint64_t>("0x", 16), std::nullopt);
  EXPECT_EQ(parse_number<uint64_t>("0xFF"), std::nullopt);
}

// kstrtouint(s, 0), as user_events reads its enable bit and as dynamic
// events read offsets (lib/kstrtox.c _parse_integer_fixup_radix).
TEST(ParseNumber, RadixZeroReadsACLiteral) {
  EXPECT_THAT(parse_number<uint32_t>("0x1f", 0), Optional(31u));
  EXPECT_THAT(parse_number<uint32_t>("017", 0), Optional(15u));
  EXPECT_THAT(parse_number<uint32_t>("17", 0), Optional(17u));
  EXPECT_THAT(parse_number<uint32_t>("0", 0), Optional(0u));
  EXPECT_EQ(parse_number<uint32_t>("08", 0), std::nullopt);
  EXPECT_EQ(parse_number<uint32_t>("0x", 0), std::nullopt);
  EXPECT_EQ(parse_number<uint32_t>("", 0), std::nullopt);
}

// Every value across the range survives a round trip, in every radix used.
TEST(ParseNumber, RoundTripsAcrossTheRange) {
  for (int shift = 0; shift < 64; ++shift) {
    for (uint64_t v : {uint64_t{1} << shift, (uint64_t{1} << shift) - 1, ~uint64_t{0} >> shift}) {
      SCOPED_TRACE(v);
      EXPECT_THAT(parse_number<uint64_t>(std::to_string(v)), Optional(v));
      char hex[32];
      std::snprintf(hex, sizeof hex, "%#llx", static_cast<unsigned long long>(v));
      EXPECT_THAT(parse_number<uint64_t>(hex, 0), Optional(v));
      std::snprintf(hex, sizeof hex, "%#llo", static_cast<unsigned long long>(v));
      EXPECT_THAT(parse_number<uint64_t>(hex, 0), Optional(v));
    }
  }
}

}  // namespace
}  // namespace tracebed::base
