// A 64-bit hash of a byte stream: `tracebed bench` compares the outputs of
// the tools it times by it.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>

namespace tracebed::cli {

// A 64-bit hash of a byte stream, the same however the stream is cut into
// reads (32-byte blocks, with the tail carried over). Four independent
// lanes: the reader shares the CPUs with the child it times, so its own
// work should be small (one chained multiply per word took ~1 ms of CPU
// for s2's 4 MB, beside a 10 ms child on two CPUs).
class StreamHash {
 public:
  void update(const uint8_t* p, size_t n) {
    bytes_ += n;
    while (n && tail_len_) {
      tail_[tail_len_++] = *p++;
      --n;
      if (tail_len_ == kBlock) {
        mix_block(tail_);
        tail_len_ = 0;
      }
    }
    for (; n >= kBlock; p += kBlock, n -= kBlock) mix_block(p);
    while (n--) tail_[tail_len_++] = *p++;
  }
  uint64_t finish() {
    uint64_t h = 0x243f6a8885a308d3ull;
    for (uint64_t lane : lanes_) h = mix(h, lane);
    for (size_t i = 0; i < tail_len_; ++i) h = mix(h, tail_[i] | 0x100u);
    h = mix(h, bytes_);
    return h ^ (h >> 29);
  }
  uint64_t bytes() const { return bytes_; }

 private:
  static constexpr size_t kBlock = 32;
  static uint64_t load_word(const uint8_t* p) {
    uint64_t w;
    std::memcpy(&w, p, 8);
    return w;
  }
  static uint64_t mix(uint64_t h, uint64_t w) {
    h = (h ^ w) * 0x9e3779b97f4a7c15ull;
    return h ^ (h >> 32);
  }
  void mix_block(const uint8_t* p) {
    for (size_t i = 0; i < 4; ++i) lanes_[i] = mix(lanes_[i], load_word(p + 8 * i));
  }
  uint64_t lanes_[4] = {0x243f6a8885a308d3ull, 0x13198a2e03707344ull, 0xa4093822299f31d0ull, 0x082efa98ec4e6c89ull};
  uint64_t bytes_ = 0;
  uint8_t tail_[kBlock] = {};
  size_t tail_len_ = 0;
};

}  // namespace tracebed::cli
