#include "framework/decode/report_text.h"

#include <gtest/gtest.h>

#include <cinttypes>
#include <cstdio>
#include <random>
#include <string>
#include <vector>

namespace tracebed::decode {
namespace {

std::string hex_by_hand(uint64_t v, size_t width) {
  std::string s;
  {
    TextOut out(s);
    append_hex(out, v, width);
  }
  return s;
}

std::string hex_by_printf(uint64_t v, size_t width) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%0*" PRIx64, static_cast<int>(width), v);
  return buf;
}

// Values of every length (a single bit and all bits below it set), random
// ones and widths 0 to 20: the digits the SSE2 path picks must be printf's.
TEST(TextTest, HexMatchesPrintf) {
  std::mt19937_64 rng(5);
  std::vector<uint64_t> values = {0, ~uint64_t{0}};
  for (int bit = 0; bit < 64; ++bit) {
    values.push_back(uint64_t{1} << bit);
    values.push_back((uint64_t{1} << bit) - 1);
  }
  for (int i = 0; i < 2000; ++i) values.push_back(rng() >> (rng() % 64));
  for (uint64_t v : values)
    for (size_t width : {0, 1, 2, 8, 15, 16, 17, 20}) {
      SCOPED_TRACE(hex_by_printf(v, width));
      ASSERT_EQ(hex_by_hand(v, width), hex_by_printf(v, width));
    }
}

TEST(TextTest, SixteenHexDigitsInEitherCase) {
  char lower[17] = {}, upper[17] = {};
  hex16_digits(0x0123456789abcdefull, lower);
  hex16_digits(0xfedcba9876543210ull, upper, true);
  EXPECT_STREQ(lower, "0123456789abcdef");
  EXPECT_STREQ(upper, "FEDCBA9876543210");
}

}  // namespace
}  // namespace tracebed::decode
