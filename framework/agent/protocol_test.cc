#include "framework/agent/protocol.h"

#include <functional>
#include <string>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace tracebed::agent {
namespace {

using ::testing::HasSubstr;

TEST(Protocol, FrameRoundTrip) {
  Encoder e;
  e.i32(-2).u64(0x1122334455667788).str("/sys/kernel/tracing").strs({"sh", "-c", "echo hi"});
  auto frame = make_frame(static_cast<uint16_t>(Op::run), 7, kMore, e.data());
  ASSERT_EQ(frame.size(), kHeaderSize + e.data().size());

  auto h = decode_header(Bytes(frame.data(), kHeaderSize));
  ASSERT_TRUE(h.ok()) << h.error().message;
  EXPECT_EQ(h->op, static_cast<uint16_t>(Op::run));
  EXPECT_EQ(h->id, 7u);
  EXPECT_EQ(h->flags, kMore);
  EXPECT_EQ(h->length, e.data().size());

  Decoder d(Bytes(frame.data() + kHeaderSize, h->length), "test");
  EXPECT_EQ(*d.i32("a"), -2);
  EXPECT_EQ(*d.u64("b"), 0x1122334455667788u);
  EXPECT_EQ(*d.str("c"), "/sys/kernel/tracing");
  auto list = d.strs("d");
  ASSERT_TRUE(list.ok());
  EXPECT_THAT(*list, ::testing::ElementsAre("sh", "-c", "echo hi"));
  EXPECT_TRUE(d.finish().ok());
}

TEST(Protocol, HeaderIsLittleEndianOnTheWire) {
  auto frame = make_frame(static_cast<uint16_t>(Op::hello), 0x01020304, 0, {});
  const uint8_t want[] = {'T', 'B', 'A', 'G', kVersion, 0, 1, 0, 4, 3, 2, 1, 0, 0, 0, 0};
  EXPECT_TRUE(std::equal(frame.begin(), frame.end(), std::begin(want), std::end(want)));
}

// Headers no sender writes, and what decode_header says about each.
TEST(Protocol, BadHeadersSayWhatIsWrong) {
  auto poked = [](size_t at, uint8_t value) {
    auto frame = make_frame(1, 1, 0, {});
    frame[at] = value;
    return frame;
  };
  FrameHeader big;
  big.op = static_cast<uint16_t>(Op::read_file) | kReply;
  big.id = 3;
  big.length = kMaxPayload + 1;
  std::vector<uint8_t> oversized(kHeaderSize);
  encode_header(big, oversized.data());
  const std::pair<std::vector<uint8_t>, std::string> cases[] = {
      {poked(0, 'X'), "bad magic"},
      {poked(4, kVersion + 1), "protocol version 2"},
      // Refused before anything is allocated for it.
      {oversized, "read_file id 3: payload length 33554433 exceeds the limit"},
      {{'T', 'B', 'A', 'G', 1}, "frame flags: need 1 bytes, only 0 left"},
  };
  for (const auto& [header, error] : cases) {
    auto h = decode_header(Bytes(header));
    ASSERT_FALSE(h.ok()) << error;
    EXPECT_THAT(h.error().message, HasSubstr(error));
  }
}

template <typename R>
std::string error_of(const R& r) {
  return r.ok() ? "(decoded)" : r.error().message;
}

// A payload that lies, and the error its decoder gives: what was being
// read, at which offset, and why.
struct BadPayload {
  Encoder payload;
  std::string_view context;
  std::function<std::string(Decoder&)> read;
  std::string_view error;
};

TEST(Protocol, BadPayloadsNameTheFieldAndWhere) {
  const BadPayload cases[] = {
      {Encoder().u32(1000), "read_file reply", [](Decoder& d) { return error_of(d.bytes("data")); },
       "read_file reply: offset 0x4: data: length 1000 exceeds the 0 bytes left"},  // none follow
      {Encoder().u32(1u << 30), "run request", [](Decoder& d) { return error_of(d.strs("argv")); },
       "argv: 1073741824 entries exceed the limit 4096"},
      {Encoder().i32(0).u8(9), "mkdir reply",
       [](Decoder& d) { return d.i32("errno").ok() ? error_of(d.finish()) : "errno unread"; }, "1 trailing bytes"},
      {Encoder().u8(1), "hello reply", [](Decoder& d) { return error_of(d.u32("ncpus")); },
       "hello reply: offset 0x0: ncpus: need 4 bytes, only 1 left"},
  };
  for (const BadPayload& c : cases) {
    Decoder d(Bytes(c.payload.data()), c.context);
    EXPECT_THAT(c.read(d), HasSubstr(std::string(c.error)));
  }
}

}  // namespace
}  // namespace tracebed::agent
