// One CPU's records of a trace.dat buffer, in order, for the merge: reads
// the CPU's data a window of pages (uncompressed, mapped or read) or a chunk
// (compressed) at a time, keeps the last three so the record returned last
// and a peeked one stay valid, and stamps each record with trace-cmd's
// corrected time. Private to the decoder (merge.cc).
#pragma once

#include <cstdint>
#include <memory>
#include <optional>

#include "framework/base/result.h"
#include "framework/decode/chunk_pipeline.h"
#include "framework/decode/data_file.h"
#include "framework/decode/decompress.h"
#include "framework/decode/merge.h"
#include "framework/decode/page_reader.h"
#include "framework/decode/record.h"

namespace tracebed::decode {

class CpuCursor {
 public:
  // `pipeline`: where this CPU's chunks come from, as its lane `lane`; null: read here.
  // `cursors`: how many CPUs of all buffers are read side by side.
  CpuCursor(const StreamSetup& setup, const CpuSpan& span, uint16_t buffer, size_t index, ChunkPipeline* pipeline,
            size_t lane, size_t cursors);

  int cpu() const { return span_.cpu; }
  uint16_t buffer() const { return head_.buffer; }
  bool primed() const { return primed_; }
  bool done() const { return done_; }
  const Record& head() const { return head_; }
  Record& head() { return head_; }
  const std::optional<Error>& error() const { return error_; }

  // Decodes the first record; false if there is none or on error.
  bool prime() {
    primed_ = true;
    return advance();
  }

  // Decodes the next record into head(); false at the end or on error.
  // The common case, a record on the current sub-buffer, is inline in the
  // merge; the next page and errors are not.
  [[gnu::always_inline]] bool advance() {
    PageEvent ev;
    if (page_.next(ev) == PageStep::event) [[likely]] {
      set_head(ev);
      return true;
    }
    return advance_to_next_page();
  }

 private:
  void set_head(const PageEvent& ev) {
    head_.ts = time_.apply(sync_ ? sync_->apply(ev.ts, index_) : ev.ts);
    head_.data = ev.payload;
    head_.offset = page_base_ + ev.offset;
    if (ev.first && page_.missed_events() != 0) {
      head_.missed_events = page_.missed_events();
      head_.missed_not_at_data_start = ev.offset != layout_.header_size();
    } else {
      head_.missed_events = 0;
      head_.missed_not_at_data_start = false;
    }
  }

  [[gnu::noinline]] bool advance_to_next_page();

  struct Block {
    ByteBuffer bytes;                       // chunks decompressed and windows read land here
    std::shared_ptr<const uint8_t> mapped;  // or a window of the file, mapped
    const uint8_t* data = nullptr;          // bytes.data() or mapped.get()
    size_t len = 0;
    uint64_t base = 0;  // offset of data[0]: in the file, or in the CPU's uncompressed data
  };

  // Block::base of the CPU's first byte: its file offset, or 0 for uncompressed-stream offsets.
  uint64_t stream_base() const { return span_.compressed ? 0 : span_.offset; }

  bool fail(Error e);
  Error wrap(const Error& e) const;
  // Loads the next sub-buffer into page_; false at the end or on error.
  bool next_page();
  Block& next_slot();
  // The next window (uncompressed) or chunk (compressed) into a ring slot.
  bool load_block();
  bool load_window();
  bool load_chunk();

  // Three blocks: the one holding the record returned last, the one holding
  // a peeked record, and the one being decoded.
  static constexpr int kRing = 3;
  // Mapped windows held by all cursors together, at most (pages of the
  // file mapped count in the process's resident memory).
  static constexpr uint64_t kMappedBytes = uint64_t{12} << 20;

  ChunkPipeline* pipeline_;   // null: decompress here
  size_t lane_;
  const DataFile* file_;
  const TimeSync* sync_;   // guest files: TIME_SHIFT samples (top-level buffer only)
  size_t index_;           // position in the buffer's CPU list (TIME_SHIFT is by index)
  PageLayout layout_;
  TimeCorrection time_;
  Decompressor codec_;
  uint32_t page_size_;
  CpuSpan span_;
  uint64_t window_ = 0;
  uint64_t map_window_ = 0;  // 0: read windows of window_ bytes
  uint64_t limit_ = 0;      // bytes of this CPU's data to read

  PageReader page_;
  uint64_t page_base_ = 0;
  Record head_;
  bool primed_ = false;
  bool done_ = false;
  std::optional<Error> error_;

  Block ring_[kRing];
  int cur_ = -1;
  size_t page_pos_ = 0;
  uint64_t next_read_ = 0;   // file offset of the next window or chunk header
  uint64_t data_left_ = 0;   // uncompressed spans: bytes not yet read
  uint32_t chunks_left_ = 0;
  uint64_t uoffset_ = 0;     // compressed spans: uncompressed offset of the next chunk
  uint64_t chunk_offset_ = 0;
  uint32_t chunk_index_ = 0;   // next chunk to load
  uint32_t loaded_chunk_ = 0;  // the chunk the current page came from
  ByteBuffer zbuf_;
};

}  // namespace tracebed::decode
