#include "framework/base/utf8.h"

#include <string>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace tracebed::base {
namespace {

// Well-formed and ill-formed sequences from RFC 3629 and Markus Kuhn's
// UTF-8 decoder stress test.
TEST(Utf8CharLength, AcceptsWellFormedAndRefusesTheRest) {
  struct Case {
    std::string bytes;
    size_t length;
  };
  const Case cases[] = {
      {"a", 1},
      {"\xc3\xa9", 2},              // U+00E9
      {"\xe2\x82\xac", 3},          // U+20AC
      {"\xf0\x9f\x98\x80", 4},      // U+1F600
      {"\xf4\x8f\xbf\xbf", 4},      // U+10FFFF, the last
      {"\x80", 0},                  // a lone continuation byte
      {"\xc3", 0},                  // truncated
      {"\xc3(", 0},                 // not followed by a continuation byte
      {"\xc0\xaf", 0},              // overlong '/'
      {"\xe0\x80\xaf", 0},          // overlong '/'
      {"\xf0\x80\x80\xaf", 0},      // overlong '/'
      {"\xed\xa0\x80", 0},          // U+D800, a surrogate
      {"\xf4\x90\x80\x80", 0},      // U+110000, beyond Unicode
      {"\xf8\x88\x80\x80\x80", 0},  // a 5-byte form
      {"\xff", 0},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(::testing::PrintToString(c.bytes));
    EXPECT_EQ(utf8_char_length(c.bytes), c.length);
  }
}

TEST(ValidUtf8, ReplacesEachBadByteAndKeepsTheRest) {
  EXPECT_EQ(valid_utf8("ok \xc3\xa9"), "ok \xc3\xa9");
  EXPECT_EQ(valid_utf8("a\xff" "b\xc3"), "a\xef\xbf\xbd" "b\xef\xbf\xbd");
  EXPECT_EQ(valid_utf8("\xed\xa0\x80"), "\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd");
  EXPECT_EQ(valid_utf8(""), "");
}

}  // namespace
}  // namespace tracebed::base
