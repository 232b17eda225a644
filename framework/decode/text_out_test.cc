#include "framework/decode/text_out.h"

#include <gtest/gtest.h>

#include <cstring>
#include <random>
#include <string>
#include <string_view>

namespace tracebed::decode {
namespace {

// Every append size from 0 to 40 (the fixed-move copies below 17, memcpy
// above), through many grows, against the same appends to a std::string.
TEST(TextOutTest, AppendsMatchStdString) {
  std::mt19937 rng(7);
  std::string source(64, '\0');
  for (size_t i = 0; i < source.size(); ++i) source[i] = static_cast<char>('A' + i % 58);
  std::string want;
  std::string got = "kept:";
  want = got;
  {
    TextOut out(got, 64);
    for (int i = 0; i < 5000; ++i) {
      const size_t n = rng() % 41;
      const size_t at = rng() % (source.size() - n + 1);
      switch (rng() % 4) {
        case 0:
          out.append(source.data() + at, n);
          want.append(source.data() + at, n);
          break;
        case 1:
          out.append(n, '.');
          want.append(n, '.');
          break;
        case 2:
          out += source[at];
          want += source[at];
          break;
        default:
          out += std::string_view(source).substr(at, n);
          want += std::string_view(source).substr(at, n);
          break;
      }
      ASSERT_EQ(out.size(), want.size());
    }
    EXPECT_EQ(out.view(), want);
  }
  EXPECT_EQ(got, want);  // the destructor cut the string to the text
}

TEST(TextOutTest, FindTruncateAndPopBack) {
  std::string s = "x";
  {
    TextOut out(s);
    out += std::string_view("ab\0cd\n", 6);
    EXPECT_EQ(out.find('\0', 0), 3u);
    EXPECT_EQ(out.find('\0', 4), std::string::npos);
    EXPECT_EQ(out.find('a', 99), std::string::npos);
    EXPECT_EQ(out.back(), '\n');
    out.pop_back();
    EXPECT_EQ(out.view(), std::string_view("xab\0cd", 6));
    out.truncate(out.find('\0', 0));
    EXPECT_EQ(out.view(), "xab");
    out.close();
    EXPECT_EQ(s, "xab");
  }
  EXPECT_EQ(s, "xab");  // the destructor of a closed TextOut leaves the string alone
}

// A batch buffer written again from its start keeps its length (no second
// zero-fill) and shows only the new text.
TEST(TextOutTest, RestartWritesFromTheStart) {
  std::string s;
  TextOut out(s, 1024);
  out.append(std::string(3000, 'a'));
  const size_t length = s.size();
  EXPECT_GE(length, 3000u);
  out.restart(s);
  EXPECT_EQ(s.size(), length);
  EXPECT_TRUE(out.empty());
  out += "new";
  EXPECT_EQ(out.view(), "new");
  out.close();
  EXPECT_EQ(s, "new");
}

// snprintf-style writers: room for n bytes, then keep k of them.
TEST(TextOutTest, ReserveTailThenCommit) {
  std::string s;
  TextOut out(s, 64);
  out += "v=";
  char* p = out.reserve_tail(1000);
  std::memset(p, '7', 1000);
  out.commit(500);
  EXPECT_EQ(out.size(), 502u);
  EXPECT_EQ(out.view().substr(0, 4), "v=77");
  out.close();
  EXPECT_EQ(s, "v=" + std::string(500, '7'));
}

}  // namespace
}  // namespace tracebed::decode
