#include "framework/agent/protocol.h"

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

TEST(Protocol, BadMagicSaysSo) {
  auto frame = make_frame(1, 1, 0, {});
  frame[0] = 'X';
  auto h = decode_header(Bytes(frame.data(), kHeaderSize));
  ASSERT_FALSE(h.ok());
  EXPECT_THAT(h.error().message, HasSubstr("bad magic"));
}

TEST(Protocol, WrongVersionSaysSo) {
  auto frame = make_frame(1, 1, 0, {});
  frame[4] = kVersion + 1;
  auto h = decode_header(Bytes(frame.data(), kHeaderSize));
  ASSERT_FALSE(h.ok());
  EXPECT_THAT(h.error().message, HasSubstr("protocol version 2"));
}

TEST(Protocol, OversizedLengthIsRejectedBeforeAllocation) {
  FrameHeader fh;
  fh.op = static_cast<uint16_t>(Op::read_file) | kReply;
  fh.id = 3;
  fh.length = kMaxPayload + 1;
  uint8_t hdr[kHeaderSize];
  encode_header(fh, hdr);
  auto h = decode_header(Bytes(hdr, kHeaderSize));
  ASSERT_FALSE(h.ok());
  EXPECT_THAT(h.error().message, HasSubstr("read_file id 3: payload length 33554433 exceeds the limit"));
}

TEST(Protocol, ShortHeaderIsAnError) {
  uint8_t hdr[5] = {'T', 'B', 'A', 'G', 1};
  auto h = decode_header(Bytes(hdr, sizeof hdr));
  ASSERT_FALSE(h.ok());
  EXPECT_THAT(h.error().message, HasSubstr("frame flags: need 1 bytes, only 0 left"));
}

TEST(Protocol, StringLengthBeyondPayloadIsAnError) {
  Encoder e;
  e.u32(1000);  // claims 1000 bytes, none follow
  Decoder d(Bytes(e.data()), "read_file reply");
  auto s = d.bytes("data");
  ASSERT_FALSE(s.ok());
  EXPECT_THAT(s.error().message, HasSubstr("read_file reply: offset 0x4: data: length 1000 exceeds the 0 bytes left"));
}

TEST(Protocol, TooManyStringsIsAnError) {
  Encoder e;
  e.u32(1u << 30);
  Decoder d(Bytes(e.data()), "run request");
  auto s = d.strs("argv");
  ASSERT_FALSE(s.ok());
  EXPECT_THAT(s.error().message, HasSubstr("argv: 1073741824 entries exceed the limit 4096"));
}

TEST(Protocol, TrailingBytesAreAnError) {
  Encoder e;
  e.i32(0).u8(9);
  Decoder d(Bytes(e.data()), "mkdir reply");
  ASSERT_TRUE(d.i32("errno").ok());
  auto st = d.finish();
  ASSERT_FALSE(st.ok());
  EXPECT_THAT(st.error().message, HasSubstr("1 trailing bytes"));
}

TEST(Protocol, TruncatedIntegerNamesTheField) {
  Encoder e;
  e.u8(1);
  Decoder d(Bytes(e.data()), "hello reply");
  auto v = d.u32("ncpus");
  ASSERT_FALSE(v.ok());
  EXPECT_THAT(v.error().message, HasSubstr("hello reply: offset 0x0: ncpus: need 4 bytes, only 1 left"));
}

}  // namespace
}  // namespace tracebed::agent
