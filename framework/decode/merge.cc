#include "framework/decode/merge.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <condition_variable>
#include <cstring>
#include <mutex>
#include <system_error>
#include <thread>

#include "framework/base/cpus.h"

namespace tracebed {

// ---------------------------------------------------------------------------
// DataFile

Result<std::shared_ptr<DataFile>> DataFile::open(const std::string& path) {
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return Error{fmt::format("cannot open: {}", std::strerror(errno))};
  struct stat st;
  if (fstat(fd, &st) != 0) {
    int err = errno;
    ::close(fd);
    return Error{fmt::format("cannot stat: {}", std::strerror(err))};
  }
  if (S_ISDIR(st.st_mode)) {
    ::close(fd);
    return Error{"is a directory"};
  }
  return std::shared_ptr<DataFile>(new DataFile(fd, static_cast<uint64_t>(st.st_size), path));
}

DataFile::~DataFile() {
  if (fd_ >= 0) ::close(fd_);
}

Status DataFile::read(uint64_t offset, std::span<uint8_t> out, std::string_view what) const {
  if (offset > size_ || out.size() > size_ - offset)
    return error_at(offset, fmt::format("{}: {} bytes exceed file size {}", what, out.size(), size_));
  size_t done = 0;
  // Bounded: each pass reads at least one byte or fails.
  while (done < out.size()) {
    ssize_t n = ::pread(fd_, out.data() + done, out.size() - done, static_cast<off_t>(offset + done));
    if (n < 0) {
      if (errno == EINTR) continue;
      return error_at(offset + done, fmt::format("{}: read failed: {}", what, std::strerror(errno)));
    }
    if (n == 0) return error_at(offset + done, fmt::format("{}: file ended early (was it truncated?)", what));
    done += static_cast<size_t>(n);
  }
  return {};
}

Result<std::shared_ptr<const uint8_t>> DataFile::map(uint64_t offset, uint64_t size, std::string_view what) const {
  if (offset > size_ || size > size_ - offset || size == 0)
    return error_at(offset, fmt::format("{}: {} bytes exceed file size {}", what, size, size_));
  const uint64_t page = static_cast<uint64_t>(::sysconf(_SC_PAGESIZE));
  const uint64_t start = offset / page * page;
  const size_t length = static_cast<size_t>(offset + size - start);
  // Populated: every caller reads the whole range, and one call maps it
  // cheaper than a fault per 64 KiB.
  void* base = ::mmap(nullptr, length, PROT_READ, MAP_PRIVATE | MAP_POPULATE, fd_, static_cast<off_t>(start));
  if (base == MAP_FAILED) return error_at(offset, fmt::format("{}: mmap failed: {}", what, std::strerror(errno)));
  std::shared_ptr<const uint8_t> mapping(static_cast<const uint8_t*>(base),
                                         [length](const uint8_t* p) { ::munmap(const_cast<uint8_t*>(p), length); });
  // A file cut short since it was opened would fault on access, not fail a
  // read: check that the range is still there.
  struct stat st;
  if (::fstat(fd_, &st) != 0 || static_cast<uint64_t>(st.st_size) < offset + size)
    return error_at(offset, fmt::format("{}: file ended early (was it truncated?)", what));
  return std::shared_ptr<const uint8_t>(mapping, mapping.get() + (offset - start));
}

// ---------------------------------------------------------------------------
// Chunks

namespace {

// trace-cmd writes chunks of 10 sub-buffers; anything near this is corrupt.
constexpr uint64_t kMaxChunkBytes = uint64_t{256} << 20;

}  // namespace

Status scan_chunks(const DataFile& file, CpuSpan& cpu, Endian endian) {
  uint8_t b[8];
  TRACEBED_TRY(file.read(cpu.offset, std::span<uint8_t>(b, 4), fmt::format("cpu {} chunk count", cpu.cpu)));
  const uint32_t count = load<uint32_t>(b, endian);
  if (count > cpu.size / 8)
    return error_at(cpu.offset, fmt::format("cpu {}: {} chunks cannot fit in {} bytes", cpu.cpu, count, cpu.size));
  // trace-cmd's stored size leaves out the 4-byte chunk count.
  const uint64_t end = std::min(file.size(), cpu.offset + 4 + cpu.size);
  uint64_t pos = cpu.offset + 4;
  uint64_t total = 0;
  auto at = std::make_shared<std::vector<ChunkHeader>>();
  at->reserve(count);
  for (uint32_t i = 0; i < count; ++i) {
    if (end - pos < 8)
      return error_at(pos, fmt::format("cpu {} chunk {}: header needs 8 bytes, only {} left in the cpu's data",
                                       cpu.cpu, i, end - pos));
    TRACEBED_TRY(file.read(pos, std::span<uint8_t>(b, 8), fmt::format("cpu {} chunk {} header", cpu.cpu, i)));
    const uint32_t zsize = load<uint32_t>(b, endian);
    const uint32_t usize = load<uint32_t>(b + 4, endian);
    if (zsize > end - pos - 8)
      return error_at(pos, fmt::format("cpu {} chunk {}: compressed size {} exceeds the {} bytes left in the cpu's data",
                                       cpu.cpu, i, zsize, end - pos - 8));
    if (usize > kMaxChunkBytes)
      return error_at(pos, fmt::format("cpu {} chunk {}: uncompressed size {} is implausible (limit {})", cpu.cpu, i,
                                       usize, kMaxChunkBytes));
    at->push_back(ChunkHeader{pos, zsize, usize});
    pos += 8 + zsize;
    total += usize;
  }
  cpu.chunks = count;
  cpu.data_size = total;
  cpu.chunk_at = std::move(at);
  return {};
}

uint64_t TimeCorrection::mul_shift(uint64_t ts) const {
  // trace-input.c mul_u64_u32_shr(), with its int mult sign-extended to
  // unsigned long long as the C code does.
  const uint64_t mul = static_cast<uint64_t>(static_cast<int64_t>(tsc_mult));
  if (tsc_shift > 32) return static_cast<uint64_t>((static_cast<unsigned __int128>(ts) * mul) >> tsc_shift);
  const uint64_t al = static_cast<uint32_t>(ts);
  const uint64_t ah = ts >> 32;
  uint64_t ret = (al * mul) >> tsc_shift;
  if (ah) ret += (ah * mul) << (32 - tsc_shift);
  return ret;
}

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

// ---------------------------------------------------------------------------
// Reading one compressed chunk, here or on the helper thread

namespace {

struct ChunkRead {
  uint32_t zsize = 0, usize = 0;
};

// Reads and decompresses the chunk whose header is at `at` into `out`
// (grown as needed), checking it lies inside the CPU's data. `last`: the
// CPU's last chunk, which may hold a partial sub-buffer. The header is read
// from the file unless scan_chunks kept it.
Result<ChunkRead> read_chunk(const DataFile& file, Decompressor& codec, Endian endian, const CpuSpan& span,
                             uint64_t at, uint32_t index, uint32_t page_size, bool last, ByteBuffer& zbuf,
                             ByteBuffer& out) {
  const std::string what = fmt::format("cpu {} chunk {}", span.cpu, index);
  ChunkRead c;
  if (span.chunk_at && index < span.chunk_at->size() && (*span.chunk_at)[index].at == at) {
    c.zsize = (*span.chunk_at)[index].zsize;
    c.usize = (*span.chunk_at)[index].usize;
  } else {
    uint8_t h[8];
    TRACEBED_TRY(file.read(at, std::span<uint8_t>(h, 8), what));
    c.zsize = load<uint32_t>(h, endian);
    c.usize = load<uint32_t>(h + 4, endian);
  }
  const uint64_t span_end = span.offset + 4 + span.size;  // the size leaves out the chunk count
  if (c.zsize > span_end - std::min(span_end, at + 8))
    return error_at(at, fmt::format("{}: compressed size {} exceeds the cpu's data", what, c.zsize));
  if (c.usize > kMaxChunkBytes)
    return error_at(at, fmt::format("{}: uncompressed size {} is implausible", what, c.usize));
  if (c.usize % page_size != 0 && !last)
    return error_at(at, fmt::format("{}: uncompressed size {} is not a multiple of the sub-buffer size {}", what,
                                    c.usize, page_size));
  zbuf.resize(c.zsize);
  TRACEBED_TRY(file.read(at + 8, zbuf, what));
  if (out.size() < c.usize) out.resize(c.usize);
  TRACEBED_TRY(codec.run(zbuf, std::span<uint8_t>(out.data(), c.usize), fmt::format("offset {:#x}: {}", at, what)));
  return c;
}

// One helper thread that decompresses the chunks of every compressed CPU
// ahead of the thread that merges and formats, up to four chunks per CPU.
// The reader takes each CPU's chunks in order: one the helper finished, or,
// when the helper has not started it, it decompresses that one itself; while
// the helper finishes the one it wants, it does the helper's next. Neither
// thread idles while there are chunks to do (iteration is mostly zstd, a
// report mostly text).
//
// Waking a sleeping thread costs tens of µs on a VM, as much as a chunk: the
// helper sleeps only when no CPU can take another chunk and is woken when
// one falls to half its depth, and the reader spins for a while on a chunk
// the helper is finishing before it sleeps.
class ChunkPipeline {
 public:
  static constexpr uint32_t kMaxDepth = 4;
  // Decompressed chunks held ahead, over all CPUs, at most (a file of many
  // CPUs with large sub-buffers holds fewer per CPU; never fewer than one).
  static constexpr uint64_t kAheadBytes = uint64_t{32} << 20;

