// The block codecs trace.dat v7 names in its compression header
// (trace-cmd's lib/trace-cmd/trace-compress-{zlib,zstd}.c): zlib's
// compress2 format and plain zstd frames.
#pragma once

#include <cstdint>
#include <functional>
#include <span>
#include <string_view>

#include "framework/base/bytes.h"
#include "framework/base/result.h"

namespace tracebed::decode {

enum class Codec : uint8_t { none, zlib, zstd };

// "none", "zlib" or "zstd" as the file names them; an Error otherwise.
Result<Codec> codec_by_name(std::string_view name);
std::string_view codec_name(Codec c);

// Whether `in` can decompress to `out_size` bytes at all: deflate expands at
// most 1032:1, and a zstd frame that states its content size must state this
// one. Checked before a buffer of a size read from the file is allocated, so
// a corrupt header costs an error rather than gigabytes.
Status check_decompressed_size(Codec codec, Bytes in, uint64_t out_size, std::string_view where);

// Decompresses `in` into exactly out.size() bytes. `where` names the block in
// errors ("offset 0x1f40: section 18"). `none` copies.
Status decompress(Codec codec, Bytes in, std::span<uint8_t> out, std::string_view where);

// The same, telling `ready(n)` each time the first n bytes of `out` are
// final (zstd and zlib go in steps; `none` at once), so that another thread
// can read them while the rest is made.
Status decompress_in_steps(Codec codec, Bytes in, std::span<uint8_t> out, std::string_view where,
                           const std::function<void(size_t)>& ready);

// The same, keeping the codec's state between blocks: a zstd context or a
// zlib stream is set up once instead of once per chunk.
class Decompressor {
 public:
  explicit Decompressor(Codec codec);
  ~Decompressor();
  Decompressor(const Decompressor&) = delete;
  Decompressor& operator=(const Decompressor&) = delete;

  Status run(Bytes in, std::span<uint8_t> out, std::string_view where);

 private:
  Codec codec_;
  void* zstd_ = nullptr;  // ZSTD_DCtx
  void* zlib_ = nullptr;  // z_stream
};

}  // namespace tracebed::decode
