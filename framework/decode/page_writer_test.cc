// The page writer must lay sub-buffers out as the kernel does. Expected bytes
// come from the kernel's definitions (include/linux/ring_buffer.h:
// struct ring_buffer_event, RB_MISSED_*; kernel/trace/ring_buffer.c:
// rb_calculate_event_length, rb_reset_tail, ring_buffer_read_page) and from
// sub-buffers real kernels wrote (fixtures/recorded).
#include "framework/decode/page_writer.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdio>
#include <string>

#include "framework/decode/trace_dat_writer.h"

namespace tracebed::decode {
namespace {

using ::testing::ElementsAre;

uint32_t u32_at(const std::vector<uint8_t>& p, size_t at, Endian e = Endian::little) {
  return load<uint32_t>(p.data() + at, e);
}
uint64_t u64_at(const std::vector<uint8_t>& p, size_t at, Endian e = Endian::little) {
  return load<uint64_t>(p.data() + at, e);
}

TEST(SubBufferWriter, SmallEventHeaderLittleEndian) {
  SubBufferWriter w({Endian::little, 8, 4096}, 0x1122334455667788);
  const uint8_t payload[] = {1, 2, 3, 4, 5, 6};
  ASSERT_TRUE(w.event(1000, payload).ok());
  auto page = w.finish();
  ASSERT_EQ(page.size(), 4096u);
  EXPECT_EQ(u64_at(page, 0), 0x1122334455667788u);
  EXPECT_EQ(u64_at(page, 8), 12u);                    // header + 8 padded bytes
  EXPECT_EQ(u32_at(page, 16), (1000u << 5) | 2u);     // type_len 2 in the low 5 bits
  EXPECT_THAT(std::vector<uint8_t>(page.begin() + 20, page.begin() + 28),
              ElementsAre(1, 2, 3, 4, 5, 6, 0, 0));
}

TEST(SubBufferWriter, BigEndianPutsTypeLenInTheHighBits) {
  SubBufferWriter w({Endian::big, 8, 4096}, 5);
  const uint8_t payload[4] = {9, 9, 9, 9};
  ASSERT_TRUE(w.event(3, payload).ok());
  auto page = w.finish();
  EXPECT_EQ(u64_at(page, 0, Endian::big), 5u);
  EXPECT_EQ(u64_at(page, 8, Endian::big), 8u);
  EXPECT_EQ(u32_at(page, 16, Endian::big), (1u << 27) | 3u);
}

TEST(SubBufferWriter, LongEventsUseTypeLenZero) {
  // RB_MAX_SMALL_DATA is 28 * 4 = 112 bytes; beyond, array[0] holds the
  // length (payload rounded to 4, plus array[0] itself).
  EXPECT_EQ(rb_event_size(112), 116u);
  EXPECT_EQ(rb_event_size(113), 4u + 4u + 116u);
  EXPECT_EQ(rb_event_size(0), 8u);
  SubBufferWriter w({Endian::little, 8, 4096}, 0);
  std::vector<uint8_t> payload(113, 0xab);
  ASSERT_TRUE(w.event(7, payload).ok());
  auto page = w.finish();
  EXPECT_EQ(u64_at(page, 8), 124u);
  EXPECT_EQ(u32_at(page, 16), 7u << 5);     // type_len 0
  EXPECT_EQ(u32_at(page, 20), 120u);        // 116 + 4
  EXPECT_EQ(page[24], 0xab);
  EXPECT_EQ(page[24 + 113], 0);             // zero padding
}

TEST(SubBufferWriter, TimeExtendAndAbsoluteStamp) {
  SubBufferWriter w({Endian::little, 8, 4096}, 0);
  uint64_t delta = (uint64_t{0x1234} << 27) | 0x55;
  ASSERT_TRUE(w.time_extend(delta).ok());
  ASSERT_TRUE(w.time_stamp(0xf800000000000000 | (uint64_t{0xabcd} << 27) | 0x77).ok());
  auto page = w.finish();
  EXPECT_EQ(u32_at(page, 16), (0x55u << 5) | 30u);
  EXPECT_EQ(u32_at(page, 20), 0x1234u);
  EXPECT_EQ(u32_at(page, 24), (0x77u << 5) | 31u);
  EXPECT_EQ(u32_at(page, 28), 0xabcdu);     // the top 5 bits are not stored
  EXPECT_FALSE(w.event(1u << 27, {}).ok()); // deltas are 27 bits
}

TEST(SubBufferWriter, DiscardedEventAndCloseTail) {
  SubBufferWriter w({Endian::little, 8, 64}, 0);   // 48 bytes of data
  ASSERT_TRUE(w.discarded(4, 16).ok());
  EXPECT_FALSE(w.discarded(0, 16).ok());             // delta 0 would mean "page ends"
  w.close_tail();                                    // 32 bytes left: one padding event
  auto page = w.finish();
  EXPECT_EQ(u64_at(page, 8), 48u);
  EXPECT_EQ(u32_at(page, 16), (4u << 5) | 29u);
  EXPECT_EQ(u32_at(page, 20), 12u);                  // length - 4
  EXPECT_EQ(u32_at(page, 32), (1u << 5) | 29u);
  EXPECT_EQ(u32_at(page, 36), 28u);

  SubBufferWriter tight({Endian::little, 8, 32}, 0);  // 16 bytes of data
  std::vector<uint8_t> twelve(8, 1);
  ASSERT_TRUE(tight.event(0, twelve).ok());           // 12 bytes, 4 left
  tight.close_tail();                                 // too small: stays outside commit
  EXPECT_EQ(u64_at(tight.finish(), 8), 12u);
}

// A stored count: bits 31 and 30 of the commit, and the count after the
// data in a kernel long, 8 bytes or (32-bit kernels) 4, as the commit is.
TEST(SubBufferWriter, MissedEventsCountIsAKernelLong) {
  for (const uint8_t long_size : {8, 4}) {
    SCOPED_TRACE(long_size);
    SubBufferWriter w({Endian::little, long_size, 4096}, 9);
    ASSERT_TRUE(w.event(0, std::vector<uint8_t>(4, 2)).ok());
    w.set_missed_events(uint64_t{42});
    auto page = w.finish();
    auto long_at = [&](size_t at) { return long_size == 8 ? u64_at(page, at) : u32_at(page, at); };
    const size_t data = 8 + long_size;
    EXPECT_EQ(long_at(8), 8u | (1u << 31) | (1u << 30));
    EXPECT_EQ(u32_at(page, data), 1u);  // type_len 1, delta 0
    EXPECT_EQ(long_at(data + 8), 42u);
  }
}

TEST(SubBufferWriter, MissedEventsWithoutCount) {
  SubBufferWriter unknown({Endian::little, 8, 4096}, 0);
  unknown.set_missed_events(std::nullopt);
  EXPECT_EQ(u64_at(unknown.finish(), 8), uint64_t{1} << 31);

  // No room for the count after the data: only bit 31, as ring_buffer_read_page().
  SubBufferWriter full({Endian::little, 8, 32}, 0);
  ASSERT_TRUE(full.event(0, std::vector<uint8_t>(12, 1)).ok());
  full.set_missed_events(uint64_t{7});
  EXPECT_EQ(u64_at(full.finish(), 8), 16u | (uint64_t{1} << 31));
}

TEST(CpuBufferWriter, ExtendsLargeDeltasAndSplitsPages) {
  CpuBufferWriter cpu({Endian::little, 8, 64});   // 48 data bytes per page
  std::vector<uint8_t> p(8, 0x11);                // 12-byte events
  ASSERT_TRUE(cpu.add(1000, p).ok());
  ASSERT_TRUE(cpu.add(1000 + (uint64_t{1} << 27), p).ok());  // needs a time extend
  ASSERT_TRUE(cpu.add(1000 + (uint64_t{1} << 27) + 5, p).ok());
  ASSERT_TRUE(cpu.add(1000 + (uint64_t{1} << 27) + 9, p).ok());  // 44 + 12 > 48: new page
  EXPECT_FALSE(cpu.add(0, p).ok());               // time going backwards
  auto bytes = cpu.finish();
  ASSERT_EQ(bytes.size(), 128u);
  EXPECT_EQ(u64_at(bytes, 0), 1000u);
  EXPECT_EQ(u64_at(bytes, 8), 44u);               // 4 bytes left: too few for padding
  EXPECT_EQ(u32_at(bytes, 16), 2u);               // first event: delta 0, type_len 2
  EXPECT_EQ(u32_at(bytes, 28), 30u);              // extend: low 27 bits 0
  EXPECT_EQ(u32_at(bytes, 32), 1u);               //         array[0] = 1
  EXPECT_EQ(u32_at(bytes, 36), 2u);               // then the event with delta 0
  EXPECT_EQ(u32_at(bytes, 48), (5u << 5) | 2u);
  EXPECT_EQ(u32_at(bytes, 60), 0u);
  EXPECT_EQ(u64_at(bytes, 64), 1000u + (uint64_t{1} << 27) + 9);
  EXPECT_EQ(u64_at(bytes, 72), 12u);
}

TEST(CpuBufferWriter, LostEventsFlagTheNextPageAndKeepThePartialOne) {
  CpuBufferWriter cpu({Endian::little, 8, 4096});
  std::vector<uint8_t> p(8, 0x22);
  ASSERT_TRUE(cpu.add(100, p).ok());
  cpu.lose_events(uint64_t{123});      // the reader took the page after one event
  ASSERT_TRUE(cpu.add(200, p).ok());
  cpu.lose_events(std::nullopt);
  ASSERT_TRUE(cpu.add(300, p).ok());
  EXPECT_EQ(cpu.pages(), 3u);
  auto bytes = cpu.finish();
  ASSERT_EQ(bytes.size(), 3u * 4096);
  EXPECT_EQ(u64_at(bytes, 8), 12u);                                   // not padded
  EXPECT_EQ(u64_at(bytes, 4096), 200u);                               // new stamp
  EXPECT_EQ(u64_at(bytes, 4096 + 8), 12u | (1u << 31) | (1u << 30));
  EXPECT_EQ(u64_at(bytes, 4096 + 16 + 12), 123u);                     // count after data
  EXPECT_EQ(u64_at(bytes, 8192 + 8), 12u | (uint64_t{1} << 31));
}

// Decomposes a real sub-buffer into the writer's primitives and replays
// them: the result must be the kernel's bytes.
struct Replayed {
  size_t pages = 0, events = 0, extends = 0, discarded = 0, long_events = 0;
};

void replay_page(const std::vector<uint8_t>& page, const SubBufferLayout& layout, Replayed& stats) {
  uint64_t ts = load<uint64_t>(page.data(), layout.endian);
  uint64_t commit = load_uint(page.data() + 8, layout.commit_size, layout.endian);
  size_t size = commit & ((1u << 27) - 1);
  ASSERT_LE(size, layout.capacity());
  SubBufferWriter w(layout, ts);
  const uint8_t* d = page.data() + layout.header_size();
  size_t pos = 0;
  while (pos < size) {
    uint32_t h = load<uint32_t>(d + pos, layout.endian);
    uint32_t type = layout.endian == Endian::little ? h & 31 : h >> 27;
    uint32_t delta = layout.endian == Endian::little ? h >> 5 : h & ((1u << 27) - 1);
    uint32_t a0 = pos + 8 <= size ? load<uint32_t>(d + pos + 4, layout.endian) : 0;
    if (type == kRbTypePadding) {
      if (delta == 0) {
        ASSERT_TRUE(w.null_padding().ok());
        break;
      }
      ASSERT_TRUE(w.discarded(delta, a0 + 4).ok());
      // Discarded bytes keep whatever the event held; copy them as payload is not ours.
      ++stats.discarded;
      pos += a0 + 4;
    } else if (type == kRbTypeTimeExtend) {
      ASSERT_TRUE(w.time_extend((uint64_t{a0} << 27) | delta).ok());
      ++stats.extends;
      pos += 8;
    } else if (type == kRbTypeTimeStamp) {
      ASSERT_TRUE(w.time_stamp((uint64_t{a0} << 27) | delta).ok());
      pos += 8;
    } else if (type == 0) {
      Bytes payload(d + pos + 8, a0 - 4);
      ASSERT_TRUE(w.event(delta, payload, /*force_long=*/true).ok());
      ++stats.long_events;
      ++stats.events;
      pos += 4 + a0;
    } else {
      Bytes payload(d + pos + 4, type * 4);
      ASSERT_TRUE(w.event(delta, payload).ok());
      ++stats.events;
      pos += 4 + type * 4;
    }
  }
  if (commit & kRbMissedEvents) {
    std::optional<uint64_t> count;
    if (commit & kRbMissedStored)
      count = load_uint(d + size, layout.commit_size, layout.endian);
    w.set_missed_events(count);
  }
  auto mine = w.finish();
  // Discarded events keep their old payload bytes in the kernel's page;
  // compare everything else.
  std::vector<uint8_t> theirs = page;
  pos = 0;
  while (pos < size) {
    uint32_t h = load<uint32_t>(d + pos, layout.endian);
    uint32_t type = layout.endian == Endian::little ? h & 31 : h >> 27;
    uint32_t a0 = pos + 8 <= size ? load<uint32_t>(d + pos + 4, layout.endian) : 0;
    size_t at = layout.header_size() + pos;
    if (type == kRbTypePadding) {
      if (!(layout.endian == Endian::little ? h >> 5 : h & ((1u << 27) - 1))) break;
      std::fill(theirs.begin() + at + 8, theirs.begin() + at + 4 + a0, 0);
      pos += a0 + 4;
    } else if (type == kRbTypeTimeExtend || type == kRbTypeTimeStamp) {
      pos += 8;
    } else {
      pos += type ? 4 + type * 4 : 4 + a0;
    }
  }
  ASSERT_EQ(mine, theirs) << "sub-buffer with stamp " << ts;
  ++stats.pages;
}

TEST(SubBufferWriter, ReproducesKernelSubBuffers) {
  for (const char* name : {"s1-k6.12-v7zstd-sched-irq-timer-syscalls", "s2-k6.1-v6-function-sched-kmem",
                           "s3-k5.10-v7none-kprobes-marker", "s4-k7.2-v7zstd-function_graph",
                           "s5-k7.2custom-v7zstd-user_events-synthetic"}) {
    SCOPED_TRACE(name);
    auto contents = read_trace_dat_contents_file(std::string(TRACEBED_SOURCE_DIR) +
                                                 "/fixtures/recorded/" + name + ".dat");
    ASSERT_TRUE(contents.ok()) << contents.error().message;
    SubBufferLayout layout{contents->endian, 8, contents->page_size};
    Replayed stats;
    for (const auto& cpu : contents->buffers[0].cpus) {
      for (size_t off = 0; off < cpu.pages.size(); off += layout.size) {
        std::vector<uint8_t> page(cpu.pages.begin() + off, cpu.pages.begin() + off + layout.size);
        SCOPED_TRACE(testing::Message() << "cpu " << cpu.cpu << " page " << off / layout.size);
        replay_page(page, layout, stats);
        if (HasFatalFailure()) return;
      }
    }
    EXPECT_GT(stats.pages, 2u);
    EXPECT_GT(stats.events, 100u);
    std::printf("%s: %zu sub-buffers, %zu events (%zu type_len 0), %zu time extends, %zu discarded\n",
                name, stats.pages, stats.events, stats.long_events, stats.extends, stats.discarded);
  }
}

}  // namespace
}  // namespace tracebed::decode
