#include "framework/decode/chunk_pipeline.h"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>

namespace tracebed::decode {


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

ChunkPipeline::ChunkPipeline(Codec codec, const DataFile* file, Endian endian, uint64_t chunk_bytes)
    : codec_(codec),
      file_(file),
      endian_(endian),
      depth_(static_cast<uint32_t>(
          std::clamp<uint64_t>(kAheadBytes / std::max<uint64_t>(chunk_bytes, 1), 1, kMaxDepth))) {}

ChunkPipeline::~ChunkPipeline() {
  if (!thread_.joinable()) return;
  {
    std::lock_guard lock(mu_);
    stop_ = true;
  }
  wake_.notify_all();
  thread_.join();
}

size_t ChunkPipeline::add_lane(const CpuSpan& span, uint32_t page_size) {
  lanes_.push_back(std::make_unique<Lane>(span, page_size));
  return lanes_.size() - 1;
}

void ChunkPipeline::start() { thread_ = std::thread([this] { run(); }); }

Result<ChunkRead> ChunkPipeline::take(size_t lane, Decompressor& codec, ByteBuffer& zbuf, ByteBuffer& out) {
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

Result<ChunkRead> ChunkPipeline::read_lane_chunk(const Lane& l, uint32_t i, Decompressor& codec, ByteBuffer& zbuf,
                                                 ByteBuffer& out) const {
  return read_chunk(*file_, codec, endian_, l.span, (*l.span.chunk_at)[i].at, i, l.page_size, i + 1 == l.span.chunks,
                    zbuf, out);
}

void ChunkPipeline::poke_helper(const Lane& l) {
  if (helper_idle_ && !l.failed && l.claimed < l.span.chunks && l.claimed - l.taken <= depth_ / 2)
    wake_.notify_one();
}

void ChunkPipeline::spin_until_ready(const Slot& slot) {
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

ChunkPipeline::Lane* ChunkPipeline::next_lane() {
  Lane* best = nullptr;
  for (auto& l : lanes_) {
    if (l->failed || l->claimed >= l->span.chunks || l->claimed >= l->taken + depth_) continue;
    if (!best || l->claimed - l->taken < best->claimed - best->taken) best = l.get();
  }
  return best;
}

void ChunkPipeline::run() {
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

void ChunkPipeline::fill_next(Lane& l, Decompressor& codec, ByteBuffer& zbuf, std::unique_lock<std::mutex>& lock) {
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

}  // namespace tracebed::decode
