#include "framework/decode/cpu_cursor.h"

#include <fmt/format.h>

#include <algorithm>

namespace tracebed::decode {

uint64_t TimeSync::apply(uint64_t ts, size_t cpu_index) const {
  if (cpu_index >= cpus.size()) return ts;
  const std::vector<Sample>& s = cpus[cpu_index];
  if (s.empty()) return ts;
  if (s.size() == 1) return ts + static_cast<uint64_t>(s[0].offset);
  // trace-input.c timestamp_correction_calc(), in its integer types.
  auto calc = [&](const Sample& min, const Sample& max) -> uint64_t {
    int64_t tscor;
    if (flags & 1) {
      const int64_t delta = max.time - min.time;
      const int64_t off = (static_cast<int64_t>(ts) - min.time) * (max.offset - min.offset);
      tscor = delta ? min.offset + (off + delta / 2) / delta : min.offset;
    } else {
      tscor = min.offset;
    }
    const uint64_t scaled = (ts * static_cast<uint64_t>(min.scaling)) >> (static_cast<uint64_t>(min.fraction) & 63);
    return tscor < 0 ? scaled - static_cast<uint64_t>(-tscor) : scaled + static_cast<uint64_t>(tscor);
  };
  if (s.size() == 2) return calc(s[0], s[1]);
  const int64_t t = static_cast<int64_t>(ts);
  if (ts <= static_cast<uint64_t>(s[0].time)) return calc(s[0], s[1]);
  if (ts >= static_cast<uint64_t>(s.back().time)) return calc(s[s.size() - 2], s.back());
  // Binary search as trace-input.c does it (it lands on the sample at or before ts).
  int64_t lo = 0, hi = static_cast<int64_t>(s.size()) - 1, mid = (lo + hi) / 2;
  while (lo <= hi) {
    if (t < s[mid].time)
      hi = mid - 1;
    else if (t > s[mid].time)
      lo = mid + 1;
    else
      break;
    mid = (lo + hi) / 2;
  }
  if (mid < 0) mid = 0;
  if (static_cast<size_t>(mid) + 1 >= s.size()) mid = static_cast<int64_t>(s.size()) - 2;
  return calc(s[mid], s[mid + 1]);
}

CpuCursor::CpuCursor(const StreamSetup& setup, const CpuSpan& span, uint16_t buffer, size_t index,
                     ChunkPipeline* pipeline, size_t lane, size_t cursors)
    : pipeline_(span.compressed ? pipeline : nullptr),
      lane_(lane),
      file_(setup.file.get()),
      sync_(buffer == 0 ? setup.sync.get() : nullptr),
      index_(index),
      layout_(setup.layout),
      time_(setup.time),
      codec_(setup.codec),
      page_size_(span.page_size ? span.page_size : setup.page_size),
      span_(span),
      next_read_(span.compressed ? span.offset + 4 : span.offset),
      data_left_(span.compressed ? 0 : span.size),
      chunks_left_(span.compressed ? span.chunks : 0) {
  head_.cpu = span.cpu;
  head_.buffer = buffer;
  limit_ = setup.as_trace_cmd ? span.trace_cmd_size : ~uint64_t{0};
  const uint64_t want = uint64_t{std::max<uint32_t>(setup.window_pages, 1)} * page_size_;
  const uint64_t cap = std::max<uint64_t>(page_size_, uint64_t{1} << 20);
  window_ = std::max<uint64_t>(page_size_, std::min(want, cap) / page_size_ * page_size_);
  if (setup.map_data && !span.compressed) {
    // Mapped windows are bigger than reads (each is three system calls),
    // but every CPU keeps kRing of them in memory: so many CPUs map less.
    const uint64_t share = kMappedBytes / (kRing * std::max<size_t>(cursors, 1));
    map_window_ = std::max(window_, std::min(share, cap) / page_size_ * page_size_);
  }
}

bool CpuCursor::advance_to_next_page() {
  PageEvent ev;
  for (;;) {
    const PageStep s = page_.next(ev);
    if (s == PageStep::event) {
      set_head(ev);
      return true;
    }
    if (s == PageStep::error) return fail(wrap(page_.error()));
    if (!next_page()) return false;
  }
}

bool CpuCursor::fail(Error e) {
  error_ = std::move(e);
  done_ = true;
  return false;
}

Error CpuCursor::wrap(const Error& e) const {
  if (!span_.compressed) return e;
  return error_at(chunk_offset_, fmt::format("cpu {} chunk {}: uncompressed {}", span_.cpu, loaded_chunk_, e.message));
}

bool CpuCursor::next_page() {
  // Bounded by the data: every block is consumed page by page.
  for (;;) {
    if (cur_ >= 0 && page_pos_ < ring_[cur_].len) {
      const Block& b = ring_[cur_];
      if (b.base + page_pos_ - stream_base() >= limit_) {  // trace-cmd stops reading here
        done_ = true;
        return false;
      }
      const size_t n = std::min<size_t>(page_size_, b.len - page_pos_);
      page_base_ = b.base + page_pos_;
      const Bytes page(b.data + page_pos_, n);
      // Every record of this page keeps the bytes from the page's start to
      // the end of the loaded block: libtraceevent reads a short record's
      // fixed arrays on into whatever follows in its chunk or mapping,
      // which is the next sub-buffer (-R prints them; see widened()).
      head_.sub_buffer = Bytes(b.data + page_pos_, b.len - page_pos_);
      Status st = page_.load(page, layout_, page_base_);
      page_pos_ += page_size_;
      if (!st.ok()) return fail(wrap(st.error()));
      return true;
    }
    if (!load_block()) return false;
  }
}

CpuCursor::Block& CpuCursor::next_slot() {
  cur_ = (cur_ + 1) % kRing;
  page_pos_ = 0;
  return ring_[cur_];
}

bool CpuCursor::load_block() { return span_.compressed ? load_chunk() : load_window(); }

bool CpuCursor::load_window() {
  if (data_left_ == 0) {
    done_ = true;
    return false;
  }
  Block& b = next_slot();
  b.mapped.reset();
  uint64_t n = std::min(data_left_, map_window_ ? map_window_ : window_);
  if (map_window_) {
    // Mapped, the page cache is read in place instead of copied (the
    // copy was a sixth of iterating a v6 file).
    Result<std::shared_ptr<const uint8_t>> m = file_->map(next_read_, n, "cpu data");
    if (m.ok()) {
      b.mapped = std::move(m).value();
      b.data = b.mapped.get();
    } else {
      map_window_ = 0;  // read from here on; a range the file lacks fails the read with its offset
      n = std::min(data_left_, window_);
    }
  }
  if (!b.mapped) {
    if (b.bytes.size() < n) b.bytes.resize(n);
    Status st = file_->read(next_read_, std::span<uint8_t>(b.bytes.data(), n), fmt::format("cpu {} data", span_.cpu));
    if (!st.ok()) return fail(st.error());
    b.data = b.bytes.data();
  }
  b.len = n;
  b.base = next_read_;
  next_read_ += n;
  data_left_ -= n;
  return true;
}

bool CpuCursor::load_chunk() {
  if (chunks_left_ == 0) {
    done_ = true;
    return false;
  }
  Block& b = next_slot();
  Result<ChunkRead> got = pipeline_ ? pipeline_->take(lane_, codec_, zbuf_, b.bytes)
                                    : read_chunk(*file_, codec_, layout_.endian, span_, next_read_, chunk_index_,
                                                 page_size_, chunks_left_ <= 1, zbuf_, b.bytes);
  if (!got.ok()) return fail(got.error());
  b.data = b.bytes.data();
  b.len = got->usize;
  b.base = uoffset_;
  uoffset_ += got->usize;
  chunk_offset_ = next_read_;
  loaded_chunk_ = chunk_index_++;
  next_read_ += 8 + uint64_t{got->zsize};
  --chunks_left_;
  return true;
}

}  // namespace tracebed::decode