  // `chunk_bytes`: the decompressed size of one chunk of every lane, summed.
  ChunkPipeline(Codec codec, const DataFile* file, Endian endian, uint64_t chunk_bytes)
      : codec_(codec),
        file_(file),
        endian_(endian),
        depth_(static_cast<uint32_t>(std::clamp<uint64_t>(kAheadBytes / std::max<uint64_t>(chunk_bytes, 1), 1,
                                                          kMaxDepth))) {}
  ~ChunkPipeline() {
    if (!thread_.joinable()) return;
    {
      std::lock_guard lock(mu_);
      stop_ = true;
    }
    wake_.notify_all();
    thread_.join();
  }
  ChunkPipeline(const ChunkPipeline&) = delete;
  ChunkPipeline& operator=(const ChunkPipeline&) = delete;

  // Before start(): a compressed CPU whose chunks the helper may read.
  size_t add_lane(const CpuSpan& span, uint32_t page_size) {
    lanes_.push_back(std::make_unique<Lane>(span, page_size));
    return lanes_.size() - 1;
  }
  // Throws std::system_error when no thread is to be had.
  void start() { thread_ = std::thread([this] { run(); }); }

  // The lane's next chunk, decompressed into `out`: the helper's, or read
  // here with `codec` and `zbuf` if the helper has not claimed it.
  Result<ChunkRead> take(size_t lane, Decompressor& codec, ByteBuffer& zbuf, ByteBuffer& out) {
    Lane& l = *lanes_[lane];
    std::unique_lock lock(mu_);
    const uint32_t i = l.taken;
    if (i >= l.claimed) {
      l.claimed = i + 1;
      lock.unlock();
      Result<ChunkRead> r = read_lane_chunk(l, i, codec, zbuf, out);
      lock.lock();
      l.taken = i + 1;
      poke_helper(l);
      return r;
    }
    Slot& slot = l.slots[i % depth_];
    // The helper has it. Rather than wait, do the next chunk it would do.
    while (!slot.ready.load(std::memory_order_acquire)) {
      if (Lane* other = next_lane()) {
        fill_next(*other, codec, zbuf, lock);
        continue;
      }
      lock.unlock();
      spin_until_ready(slot);
      lock.lock();
      if (slot.ready.load(std::memory_order_acquire)) break;
      l.reader_waiting = true;
      done_.wait(lock);
      l.reader_waiting = false;
    }
    std::swap(out, slot.out);
    Result<ChunkRead> r = std::move(*slot.result);
    slot.result.reset();
    slot.ready.store(false, std::memory_order_relaxed);
    l.taken = i + 1;
    poke_helper(l);
    return r;
  }

