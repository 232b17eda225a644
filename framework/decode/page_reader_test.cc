#include "framework/decode/page_reader.h"

#include <gtest/gtest.h>

#include "framework/decode/fixture_text_for_tests.h"

#include <cstdio>
#include <fstream>
#include <iterator>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

namespace tracebed::decode {
namespace {

// Writes sub-buffers the way kernel/trace/ring_buffer.c lays them out, so
// each test states its input bytes exactly.
class PageBuilder {
 public:
  PageBuilder(Endian e, uint32_t long_size, uint32_t page_size = 4096)
      : e_(e), long_size_(long_size), page_(page_size, 0) {}

  PageBuilder& stamp(uint64_t ts) { put(0, ts, 8); return *this; }
  // Data event with a payload of type_len * 4 bytes filled with `fill`.
  PageBuilder& small(uint32_t delta, uint32_t words, uint8_t fill) {
    header(words, delta);
    for (uint32_t i = 0; i < words * 4; ++i) byte(fill);
    return *this;
  }
  // type_len 0: array[0] = length + 4, payload rounded up to 4 bytes.
  PageBuilder& big(uint32_t delta, uint32_t length, uint8_t fill) {
    header(0, delta);
    word(length + 4);
    for (uint32_t i = 0; i < ((length + 3) & ~3u); ++i) byte(fill);
    return *this;
  }
  PageBuilder& extend(uint32_t delta, uint32_t high) { header(30, delta); word(high); return *this; }
  PageBuilder& absolute(uint32_t low27, uint32_t high) { header(31, low27); word(high); return *this; }
  PageBuilder& discarded(uint32_t delta, uint32_t bytes_after_header) {
    header(29, delta);
    word(bytes_after_header);
    for (uint32_t i = 4; i < bytes_after_header; ++i) byte(0xdd);
    return *this;
  }
  PageBuilder& null_padding() { header(29, 0); return *this; }
  PageBuilder& raw_word(uint32_t w) { word(w); return *this; }

  // Sets commit = bytes written (+ flags) and, when given, stores the count.
  std::vector<uint8_t> finish(uint64_t flags = 0, std::optional<uint64_t> stored = {}) {
    const uint32_t size = pos_;
    put(8, size | flags, long_size_);
    if (stored) put(8 + long_size_ + size, *stored, long_size_);
    return page_;
  }
  uint32_t data_bytes() const { return pos_; }

 private:
  void header(uint32_t type_len, uint32_t delta) {
    const uint32_t h = e_ == Endian::little ? (delta << 5) | type_len : (type_len << 27) | delta;
    word(h);
  }
  void word(uint32_t w) {
    put(8 + long_size_ + pos_, w, 4);
    pos_ += 4;
  }
  void byte(uint8_t b) { page_.at(8 + long_size_ + pos_) = b; ++pos_; }
  void put(size_t at, uint64_t v, uint32_t size) {
    for (uint32_t i = 0; i < size; ++i) {
      const uint32_t shift = e_ == Endian::little ? 8 * i : 8 * (size - 1 - i);
      page_.at(at + i) = static_cast<uint8_t>(v >> shift);
    }
  }

