#include "framework/decode/decompress.h"

#include <algorithm>
#include <cstdint>
#include <cstring>

#include <zlib.h>
#include <zstd.h>

namespace tracebed::decode {

Result<Codec> codec_by_name(std::string_view name) {
  if (name == "none") return Codec::none;
  if (name == "zlib") return Codec::zlib;
  if (name == "zstd") return Codec::zstd;
  return Error{fmt::format("unknown compression \"{}\" (known: none, zlib, zstd)", name)};
}

std::string_view codec_name(Codec c) {
  switch (c) {
    case Codec::none: return "none";
    case Codec::zlib: return "zlib";
    case Codec::zstd: return "zstd";
  }
  return "?";
}

Status check_decompressed_size(Codec codec, Bytes in, uint64_t out_size, std::string_view where) {
  switch (codec) {
    case Codec::none:
      if (in.size() != out_size)
        return Error{fmt::format("{}: stored size {} differs from the expected {}", where, in.size(), out_size)};
      return {};
    case Codec::zlib: {
      // zlib's technical notes: deflate's best case is 1032:1.
      constexpr uint64_t kMaxRatio = 1032;
      if (out_size > uint64_t{in.size()} * kMaxRatio + 64)
        return Error{fmt::format("{}: zlib: {} compressed bytes cannot hold the {} bytes the header states", where,
                                 in.size(), out_size)};
      return {};
    }
    case Codec::zstd: {
      const unsigned long long stated = ZSTD_getFrameContentSize(in.data(), in.size());
      if (stated == ZSTD_CONTENTSIZE_ERROR)
        return Error{fmt::format("{}: zstd: no frame header in {} compressed bytes", where, in.size())};
      if (stated != ZSTD_CONTENTSIZE_UNKNOWN && stated != out_size)
        return Error{fmt::format("{}: zstd: the frame holds {} bytes, the header states {}", where, stated, out_size)};
      return {};
    }
  }
  return Error{fmt::format("{}: unknown codec", where)};
}

namespace {

// What ZSTD_decompress(DCtx) returned, `got`, as a Status: its error, or a
// size other than the one stated.
Status zstd_outcome(size_t got, Bytes in, std::span<uint8_t> out, std::string_view where) {
  if (ZSTD_isError(got))
    return Error{fmt::format("{}: zstd: {} ({} compressed bytes, {} expected out)", where, ZSTD_getErrorName(got),
                             in.size(), out.size())};
  if (got != out.size())
    return Error{fmt::format("{}: zstd: decompressed to {} bytes, header says {}", where, got, out.size())};
  return {};
}

}  // namespace

Status decompress(Codec codec, Bytes in, std::span<uint8_t> out, std::string_view where) {
  switch (codec) {
    case Codec::none:
      if (in.size() != out.size())
        return Error{fmt::format("{}: stored size {} differs from the expected {}", where, in.size(), out.size())};
      if (!in.empty()) std::memcpy(out.data(), in.data(), in.size());
      return {};
    case Codec::zlib: {
      uLongf got = out.size();
      int rc = uncompress(out.data(), &got, in.data(), in.size());
      if (rc != Z_OK)
        return Error{fmt::format("{}: zlib: {} ({} compressed bytes, {} expected out)", where,
                                 rc == Z_BUF_ERROR  ? "data larger than its stated size or truncated"
                                 : rc == Z_DATA_ERROR ? "corrupt data"
                                                      : "out of memory",
                                 in.size(), out.size())};
      if (got != out.size())
        return Error{fmt::format("{}: zlib: decompressed to {} bytes, header says {}", where, got, out.size())};
      return {};
    }
    case Codec::zstd: {
      return zstd_outcome(ZSTD_decompress(out.data(), out.size(), in.data(), in.size()), in, out, where);
    }
  }
  return Error{fmt::format("{}: unknown codec", where)};
}

namespace {

// Compressed bytes per step: about a quarter of a MiB of kallsyms text.
constexpr size_t kStepBytes = size_t{64} << 10;

// Any failure of a step-by-step pass is reported by the one-shot path on the
// same input, for the same error text.
Status zstd_in_steps(Bytes in, std::span<uint8_t> out, std::string_view where,
                     const std::function<void(size_t)>& ready) {
  ZSTD_DCtx* d = ZSTD_createDCtx();
  if (!d) return decompress(Codec::zstd, in, out, where);
  // Decode straight into `out`, which never moves (ZSTD_d_stableOutBuffer),
  // rather than through a window of zstd's own and a copy. Only advice: a
  // library that does not know it decodes through its window.
  ZSTD_DCtx_setParameter(d, ZSTD_d_experimentalParam2, 1);
  ZSTD_outBuffer o{out.data(), out.size(), 0};
  size_t fed = 0, left = 1;
  bool ok = true;
  while (fed < in.size() || left != 0) {
    ZSTD_inBuffer i{in.data() + fed, std::min(kStepBytes, in.size() - fed), 0};
    const size_t before = o.pos;
    left = ZSTD_decompressStream(d, &o, &i);
    if (ZSTD_isError(left) || (i.pos == 0 && o.pos == before)) {
      ok = false;  // corrupt, or cut short
      break;
    }
    fed += i.pos;
    if (o.pos > before) ready(o.pos);
  }
  ZSTD_freeDCtx(d);
  if (!ok || o.pos != out.size()) return decompress(Codec::zstd, in, out, where);
  return {};
}

Status zlib_in_steps(Bytes in, std::span<uint8_t> out, std::string_view where,
                     const std::function<void(size_t)>& ready) {
  z_stream z{};
  if (inflateInit(&z) != Z_OK) return decompress(Codec::zlib, in, out, where);
  z.next_out = out.data();
  z.avail_out = static_cast<uInt>(out.size());
  size_t fed = 0;
  int rc = Z_OK;
  while (rc == Z_OK) {
    const size_t step = std::min(kStepBytes, in.size() - fed);
    z.next_in = const_cast<Bytef*>(in.data() + fed);
    z.avail_in = static_cast<uInt>(step);
    const uLong before = z.total_out;
    rc = inflate(&z, Z_NO_FLUSH);
    fed += step - z.avail_in;
    if (rc == Z_BUF_ERROR || (rc == Z_OK && z.total_out == before && step == 0)) break;  // cut short
    if (z.total_out > before) ready(z.total_out);
  }
  const bool ok = rc == Z_STREAM_END && z.total_out == out.size();
  inflateEnd(&z);
  if (!ok) return decompress(Codec::zlib, in, out, where);
  return {};
}

}  // namespace

Status decompress_in_steps(Codec codec, Bytes in, std::span<uint8_t> out, std::string_view where,
                           const std::function<void(size_t)>& ready) {
  if (codec == Codec::zstd) return zstd_in_steps(in, out, where, ready);
  if (codec == Codec::zlib && in.size() <= UINT32_MAX && out.size() <= UINT32_MAX)
    return zlib_in_steps(in, out, where, ready);
  TRACEBED_TRY(decompress(codec, in, out, where));
  ready(out.size());
  return {};
}

Decompressor::Decompressor(Codec codec) : codec_(codec) {}

Decompressor::~Decompressor() {
  if (zstd_) ZSTD_freeDCtx(static_cast<ZSTD_DCtx*>(zstd_));
  if (zlib_) {
    inflateEnd(static_cast<z_stream*>(zlib_));
    delete static_cast<z_stream*>(zlib_);
  }
}

Status Decompressor::run(Bytes in, std::span<uint8_t> out, std::string_view where) {
  if (codec_ == Codec::zstd) {
    if (!zstd_) zstd_ = ZSTD_createDCtx();
    if (!zstd_) return decompress(codec_, in, out, where);
    return zstd_outcome(
        ZSTD_decompressDCtx(static_cast<ZSTD_DCtx*>(zstd_), out.data(), out.size(), in.data(), in.size()), in, out,
        where);
  }
  if (codec_ == Codec::zlib) {
    auto* z = static_cast<z_stream*>(zlib_);
    if (!z) {
      z = new z_stream{};
      if (inflateInit(z) != Z_OK) {
        delete z;
        return decompress(codec_, in, out, where);
      }
      zlib_ = z;
    } else if (inflateReset(z) != Z_OK) {
      return decompress(codec_, in, out, where);
    }
    z->next_in = const_cast<Bytef*>(in.data());
    z->avail_in = static_cast<uInt>(in.size());
    z->next_out = out.data();
    z->avail_out = static_cast<uInt>(out.size());
    const int rc = inflate(z, Z_FINISH);
    if (rc != Z_STREAM_END || z->total_out != out.size())
      return decompress(codec_, in, out, where);  // same input, for the same error text as the one-shot path
    return {};
  }
  return decompress(codec_, in, out, where);
}

}  // namespace tracebed::decode