 private:
  struct Slot {
    ByteBuffer out;
    std::optional<Result<ChunkRead>> result;
    std::atomic<bool> ready{false};  // result and out are the helper's until set
  };
  struct Lane {
    Lane(const CpuSpan& s, uint32_t p) : span(s), page_size(p) {}
    CpuSpan span;
    uint32_t page_size;
    uint32_t claimed = 0;  // chunks the helper or the reader has started
    uint32_t taken = 0;    // chunks the reader has taken; chunk i sits in slots[i % depth_]
    bool failed = false;   // the helper met a bad chunk here: it goes no further
    bool reader_waiting = false;
    Slot slots[kMaxDepth];
  };

  Result<ChunkRead> read_lane_chunk(const Lane& l, uint32_t i, Decompressor& codec, ByteBuffer& zbuf,
                                    ByteBuffer& out) const {
    return read_chunk(*file_, codec, endian_, l.span, (*l.span.chunk_at)[i].at, i, l.page_size, i + 1 == l.span.chunks,
                      zbuf, out);
  }

  // Under mu_: the helper sleeps and this lane has fallen to half its depth.
  void poke_helper(const Lane& l) {
    if (helper_idle_ && !l.failed && l.claimed < l.span.chunks && l.claimed - l.taken <= depth_ / 2)
      wake_.notify_one();
  }

