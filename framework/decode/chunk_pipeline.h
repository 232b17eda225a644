// Compressed trace.dat data (v7): reading one chunk, and a helper thread
// that decompresses the chunks of every compressed CPU ahead of the thread
// that merges and formats. Private to the decoder (merge.cc, cpu_cursor.cc).
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <thread>
#include <vector>

#include "framework/base/result.h"
#include "framework/decode/data_file.h"
#include "framework/decode/decompress.h"
#include "framework/decode/merge.h"

namespace tracebed::decode {

// trace-cmd writes chunks of 10 sub-buffers; anything near this is corrupt.
inline constexpr uint64_t kMaxChunkBytes = uint64_t{256} << 20;

struct ChunkRead {
  uint32_t zsize = 0, usize = 0;
};

// Reads and decompresses the chunk whose header is at `at` into `out`
// (grown as needed), checking it lies inside the CPU's data. `last`: the
// CPU's last chunk, which may hold a partial sub-buffer. The header is read
// from the file unless scan_chunks kept it.
Result<ChunkRead> read_chunk(const DataFile& file, Decompressor& codec, Endian endian, const CpuSpan& span,
                             uint64_t at, uint32_t index, uint32_t page_size, bool last, ByteBuffer& zbuf,
                             ByteBuffer& out);

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
  ChunkPipeline(Codec codec, const DataFile* file, Endian endian, uint64_t chunk_bytes);
  ~ChunkPipeline();
  ChunkPipeline(const ChunkPipeline&) = delete;
  ChunkPipeline& operator=(const ChunkPipeline&) = delete;

  // Before start(): a compressed CPU whose chunks the helper may read.
  size_t add_lane(const CpuSpan& span, uint32_t page_size);
  // Throws std::system_error when no thread is to be had.
  void start();

  // The lane's next chunk, decompressed into `out`: the helper's, or read
  // here with `codec` and `zbuf` if the helper has not claimed it.
  Result<ChunkRead> take(size_t lane, Decompressor& codec, ByteBuffer& zbuf, ByteBuffer& out);

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
                                    ByteBuffer& out) const;
  // Under mu_: the helper sleeps and this lane has fallen to half its depth.
  void poke_helper(const Lane& l);
  // A chunk takes 20-60 µs to decompress; sleeping and being woken costs
  // about as much, so spin first (bounded: 200 µs).
  static void spin_until_ready(const Slot& slot);
  // The lane the reader will want soonest: the one with the fewest chunks ready.
  Lane* next_lane();
  void run();
  // Under mu_, released while decompressing: claims the lane's next chunk
  // and decompresses it into its slot.
  void fill_next(Lane& l, Decompressor& codec, ByteBuffer& zbuf, std::unique_lock<std::mutex>& lock);

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

}  // namespace tracebed::decode
