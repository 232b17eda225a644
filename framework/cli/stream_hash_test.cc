#include "framework/cli/stream_hash.h"

#include <string>

#include <gtest/gtest.h>

namespace tracebed::cli {
namespace {

uint64_t hash_in_pieces(const std::string& s, size_t piece) {
  StreamHash h;
  for (size_t at = 0; at < s.size(); at += piece) {
    h.update(reinterpret_cast<const uint8_t*>(s.data()) + at, std::min(piece, s.size() - at));
  }
  return h.finish();
}

std::string sample(size_t n) {
  std::string s;
  for (size_t i = 0; s.size() < n; ++i) s += "          <idle>-0     [001]   123.456789: function: line " + std::to_string(i) + "\n";
  s.resize(n);
  return s;
}

TEST(StreamHash, TheSameHoweverTheStreamIsCut) {
  const std::string s = sample(10000);
  const uint64_t whole = hash_in_pieces(s, s.size());
  for (size_t piece : {1, 3, 7, 8, 31, 32, 33, 4096}) EXPECT_EQ(hash_in_pieces(s, piece), whole) << piece;
}

TEST(StreamHash, AnyOneByteChangedOrMovedDiffers) {
  const std::string s = sample(1000);
  const uint64_t base = hash_in_pieces(s, 64);
  for (size_t i = 0; i < s.size(); ++i) {
    std::string t = s;
    t[i] ^= 0x01;
    ASSERT_NE(hash_in_pieces(t, 64), base) << "byte " << i;
  }
  // Two bytes swapped between lanes, a byte dropped, a byte added.
  std::string swapped = s;
  std::swap(swapped[10], swapped[18]);  // '<' and ' ', eight bytes apart
  ASSERT_NE(swapped, s);
  EXPECT_NE(hash_in_pieces(swapped, 64), base);
  EXPECT_NE(hash_in_pieces(s.substr(0, s.size() - 1), 64), base);
  EXPECT_NE(hash_in_pieces(s + " ", 64), base);
  StreamHash h;
  EXPECT_NE(h.finish(), base);
}

}  // namespace
}  // namespace tracebed::cli