  // A chunk takes 20-60 µs to decompress; sleeping and being woken costs
  // about as much, so spin first (bounded: 200 µs).
  static void spin_until_ready(const Slot& slot) {
    const auto give_up = std::chrono::steady_clock::now() + std::chrono::microseconds(200);
    while (!slot.ready.load(std::memory_order_acquire)) {
      for (int k = 0; k < 64 && !slot.ready.load(std::memory_order_acquire); ++k) {
#if defined(__x86_64__) || defined(__i386__)
        __builtin_ia32_pause();
#endif
      }
      if (std::chrono::steady_clock::now() > give_up) return;
    }
  }

  // The lane the reader will want soonest: the one with the fewest chunks ready.
  Lane* next_lane() {
    Lane* best = nullptr;
    for (auto& l : lanes_) {
      if (l->failed || l->claimed >= l->span.chunks || l->claimed >= l->taken + depth_) continue;
      if (!best || l->claimed - l->taken < best->claimed - best->taken) best = l.get();
    }
    return best;
  }

  void run() {
    Decompressor codec(codec_);
    ByteBuffer zbuf;
    std::unique_lock lock(mu_);
    while (!stop_) {
      Lane* l = next_lane();
      if (!l) {
        helper_idle_ = true;
        wake_.wait(lock);
        helper_idle_ = false;
        continue;
      }
      fill_next(*l, codec, zbuf, lock);
    }
  }

  // Under mu_, released while decompressing: claims the lane's next chunk
  // and decompresses it into its slot.
  void fill_next(Lane& l, Decompressor& codec, ByteBuffer& zbuf, std::unique_lock<std::mutex>& lock) {
    const uint32_t i = l.claimed++;
    Slot& slot = l.slots[i % depth_];
    lock.unlock();
    Result<ChunkRead> r = read_lane_chunk(l, i, codec, zbuf, slot.out);
    lock.lock();
    if (!r.ok()) l.failed = true;
    slot.result = std::move(r);
    slot.ready.store(true, std::memory_order_release);
    if (l.reader_waiting) done_.notify_all();
  }

