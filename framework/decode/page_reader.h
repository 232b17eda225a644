// Decodes one ring-buffer sub-buffer ("page") as the kernel writes it and
// trace-cmd stores it: include/linux/ring_buffer.h, kernel/trace/ring_buffer.c,
// and libtraceevent's kbuffer-parse.c, whose reading this matches.
//
//   u64  time stamp of the first event
//   long commit: bytes of event data (bits 0..26), bit 31 = events were lost
//        before this page, bit 30 = their count is stored as a long after the data
//   data: events, each a u32 header {type_len:5, time_delta:27} (little-endian:
//        type_len in the low bits; big-endian: in the high bits)
//
// The hot path (next) is inline, allocates nothing and builds no strings: an
// error is remembered as a kind and an offset and formatted on demand.
#pragma once

#include <cstdint>

#include "framework/base/bytes.h"
#include "framework/base/result.h"
#include "framework/decode/record.h"

namespace tracebed::decode {

// Ring-buffer constants, in their own namespace so they never clash with
// the page writer's.
namespace rb {

// type_len values (include/linux/ring_buffer.h, enum ring_buffer_type).
inline constexpr uint32_t kTypeDataMax = 28;     // 1..28: payload of type_len * 4 bytes
inline constexpr uint32_t kTypePadding = 29;     // delta 0: rest of page empty; else a discarded event
inline constexpr uint32_t kTypeTimeExtend = 30;  // delta + array[0] << 27
inline constexpr uint32_t kTypeTimeStamp = 31;   // absolute stamp, top 5 bits from the page
inline constexpr uint32_t kTsShift = 27;
// Commit field flags (kernel/trace/ring_buffer.c RB_MISSED_EVENTS/RB_MISSED_STORED;
// kbuffer-parse.c masks the size with 27 bits).
inline constexpr uint64_t kMissedEvents = 1ull << 31;
inline constexpr uint64_t kMissedStored = 1ull << 30;
inline constexpr uint32_t kCommitMask = (1u << 27) - 1;
// kbuffer-parse.c TS_MSB: absolute stamps lack these bits; take them from the page.
inline constexpr uint64_t kTsMsbMask = 0xf8ull << 56;

}  // namespace rb

// What a page decoder needs to know about the traced kernel.
struct PageLayout {
  Endian endian = Endian::little;
  uint32_t long_size = 8;  // size of the commit field: 4 or 8 (header_page's `commit`)

  uint32_t header_size() const { return 8 + long_size; }
};

// One data event of a sub-buffer.
struct PageEvent {
  uint64_t ts = 0;         // page stamp + deltas (raw clock, before file-level corrections)
  Bytes payload;           // type_len 0 payloads are rounded up to 4 bytes, as kbuffer does
  uint32_t offset = 0;     // offset of the event header from the start of the sub-buffer
  bool first = false;      // first data event of the sub-buffer
};

enum class PageStep : uint8_t { event, end, error };

class PageReader {
 public:
  // Loads one sub-buffer. `page` may be shorter than the file's page size (a
  // last, partial page) but must hold the header and the committed data.
  // `base_offset` is the offset of page[0] in whatever the caller names in
  // errors (the file, or a CPU's uncompressed data).
  Status load(Bytes page, const PageLayout& layout, uint64_t base_offset = 0);

  uint64_t timestamp() const { return page_ts_; }
  uint32_t data_size() const { return size_; }
  // 0, the stored count, or kMissedUnknown (bit 31 without bit 30).
  uint64_t missed_events() const { return missed_; }

  // Decodes the next data event (skipping time extends, absolute stamps and
  // padding). `end` when the committed data is used up; `error` on a bad
  // length, after which error() says what and where.
  [[gnu::always_inline]] PageStep next(PageEvent& out);

  Error error() const;

 private:
  enum class Fault : uint8_t { none, header, array0, length, small_length, padding };

  PageStep fail(Fault f, uint32_t at, uint32_t value, uint32_t left = 0) {
    fault_ = f;
    fault_at_ = at;
    fault_value_ = value;
    fault_left_ = left;
    pos_ = size_;
    return PageStep::error;
  }
  uint32_t read32(uint32_t at) const { return tracebed::load<uint32_t>(data_ + at, endian_); }

  const uint8_t* data_ = nullptr;  // first byte after the header
  uint64_t base_ = 0;              // offset of the page start, for errors
  uint64_t page_ts_ = 0;
  uint64_t ts_ = 0;
  uint64_t missed_ = 0;
  uint32_t start_ = 16;            // header size
  uint32_t size_ = 0;              // committed data bytes
  uint32_t pos_ = 0;               // offset into data_
  Endian endian_ = Endian::little;
  bool first_pending_ = true;
  Fault fault_ = Fault::none;
  uint32_t fault_at_ = 0;
  uint32_t fault_value_ = 0;
  uint32_t fault_left_ = 0;
};

inline PageStep PageReader::next(PageEvent& out) {
  // Every iteration consumes at least 4 bytes, so the loop ends within size_/4 steps.
  while (pos_ < size_) {
    const uint32_t at = pos_;
    const uint32_t left = size_ - pos_;
    if (left < 4) return fail(Fault::header, at, left);
    const uint32_t h = read32(at);
    uint32_t type_len, delta;
    if (endian_ == Endian::little) {
      type_len = h & 31u;
      delta = h >> 5;
    } else {
      type_len = h >> 27;
      delta = h & rb::kCommitMask;
    }
    uint32_t len;
    uint32_t payload_at = at + 4;
    if (type_len >= 1 && type_len <= rb::kTypeDataMax) {
      len = type_len * 4;
    } else if (type_len == 0) {
      if (left < 8) return fail(Fault::array0, at, left);
      const uint32_t total = read32(at + 4);  // includes array[0] itself
      if (total < 4) return fail(Fault::small_length, at, total);
      len = ((total - 4) + 3) & ~3u;
      payload_at = at + 8;
    } else if (type_len == rb::kTypeTimeExtend || type_len == rb::kTypeTimeStamp) {
      if (left < 8) return fail(Fault::array0, at, left);
      const uint64_t stamp = (uint64_t{read32(at + 4)} << rb::kTsShift) + delta;
      if (type_len == rb::kTypeTimeExtend)
        ts_ += stamp;
      else
        ts_ = stamp | (ts_ & rb::kTsMsbMask);
      pos_ = at + 8;
      continue;
    } else {  // padding
      if (delta == 0) {  // null event: nothing more on this page
        pos_ = size_;
        break;
      }
      if (left < 8) return fail(Fault::array0, at, left);
      const uint32_t skip = read32(at + 4);  // bytes after the header, array[0] included
      if (skip > left - 4) return fail(Fault::padding, at, skip, left - 4);
      ts_ += delta;  // kbuffer adds a discarded event's delta; so do we
      pos_ = at + 4 + skip;
      continue;
    }
    if (len > size_ - payload_at) return fail(Fault::length, at, len, size_ - payload_at);
    ts_ += delta;
    out.ts = ts_;
    out.payload = Bytes(data_ + payload_at, len);
    out.offset = start_ + at;
    out.first = first_pending_;
    first_pending_ = false;
    pos_ = payload_at + len;
    return PageStep::event;
  }
  return fault_ == Fault::none ? PageStep::end : PageStep::error;
}

}  // namespace tracebed::decode