  Endian e_;
  uint32_t long_size_;
  std::vector<uint8_t> page_;
  uint32_t pos_ = 0;
};

std::vector<PageEvent> decode_all(PageReader& r) {
  std::vector<PageEvent> out;
  PageEvent ev;
  for (int guard = 0; guard < 10000; ++guard) {
    PageStep s = r.next(ev);
    if (s != PageStep::event) {
      EXPECT_EQ(s, PageStep::end) << r.error().message;
      break;
    }
    out.push_back(ev);
  }
  return out;
}

class PageReaderLayouts : public ::testing::TestWithParam<std::tuple<Endian, uint32_t>> {};

TEST_P(PageReaderLayouts, DecodesEveryEventKind) {
  const auto [endian, long_size] = GetParam();
  PageBuilder b(endian, long_size);
  b.stamp(1000)
      .small(5, 2, 0xaa)            // ts 1005, 8 bytes
      .extend(3, 2)                 // +3 + (2 << 27)
      .small(7, 1, 0xbb)            // ts 1005 + 3 + 2^28 + 7
      .big(1, 130, 0xcc)            // 130 bytes -> 132 with rounding
      .discarded(4, 12)             // kbuffer still adds the 4
      .absolute(0x10, 0x3)          // ts = 3 << 27 | 0x10
      .small(2, 3, 0xee);
  const std::vector<uint8_t> page = b.finish();
  PageReader r;
  std::vector<uint8_t> keep;  // the reader views these bytes
  ASSERT_TRUE(r.load(page, PageLayout{endian, long_size}).ok());
  EXPECT_EQ(r.timestamp(), 1000u);
  EXPECT_EQ(r.data_size(), b.data_bytes());
  EXPECT_EQ(r.missed_events(), 0u);
  std::vector<PageEvent> ev = decode_all(r);
  ASSERT_EQ(ev.size(), 4u);
  const uint32_t hdr = 8 + long_size;
  EXPECT_EQ(ev[0].ts, 1005u);
  EXPECT_EQ(ev[0].payload.size(), 8u);
  EXPECT_EQ(ev[0].payload[0], 0xaa);
  EXPECT_EQ(ev[0].offset, hdr);
  EXPECT_TRUE(ev[0].first);
  EXPECT_EQ(ev[1].ts, 1005u + 3 + (2ull << 27) + 7);
  EXPECT_EQ(ev[1].payload.size(), 4u);
  EXPECT_EQ(ev[1].offset, hdr + 12 + 8);
  EXPECT_FALSE(ev[1].first);
  EXPECT_EQ(ev[2].ts, ev[1].ts + 1);
  EXPECT_EQ(ev[2].payload.size(), 132u);
  EXPECT_EQ(ev[2].payload[129], 0xcc);
  EXPECT_EQ(ev[3].ts, (3ull << 27 | 0x10) + 2);
  EXPECT_EQ(ev[3].payload.size(), 12u);
  EXPECT_EQ(ev[3].payload[11], 0xee);
}

INSTANTIATE_TEST_SUITE_P(All, PageReaderLayouts,
                         ::testing::Values(std::tuple{Endian::little, 8u}, std::tuple{Endian::little, 4u},
                                           std::tuple{Endian::big, 8u}, std::tuple{Endian::big, 4u}),
                         [](const auto& info) {
                           return std::string(std::get<0>(info.param) == Endian::little ? "le" : "be") +
                                  std::to_string(std::get<1>(info.param) * 8);
                         });

TEST(PageReader, AbsoluteStampTakesTopBitsFromThePage) {
  PageBuilder b(Endian::little, 8);
  b.stamp(0xf800000000000123ull).absolute(5, 1).small(0, 1, 1);
  PageReader r;
  std::vector<uint8_t> keep;  // the reader views these bytes
  ASSERT_TRUE(r.load(keep = b.finish(), PageLayout{}).ok());
  auto ev = decode_all(r);
  ASSERT_EQ(ev.size(), 1u);
  EXPECT_EQ(ev[0].ts, 0xf800000000000000ull | (1ull << 27) | 5);
  EXPECT_TRUE(ev[0].first);
  EXPECT_EQ(ev[0].offset, 16u + 8);  // after the absolute stamp: trace-cmd 3.1.6 loses missed counts here
}

TEST(PageReader, NullPaddingEndsThePage) {
  PageBuilder b(Endian::little, 8);
  b.stamp(1).small(1, 1, 1).null_padding().raw_word(0xffffffff).small(1, 1, 2);
  PageReader r;
  std::vector<uint8_t> keep;  // the reader views these bytes
  ASSERT_TRUE(r.load(keep = b.finish(), PageLayout{}).ok());
  EXPECT_EQ(decode_all(r).size(), 1u);
}

TEST(PageReader, MissedEvents) {
  {
    PageBuilder b(Endian::little, 8);
    b.stamp(1).small(1, 1, 1);
    PageReader r;
    std::vector<uint8_t> keep;  // the reader views these bytes
    ASSERT_TRUE(r.load(keep = b.finish(rb::kMissedEvents | rb::kMissedStored, 42), PageLayout{}).ok());
    EXPECT_EQ(r.missed_events(), 42u);
    EXPECT_EQ(r.data_size(), 8u);
  }
  {
    PageBuilder b(Endian::big, 4);
    b.stamp(1).small(1, 1, 1);
    PageReader r;
    std::vector<uint8_t> keep;  // the reader views these bytes
    ASSERT_TRUE(r.load(keep = b.finish(rb::kMissedEvents | rb::kMissedStored, 7), PageLayout{Endian::big, 4}).ok());
    EXPECT_EQ(r.missed_events(), 7u);
  }
  {
    PageBuilder b(Endian::little, 8);
    b.stamp(1).small(1, 1, 1);
    PageReader r;
    std::vector<uint8_t> keep;  // the reader views these bytes
    ASSERT_TRUE(r.load(keep = b.finish(rb::kMissedEvents), PageLayout{}).ok());
    EXPECT_EQ(r.missed_events(), kMissedUnknown);
  }
}

TEST(PageReader, SmallerAndLargerSubBuffers) {
  for (uint32_t size : {64u, 8192u, 65536u}) {
    SCOPED_TRACE(size);
    PageBuilder b(Endian::little, 8, size);
    b.stamp(10);
    uint32_t n = 0;
    while (b.data_bytes() + 8 <= size - 16) {
      b.small(1, 1, static_cast<uint8_t>(n));
      ++n;
    }
    PageReader r;
    std::vector<uint8_t> keep;  // the reader views these bytes
    ASSERT_TRUE(r.load(keep = b.finish(), PageLayout{}).ok());
    auto ev = decode_all(r);
    ASSERT_EQ(ev.size(), n);
    EXPECT_EQ(ev.back().ts, 10u + n);
  }
}

TEST(PageReader, ErrorsNameTheOffset) {
  {
    std::vector<uint8_t> tiny(10, 0);
    PageReader r;
    std::vector<uint8_t> keep;  // the reader views these bytes
    Status s = r.load(tiny, PageLayout{}, 0x1000);
    ASSERT_FALSE(s.ok());
    EXPECT_EQ(s.error().message, "offset 0x1000: sub-buffer header: need 16 bytes, only 10 left");
  }
  {
    std::vector<uint8_t> page(64, 0);
    page[8] = 100;  // commit 100 > 48
    PageReader r;
    std::vector<uint8_t> keep;  // the reader views these bytes
    Status s = r.load(page, PageLayout{}, 0x2000);
    ASSERT_FALSE(s.ok());
    EXPECT_EQ(s.error().message, "offset 0x2008: sub-buffer commit size 100 exceeds the 48 bytes after the header");
  }
  {
    PageBuilder b(Endian::little, 8);
    b.stamp(1).small(1, 1, 1).big(1, 8, 2);
    std::vector<uint8_t> page = b.finish();
    page[16 + 8 + 4] = 200;  // array[0] of the second event: length 196
    PageReader r;
    std::vector<uint8_t> keep;  // the reader views these bytes
    ASSERT_TRUE(r.load(page, PageLayout{}, 0x3000).ok());
    PageEvent ev;
    EXPECT_EQ(r.next(ev), PageStep::event);
    EXPECT_EQ(r.next(ev), PageStep::error);
    EXPECT_EQ(r.error().message, "offset 0x3018: event length 196 exceeds the 8 bytes left in the sub-buffer's data");
    EXPECT_EQ(r.next(ev), PageStep::error);  // stays failed
  }
  {
    PageBuilder b(Endian::little, 8);
    b.stamp(1).small(1, 1, 1).raw_word(1u << 5);  // type_len 0 without array[0]
    PageReader r;
    std::vector<uint8_t> keep;  // the reader views these bytes
    ASSERT_TRUE(r.load(keep = b.finish(), PageLayout{}, 0).ok());
    PageEvent ev;
    EXPECT_EQ(r.next(ev), PageStep::event);
    EXPECT_EQ(r.next(ev), PageStep::error);
    EXPECT_EQ(r.error().message,
              "offset 0x18: event header: need 8 bytes (with array[0]), only 4 left in the sub-buffer's data");
  }
  {
    PageBuilder b(Endian::little, 8);
    b.stamp(1).small(1, 1, 1);
    PageReader r;
    std::vector<uint8_t> keep;  // the reader views these bytes
    Status s = r.load(keep = b.finish(rb::kMissedEvents | rb::kMissedStored), PageLayout{}, 0);
    EXPECT_TRUE(s.ok());  // room for the count exists in a 4096-byte page
    std::vector<uint8_t> page(24, 0);
    page[8] = 8;
    page[11] = 0xc0;  // missed + stored, but no room after 8 bytes of data
    s = r.load(page, PageLayout{}, 0);
    ASSERT_FALSE(s.ok());
    EXPECT_EQ(s.error().message,
              "offset 0x8: sub-buffer says the missed-events count is stored after 8 bytes of data, but only 0 bytes "
              "follow");
  }
}

// A real sub-buffer: the first page of CPU 0 in a recorded v7 file without
// compression. The expected stamps come from `trace-cmd report -t --cpu 0`.
// "  sh-92    [000]     4.398065446: myopen: ..." -> 4398065446
uint64_t oracle_ns(const std::string& line) {
  size_t close = line.find("] ");
  size_t colon = line.find(':', close);
  std::string t = line.substr(close + 2, colon - close - 2);
  t.erase(0, t.find_first_not_of(' '));
  size_t dot = t.find('.');
  return std::stoull(t.substr(0, dot)) * 1000000000ull + std::stoull(t.substr(dot + 1));
}

TEST(PageReader, RealSubBuffersMatchTraceCmd) {
  const std::string dir = std::string(TRACEBED_SOURCE_DIR) + "/fixtures/recorded/";
  const std::string dat = dir + "s3-k5.10-v7none-kprobes-marker.dat";
  std::ifstream in(dat, std::ios::binary);
  ASSERT_TRUE(in) << dat;
  // CPU 0's data: offset 4173824, 36864 bytes (`trace-cmd dump --options`).
  in.seekg(4173824);
  std::vector<uint8_t> data(36864);
  in.read(reinterpret_cast<char*>(data.data()), data.size());
  ASSERT_TRUE(in);
  std::vector<uint64_t> stamps;
  for (size_t off = 0; off < data.size(); off += 4096) {
    PageReader r;
    std::vector<uint8_t> keep;  // the reader views these bytes
    ASSERT_TRUE(r.load(Bytes(data).subspan(off, 4096), PageLayout{}, 4173824 + off).ok());
    for (const PageEvent& ev : decode_all(r)) stamps.push_back(ev.ts);
  }
  std::vector<std::string> lines = zstd_lines(dir + "s3-k5.10-v7none-kprobes-marker.t.report.zst");
  std::vector<uint64_t> want;
  for (const std::string& l : lines)
    if (l.find("] ") != std::string::npos && l.find("[000]") != std::string::npos) want.push_back(oracle_ns(l));
  ASSERT_FALSE(want.empty());
  EXPECT_EQ(stamps, want);
}

}  // namespace
}  // namespace tracebed::decode