  Codec codec_;
  const DataFile* file_;
  Endian endian_;
  uint32_t depth_;  // chunks ahead per lane: 1 .. kMaxDepth
  std::vector<std::unique_ptr<Lane>> lanes_;  // fixed once the helper runs
  std::mutex mu_;
  std::condition_variable wake_, done_;
  bool helper_idle_ = false;
  bool stop_ = false;
  std::thread thread_;
};

}  // namespace

// ---------------------------------------------------------------------------
// One CPU

namespace {

class CpuCursor {
 public:
  // `pipeline`: where this CPU's chunks come from, as its lane `lane`; null: read here.
  // `cursors`: how many CPUs of all buffers are read side by side.
  CpuCursor(const StreamSetup& setup, const CpuSpan& span, uint16_t buffer, size_t index, ChunkPipeline* pipeline,
            size_t lane, size_t cursors)
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

  [[gnu::noinline]] bool advance_to_next_page() {
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

  struct Block {
    ByteBuffer bytes;                       // chunks decompressed and windows read land here
    std::shared_ptr<const uint8_t> mapped;  // or a window of the file, mapped
    const uint8_t* data = nullptr;          // bytes.data() or mapped.get()
    size_t len = 0;
    uint64_t base = 0;  // offset of data[0]: in the file, or in the CPU's uncompressed data
  };

  // Block::base of the CPU's first byte: its file offset, or 0 for uncompressed-stream offsets.
  uint64_t stream_base() const { return span_.compressed ? 0 : span_.offset; }

  bool fail(Error e) {
    error_ = std::move(e);
    done_ = true;
    return false;
  }

  Error wrap(const Error& e) const {
    if (!span_.compressed) return e;
    return error_at(chunk_offset_, fmt::format("cpu {} chunk {}: uncompressed {}", span_.cpu, loaded_chunk_, e.message));
  }

  bool next_page() {
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

  Block& next_slot() {
    cur_ = (cur_ + 1) % kRing;
    page_pos_ = 0;
    return ring_[cur_];
  }

  bool load_block() {
    if (!span_.compressed) {
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

// ---------------------------------------------------------------------------
// The merge

class MergedStream final : public EventStream {
 public:
  explicit MergedStream(StreamSetup setup) : setup_(std::move(setup)) {}

  Status init() {
    bool compressed = false;
    for (const auto& buffer : setup_.buffers)
      for (const CpuSpan& span : buffer) compressed = compressed || span.compressed;
    std::vector<std::vector<size_t>> lanes(setup_.buffers.size());
    if (compressed && setup_.prefetch_chunks.value_or(usable_cpus() > 1)) {
      uint64_t chunk_bytes = 0;  // one average chunk of every CPU
      for (const auto& buffer : setup_.buffers)
        for (const CpuSpan& span : buffer)
          if (span.compressed && span.chunks) chunk_bytes += span.data_size / span.chunks;
      pipeline_ =
          std::make_unique<ChunkPipeline>(setup_.codec, setup_.file.get(), setup_.layout.endian, chunk_bytes);
      for (size_t b = 0; b < setup_.buffers.size(); ++b)
        for (const CpuSpan& span : setup_.buffers[b]) {
          const bool has_chunks = span.compressed && span.chunk_at && span.chunk_at->size() == span.chunks;
          lanes[b].push_back(has_chunks ? pipeline_->add_lane(span, span.page_size ? span.page_size : setup_.page_size)
                                        : kNoLane);
        }
      try {
        pipeline_->start();
      } catch (const std::system_error&) {
        // No thread to be had: every cursor decompresses its own chunks.
        pipeline_.reset();
      }
    }
    size_t cursors = 0;
    for (const auto& buffer : setup_.buffers) cursors += buffer.size();
    for (size_t b = 0; b < setup_.buffers.size(); ++b) {
      const size_t begin = cursors_.size();
      for (size_t i = 0; i < setup_.buffers[b].size(); ++i) {
        const size_t lane = pipeline_ ? lanes[b][i] : kNoLane;
        cursors_.push_back(std::make_unique<CpuCursor>(setup_, setup_.buffers[b][i], static_cast<uint16_t>(b), i,
                                                       lane == kNoLane ? nullptr : pipeline_.get(), lane, cursors));
      }
      ranges_.push_back({begin, cursors_.size()});
    }
    // Every CPU is merged, even those outside the filter: `trace-cmd report
    // --cpu` reads them too and only leaves them out of the output, which is
    // visible where function_graph peeks at the next record (fixture s4).
    for (auto& c : cursors_) {
      if (!c->prime() && c->error()) return located(*c->error());
      active_.push_back(c.get());
      shown_.push_back(!setup_.cpus || setup_.cpus->count(c->cpu()));
    }
    linear_ = active_.size() <= setup_.linear_max;
    n_ = static_cast<uint32_t>(active_.size());
    ts_.resize(n_);
    done_.resize(n_);
    for (uint32_t i = 0; i < n_; ++i) refresh(i);
    leaves_ = 1;
    while (leaves_ < n_) leaves_ *= 2;
    build();
    if (const TraceContext* ctx = setup_.context)
      if (const Field* f = ctx->common_type(); f && f->size >= 1 && f->size <= 8) type_end_ = f->offset + f->size;
    return {};
  }

  Result<bool> next(Record& out) override {
    peeked_ = nullptr;
    if (pending_) return *pending_;
    const Step s = step([&](const Record& r) {
      out = r;
      return true;
    });
    if (s.failed) return located(*s.failed->error());
    return s.took;
  }

  Status for_each(const std::function<bool(const Record&)>& visit) override {
    peeked_ = nullptr;
    visiting_ = true;
    struct Done {
      bool& flag;
      ~Done() { flag = false; }
    } done{visiting_};
    for (;;) {
      if (pending_) return *pending_;  // the cursor of the record just visited failed
      const Step s = step(visit);
      if (s.failed) return located(*s.failed->error());
      if (!s.took || !s.go) return {};  // done, or the visitor stopped (an error then waits in pending_)
    }
  }

  const DecodeStats& stats() const override { return stats_; }

  Result<const Record*> peek_next_in_buffer() override {
    if (visiting_) return Error{"peek_next_in_buffer: called from inside for_each, whose record is not yet consumed"};
    peeked_ = nullptr;
    if (last_buffer_ < 0) return static_cast<const Record*>(nullptr);
    const auto [begin, end] = ranges_[last_buffer_];
    CpuCursor* best = nullptr;
    for (size_t i = begin; i < end; ++i) {
      CpuCursor* c = cursors_[i].get();
      if (c->done()) continue;
      if (!best || c->head().ts < best->head().ts) best = c;
    }
    if (!best) return static_cast<const Record*>(nullptr);
    peeked_ = best;
    peeked_index_ = static_cast<uint32_t>(std::find(active_.begin(), active_.end(), best) - active_.begin());
    peeked_copy_ = best->head();
    if (const TraceContext* ctx = setup_.context) peeked_copy_.event = ctx->event_of(peeked_copy_.data);
    return static_cast<const Record*>(&peeked_copy_);
  }

  void consume_peeked() override {
    if (!peeked_) return;
    CpuCursor* c = peeked_;
    peeked_ = nullptr;
    if (!c->advance() && c->error() && !pending_) pending_ = located(*c->error());
    refresh(peeked_index_);
    if (!linear_) {
      const bool was_winner = tree_[0] == peeked_index_;
      if (was_winner)
        replay(peeked_index_);
      else
        build();  // a record of another buffer than the winner's: rare, rebuild
    }
    ++stats_.events;
  }

 private:
  // A tournament (loser) tree over the cursors orders them by (next stamp,
  // index): the same winner as trace-cmd's linear scan (smallest stamp,
  // lowest index on ties) in log2(cpus) comparisons per record.
  static constexpr uint32_t kNone = ~0u;
  static constexpr uint64_t kDoneStamp = ~uint64_t{0};
  static constexpr size_t kNoLane = ~size_t{0};

  // One step of the merge, shared by next() and for_each(): the earliest
  // record of a shown CPU goes to `take` (which says whether to go on)
  // while it is still in its cursor, then that cursor moves on; an error
  // doing so is kept in pending_, for the next call, since the record was
  // taken. A hidden CPU's record is skipped, and its cursor's error is
  // `failed`. Bounded: every pass takes or skips a record.
  struct Step {
    bool took = false;
    bool go = true;
    CpuCursor* failed = nullptr;
  };
  template <typename Take>
  [[gnu::always_inline]] Step step(Take&& take) {
    for (;;) {
      const uint32_t i = earliest();
      if (i == kNone) return {};
      CpuCursor* best = active_[i];
      if (shown_[i]) {
        Record& r = best->head();
        last_buffer_ = best->buffer();
        count(r);
        const bool go = take(r);
        if (!best->advance() && best->error()) pending_ = located(*best->error());
        moved(i);
        return {true, go, nullptr};
      }
      const bool ok = best->advance() || !best->error();
      moved(i);
      if (!ok) return {false, true, best};
    }
  }

  // The cursor whose record comes next, or kNone when all are done.
  [[gnu::always_inline]] uint32_t earliest() {
    if (linear_) {
      // A CPU's records come in runs: while the last winner's next stamp
      // still comes before every other cursor's (which have not moved),
      // it wins again without a scan.
      if (streak_ != kNone) {
        const uint64_t t = ts_[streak_];
        if (t != kDoneStamp && (t < runner_up_ts_ || (t == runner_up_ts_ && streak_ < runner_up_)))
          return streak_;
      }
      // Few CPUs: trace-cmd's own scan is cheaper than keeping the tree.
      // It reads the stamps side by side, a finished cursor's as
      // kDoneStamp, so the lowest index wins ties without a test of done.
      if (n_ == 0) return kNone;
      const uint64_t* ts = ts_.data();
      uint32_t i = 0, second = kNone;
      uint64_t best_ts = ts[0], second_ts = kDoneStamp;
      for (uint32_t k = 1; k < n_; ++k) {
        if (ts[k] < best_ts) {
          second_ts = best_ts;
          second = i;
          best_ts = ts[k];
          i = k;
        } else if (ts[k] < second_ts) {
          second_ts = ts[k];
          second = k;
        }
      }
      if (best_ts != kDoneStamp) {
        streak_ = i;
        runner_up_ts_ = second_ts;
        runner_up_ = second;
      }
      if (best_ts == kDoneStamp) {
        // Every cursor done, or the earliest stamp left is kDoneStamp
        // itself: the first cursor not done is trace-cmd's choice.
        i = 0;
        while (i < n_ && done_[i]) ++i;
        if (i == n_) return kNone;
      }
      return i;
    }
    const uint32_t i = tree_[0];
    return i >= n_ || done_[i] ? kNone : i;
  }

  bool before(uint32_t a, uint32_t b) const {
    const bool a_out = a >= n_ || done_[a];
    const bool b_out = b >= n_ || done_[b];
    if (a_out || b_out) return !a_out;
    return ts_[a] < ts_[b] || (ts_[a] == ts_[b] && a < b);
  }

  void refresh(uint32_t i) {
    if (i != streak_) streak_ = kNone;  // a cursor other than the streak's moved
    done_[i] = active_[i]->done();
    ts_[i] = done_[i] ? kDoneStamp : active_[i]->head().ts;
  }

  void build() {
    tree_.assign(leaves_, kNone);
    std::vector<uint32_t> win(2 * leaves_);
    for (uint32_t i = 0; i < leaves_; ++i) win[leaves_ + i] = i;  // ids >= n_ are empty leaves
    for (uint32_t node = leaves_ - 1; node >= 1; --node) {
      const uint32_t l = win[2 * node], r = win[2 * node + 1];
      const bool left = before(l, r) || (!before(r, l) && l < r);
      win[node] = left ? l : r;
      tree_[node] = left ? r : l;
    }
    tree_[0] = win[1];
  }

  // The winner's stamp changed: play its path to the root again.
  void replay(uint32_t i) {
    uint32_t winner = i;
    for (uint32_t node = (i + leaves_) >> 1; node >= 1; node >>= 1)
      if (before(tree_[node], winner)) std::swap(tree_[node], winner);
    tree_[0] = winner;
  }

  // Cursor i advanced (or ended).
  void moved(uint32_t i) {
    refresh(i);
    if (!linear_) replay(i);
  }

  // Errors name the file first, like TraceDat::open's.
  Error located(const Error& e) const { return e.within(setup_.file->path()); }

  // Counts the record about to be shown, and looks its format up for
  // whoever reads it.
  void count(Record& r) {
    ++stats_.events;
    if (r.missed_events) {
      ++stats_.pages_with_missed;
      if (r.missed_events != kMissedUnknown) stats_.missed_events += r.missed_events;
    }
    if (!type_end_) return;  // no context, or one without a usable common_type
    r.event = setup_.context->event_of(r.data);
    if (!r.event && r.data.size() >= type_end_) ++stats_.unknown_events;
  }

  StreamSetup setup_;
  std::vector<std::unique_ptr<CpuCursor>> cursors_;   // every CPU of every buffer, in trace-cmd's order
  std::vector<std::pair<size_t, size_t>> ranges_;     // cursors of each buffer
  std::vector<CpuCursor*> active_;                    // every cursor, in merge order
  std::vector<uint8_t> shown_;                        // active_[i] is in the cpus filter
  int last_buffer_ = -1;
  CpuCursor* peeked_ = nullptr;
  uint32_t peeked_index_ = 0;
  Record peeked_copy_;
  bool linear_ = true;
  uint32_t n_ = 0;               // cursors
  uint32_t leaves_ = 1;          // n_ rounded up to a power of two
  std::vector<uint32_t> tree_;   // [0] the winner, [1..] the loser of each match
  std::vector<uint64_t> ts_;     // each cursor's next stamp, kept beside the tree
  std::vector<uint8_t> done_;    // each cursor has no more records
  // Linear scan: the last winner, and the earliest of the others (stamp,
  // then index), which stand still while only the winner moves.
  uint32_t streak_ = kNone;
  uint32_t runner_up_ = kNone;
  uint64_t runner_up_ts_ = kDoneStamp;
  std::optional<Error> pending_;  // reported by the next call, after the record already returned
  bool visiting_ = false;         // inside for_each
  DecodeStats stats_;
  uint32_t type_end_ = 0;  // end of common_type in a record; 0: unknown events are not counted
  // Last, so its helper stops (finishing the chunk in hand) before the
  // cursors that take its chunks go away.
  std::unique_ptr<ChunkPipeline> pipeline_;
};

}  // namespace

Result<std::unique_ptr<EventStream>> make_event_stream(StreamSetup setup) {
  if (setup.page_size < setup.layout.header_size())
    return Error{fmt::format("sub-buffer size {} is smaller than its {}-byte header", setup.page_size,
                             setup.layout.header_size())};
  auto s = std::make_unique<MergedStream>(std::move(setup));
  TRACEBED_TRY(s->init());
  return std::unique_ptr<EventStream>(std::move(s));
}

}  // namespace tracebed
