// Builds ring-buffer sub-buffers byte for byte as the kernel lays them out
// (include/linux/ring_buffer.h, kernel/trace/ring_buffer.c), for writing
// trace.dat files and edge-case fixtures the kernel rarely produces on demand.
//
// A sub-buffer is: u64 time stamp, `commit` (a kernel long: 4 or 8 bytes),
// then events. Every event starts with a u32 header: type_len (5 bits) and
// time_delta (27 bits); on little-endian kernels type_len is in the low bits,
// on big-endian kernels in the high bits (C bitfield order).
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "framework/base/bytes.h"
#include "framework/base/result.h"

namespace tracebed::decode {

// Event types (include/linux/ring_buffer.h, enum ring_buffer_type).
inline constexpr uint32_t kRbTypeDataLong = 0;      // length in array[0]
inline constexpr uint32_t kRbTypeDataMax = 28;      // RINGBUF_TYPE_DATA_TYPE_LEN_MAX
inline constexpr uint32_t kRbTypePadding = 29;
inline constexpr uint32_t kRbTypeTimeExtend = 30;
inline constexpr uint32_t kRbTypeTimeStamp = 31;
inline constexpr uint32_t kRbDeltaBits = 27;        // TS_SHIFT
inline constexpr uint64_t kRbDeltaMask = (uint64_t{1} << kRbDeltaBits) - 1;
// Absolute stamps keep 59 bits; the top 5 come from the sub-buffer's stamp.
inline constexpr uint64_t kRbTimeStampMask = (uint64_t{1} << 59) - 1;
// Largest payload a type_len 1..28 event carries (RB_MAX_SMALL_DATA).
inline constexpr uint32_t kRbMaxSmallData = kRbTypeDataMax * 4;
// Flags in the commit word (kernel/trace/ring_buffer.c).
inline constexpr uint64_t kRbMissedEvents = uint64_t{1} << 31;  // RB_MISSED_EVENTS
inline constexpr uint64_t kRbMissedStored = uint64_t{1} << 30;  // RB_MISSED_STORED

struct SubBufferLayout {
  Endian endian = Endian::little;
  uint32_t commit_size = 8;   // the kernel's long: header_page's `commit` size
  uint32_t size = 4096;       // the whole sub-buffer, header included

  uint32_t header_size() const { return 8 + commit_size; }
  uint32_t capacity() const { return size - header_size(); }
  Status check() const;
};

// Bytes an event with `payload` bytes takes (header included), as
// rb_calculate_event_length() computes it.
size_t rb_event_size(size_t payload, bool force_long = false);

// One sub-buffer, written event by event. Each call fails (and writes
// nothing) when the record would not fit or a value does not fit its field.
class SubBufferWriter {
 public:
  SubBufferWriter(SubBufferLayout layout, uint64_t timestamp);

  const SubBufferLayout& layout() const { return layout_; }
  uint64_t timestamp() const { return timestamp_; }
  size_t used() const { return data_.size(); }          // data bytes so far
  size_t room() const { return layout_.capacity() - data_.size(); }

  // A data event; delta < 2^27. Payloads over 112 bytes (or with
  // force_long) use type_len 0 with the length in array[0]; payloads are
  // zero-padded to 4 bytes as the kernel does.
  Status event(uint32_t delta, Bytes payload, bool force_long = false);
  // type_len 30: delta split into 27 low bits and array[0] = delta >> 27.
  Status time_extend(uint64_t delta);
  // type_len 31: the low 59 bits of an absolute stamp.
  Status time_stamp(uint64_t ts);
  // type_len 29 with a non-zero delta: a discarded event of `length` bytes
  // (header included; >= 8, a multiple of 4), array[0] = length - 4.
  Status discarded(uint32_t delta, uint32_t length);
  // type_len 29 with delta 0 ("the rest of the page is empty"), counted in
  // commit. The kernel leaves it outside commit; readers must stop either way.
  Status null_padding();
  // Fills the rest of the sub-buffer as rb_reset_tail() does when an event
  // does not fit: a discarded event (delta 1) over the rest, counted in
  // commit; with fewer than 8 bytes left nothing (the kernel's delta-0
  // header there lies outside commit and is zeroed before user space reads).
  void close_tail();

  // Events were lost before this sub-buffer: sets commit bit 31, and with
  // a count, bit 30 and the count (a kernel long) after the data, when it
  // fits (ring_buffer_read_page()).
  void set_missed_events(std::optional<uint64_t> count) {
    missed_ = true;
    missed_count_ = count;
  }
  // Writes this value into `commit` as is (for corrupt inputs).
  void override_commit(uint64_t commit) { commit_override_ = commit; }

  // The sub-buffer, layout().size bytes, unused space zeroed.
  std::vector<uint8_t> finish() const;

 private:
  void put_header(uint32_t type_len, uint32_t delta);
  void put_u32(uint32_t v);

  SubBufferLayout layout_;
  uint64_t timestamp_;
  std::vector<uint8_t> data_;
  bool missed_ = false;
  std::optional<uint64_t> missed_count_;
  std::optional<uint64_t> commit_override_;
};

// One CPU's ring buffer: events in time order packed into sub-buffers the
// way the kernel writer fills them: each sub-buffer is stamped with its first
// event's time (delta 0), later events carry deltas, a time extend precedes
// an event whose delta does not fit 27 bits, and a full sub-buffer is closed
// with padding.
class CpuBufferWriter {
 public:
  explicit CpuBufferWriter(SubBufferLayout layout) : layout_(layout) {}

  // ts must not go backwards; an event that cannot fit an empty
  // sub-buffer is an error.
  Status add(uint64_t ts, Bytes payload);
  // Events were lost before the next one: the current sub-buffer ends and
  // the next carries the missed-events flag (and `count` if given).
  void lose_events(std::optional<uint64_t> count);
  // Ends the current sub-buffer where its data ends, as when the reader
  // takes a partly written page; the next event starts a new one.
  void break_page();

  size_t pages() const { return pages_.size() + (page_ ? 1 : 0); }
  // All sub-buffers, concatenated.
  std::vector<uint8_t> finish();

 private:
  Status open_page(uint64_t ts);

  SubBufferLayout layout_;
  std::optional<SubBufferWriter> page_;
  std::vector<std::vector<uint8_t>> pages_;
  uint64_t last_ts_ = 0;
  bool pending_missed_ = false;
  std::optional<uint64_t> pending_count_;
};

}  // namespace tracebed::decode
