#include "framework/decode/page_writer.h"

#include <algorithm>
#include <cstring>

namespace tracebed::decode {
namespace {

constexpr uint32_t kRbEventHeader = 4;   // RB_EVNT_HDR_SIZE
constexpr uint32_t kRbMinEvent = 8;      // RB_EVNT_MIN_SIZE

size_t align4(size_t n) { return (n + 3) & ~size_t{3}; }

void store(uint8_t* p, uint64_t v, size_t size, Endian e) {
  for (size_t i = 0; i < size; ++i) {
    size_t shift = e == Endian::little ? i : size - 1 - i;
    p[i] = static_cast<uint8_t>(v >> (8 * shift));
  }
}

}  // namespace

Status SubBufferLayout::check() const {
  if (commit_size != 4 && commit_size != 8)
    return Error{fmt::format("sub-buffer commit size {} is not 4 or 8", commit_size)};
  if (size < header_size() + kRbMinEvent || size % 4 != 0)
    return Error{fmt::format("sub-buffer size {} is too small or not a multiple of 4", size)};
  return {};
}

size_t rb_event_size(size_t payload, bool force_long) {
  // rb_calculate_event_length(): a zero-length payload still takes a word.
  size_t length = align4(std::max<size_t>(payload, 1));
  if (length > kRbMaxSmallData || force_long) length += 4;  // array[0]
  return length + kRbEventHeader;
}

SubBufferWriter::SubBufferWriter(SubBufferLayout layout, uint64_t timestamp)
    : layout_(layout), timestamp_(timestamp) {
  data_.reserve(layout_.capacity());
}

void SubBufferWriter::put_u32(uint32_t v) {
  uint8_t b[4];
  store(b, v, 4, layout_.endian);
  data_.insert(data_.end(), b, b + 4);
}

void SubBufferWriter::put_header(uint32_t type_len, uint32_t delta) {
  // struct ring_buffer_event { u32 type_len:5, time_delta:27; }: bitfields
  // fill from the low bits on little-endian ABIs, from the high bits on
  // big-endian ones.
  uint32_t word = layout_.endian == Endian::little ? (delta << 5) | type_len
                                                   : (type_len << 27) | delta;
  put_u32(word);
}

Status SubBufferWriter::event(uint32_t delta, Bytes payload, bool force_long) {
  if (delta > kRbDeltaMask)
    return Error{fmt::format("event delta {} does not fit 27 bits; add a time extend", delta)};
  size_t total = rb_event_size(payload.size(), force_long);
  if (total > room())
    return Error{fmt::format("event of {} bytes does not fit: {} bytes left", total, room())};
  size_t padded = align4(std::max<size_t>(payload.size(), 1));
  if (padded > kRbMaxSmallData || force_long) {
    put_header(kRbTypeDataLong, delta);
    put_u32(static_cast<uint32_t>(padded + 4));  // array[0] counts itself
  } else {
    put_header(static_cast<uint32_t>(padded / 4), delta);
  }
  data_.insert(data_.end(), payload.begin(), payload.end());
  data_.resize(data_.size() + (padded - payload.size()), 0);
  return {};
}

Status SubBufferWriter::time_extend(uint64_t delta) {
  if (room() < 8) return Error{fmt::format("time extend does not fit: {} bytes left", room())};
  if ((delta >> kRbDeltaBits) > UINT32_MAX)
    return Error{fmt::format("time extend delta {:#x} exceeds 59 bits", delta)};
  put_header(kRbTypeTimeExtend, static_cast<uint32_t>(delta & kRbDeltaMask));
  put_u32(static_cast<uint32_t>(delta >> kRbDeltaBits));
  return {};
}

Status SubBufferWriter::time_stamp(uint64_t ts) {
  if (room() < 8) return Error{fmt::format("time stamp does not fit: {} bytes left", room())};
  ts &= kRbTimeStampMask;
  put_header(kRbTypeTimeStamp, static_cast<uint32_t>(ts & kRbDeltaMask));
  put_u32(static_cast<uint32_t>(ts >> kRbDeltaBits));
  return {};
}

Status SubBufferWriter::discarded(uint32_t delta, uint32_t length) {
  if (delta == 0 || delta > kRbDeltaMask)
    return Error{fmt::format("discarded event delta {} must be 1 .. 2^27-1", delta)};
  if (length < kRbMinEvent || length % 4 != 0)
    return Error{fmt::format("discarded event length {} must be >= 8 and a multiple of 4", length)};
  if (length > room())
    return Error{fmt::format("discarded event of {} bytes does not fit: {} bytes left", length, room())};
  put_header(kRbTypePadding, delta);
  put_u32(length - kRbEventHeader);
  data_.resize(data_.size() + (length - 8), 0);
  return {};
}

Status SubBufferWriter::null_padding() {
  if (room() < 4) return Error{fmt::format("padding does not fit: {} bytes left", room())};
  put_header(kRbTypePadding, 0);
  return {};
}

void SubBufferWriter::close_tail() {
  // rb_reset_tail(): with room for a minimal event, a discarded event with
  // delta 1 covers the rest and the page's write (hence commit) reaches the
  // end; otherwise the padding header stays outside commit and
  // ring_buffer_read_page() zeroes it before user space sees the page.
  if (room() >= kRbMinEvent) {
    size_t rest = room();
    put_header(kRbTypePadding, 1);
    put_u32(static_cast<uint32_t>(rest - kRbEventHeader));
    data_.resize(layout_.capacity(), 0);
  }
}

std::vector<uint8_t> SubBufferWriter::finish() const {
  std::vector<uint8_t> page(layout_.size, 0);
  store(page.data(), timestamp_, 8, layout_.endian);
  uint64_t commit = data_.size();
  std::memcpy(page.data() + layout_.header_size(), data_.data(), data_.size());
  if (missed_) {
    commit |= kRbMissedEvents;
    if (missed_count_ && room() >= layout_.commit_size) {
      store(page.data() + layout_.header_size() + data_.size(), *missed_count_,
            layout_.commit_size, layout_.endian);
      commit |= kRbMissedStored;
    }
  }
  if (commit_override_) commit = *commit_override_;
  store(page.data() + 8, commit, layout_.commit_size, layout_.endian);
  return page;
}

Status CpuBufferWriter::open_page(uint64_t ts) {
  if (page_) {
    page_->close_tail();
    pages_.push_back(page_->finish());
  }
  page_.emplace(layout_, ts);
  if (pending_missed_) {
    page_->set_missed_events(pending_count_);
    pending_missed_ = false;
    pending_count_.reset();
  }
  return {};
}

Status CpuBufferWriter::add(uint64_t ts, Bytes payload) {
  TRACEBED_TRY(layout_.check());
  if (page_ && ts < last_ts_)
    return Error{fmt::format("event time {} is before the previous event's {}", ts, last_ts_)};
  size_t size = rb_event_size(payload.size());
  if (size > layout_.capacity())
    return Error{fmt::format("event of {} bytes exceeds the sub-buffer capacity {}", size,
                             layout_.capacity())};
  uint64_t delta = page_ ? ts - last_ts_ : 0;
  size_t need = size + (delta > kRbDeltaMask ? 8 : 0);
  if (!page_ || need > page_->room()) {
    TRACEBED_TRY(open_page(ts));
    delta = 0;
  }
  if (delta > kRbDeltaMask) {
    TRACEBED_TRY(page_->time_extend(delta));
    delta = 0;
  }
  TRACEBED_TRY(page_->event(static_cast<uint32_t>(delta), payload));
  last_ts_ = ts;
  return {};
}

void CpuBufferWriter::lose_events(std::optional<uint64_t> count) {
  break_page();
  pending_missed_ = true;
  pending_count_ = count;
}

void CpuBufferWriter::break_page() {
  // The reader took a partly written page (ring_buffer_read_page() swaps it
  // out): no padding, commit stays where the data ends.
  if (!page_) return;
  pages_.push_back(page_->finish());
  page_.reset();
}

std::vector<uint8_t> CpuBufferWriter::finish() {
  if (page_) {
    pages_.push_back(page_->finish());
    page_.reset();
  }
  std::vector<uint8_t> out;
  out.reserve(pages_.size() * layout_.size);
  for (const auto& p : pages_) out.insert(out.end(), p.begin(), p.end());
  pages_.clear();
  return out;
}

}  // namespace tracebed::decode
