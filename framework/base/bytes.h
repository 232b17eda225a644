// Bounds-checked, endian-aware reads over untrusted bytes.
//
// Every read of trace data goes through load<T>() or ByteReader; nothing casts
// a pointer into the input (unaligned and endian-dependent), nothing trusts a
// length field before checking it against what is left.
#pragma once

#include <bit>
#include <cstdint>
#include <cstring>
#include <memory>
#include <span>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>

#include "framework/base/huge_pages.h"
#include "framework/base/result.h"

namespace tracebed {

using Bytes = std::span<const uint8_t>;

// An allocator whose resize() leaves new elements uninitialised, for
// buffers a read or a decompression overwrites at once: zeroing megabytes
// of metadata first was a tenth of a small report. Big ones (a kernel's
// kallsyms is 8 MB decompressed) come in huge pages: faulting in 4 KiB
// pages was a sixth of reporting a small v7 file.
template <typename T>
struct UninitializedAllocator : base::HugePageAllocator<T> {
  template <typename U>
  struct rebind {
    using other = UninitializedAllocator<U>;
  };
  UninitializedAllocator() = default;
  template <typename U>
  UninitializedAllocator(const UninitializedAllocator<U>&) {}
  template <typename U>
  void construct(U* p) noexcept(std::is_nothrow_default_constructible_v<U>) {
    ::new (static_cast<void*>(p)) U;
  }
  template <typename U, typename... A>
  void construct(U* p, A&&... a) {
    ::new (static_cast<void*>(p)) U(std::forward<A>(a)...);
  }
};

// Bytes about to be filled by a read or a decompression.
using ByteBuffer = std::vector<uint8_t, UninitializedAllocator<uint8_t>>;

enum class Endian : uint8_t { little, big };

constexpr Endian host_endian() {
  return std::endian::native == std::endian::little ? Endian::little : Endian::big;
}

template <typename T>
constexpr T byteswap(T v) {
  static_assert(std::is_integral_v<T>);
  if constexpr (sizeof(T) == 1) {
    return v;
  } else if constexpr (sizeof(T) == 2) {
    return static_cast<T>(__builtin_bswap16(static_cast<uint16_t>(v)));
  } else if constexpr (sizeof(T) == 4) {
    return static_cast<T>(__builtin_bswap32(static_cast<uint32_t>(v)));
  } else {
    return static_cast<T>(__builtin_bswap64(static_cast<uint64_t>(v)));
  }
}

// Reads a T at p (caller has checked the bounds) in the given byte order.
template <typename T>
inline T load(const uint8_t* p, Endian e) {
  T v;
  std::memcpy(&v, p, sizeof v);
  return e == host_endian() ? v : byteswap(v);
}

// Reads an unsigned integer of 1, 2, 4 or 8 bytes; other sizes read as 0.
inline uint64_t load_uint(const uint8_t* p, size_t size, Endian e) {
  switch (size) {
    case 1: return *p;
    case 2: return load<uint16_t>(p, e);
    case 4: return load<uint32_t>(p, e);
    case 8: return load<uint64_t>(p, e);
    default: return 0;
  }
}

// A cursor over a byte span that remembers the absolute offset of its first
// byte, so errors can name the position in the file.
class ByteReader {
 public:
  ByteReader(Bytes data, Endian endian = Endian::little, uint64_t base_offset = 0)
      : data_(data), endian_(endian), base_(base_offset) {}

  size_t remaining() const { return data_.size() - pos_; }
  size_t position() const { return pos_; }
  uint64_t file_offset() const { return base_ + pos_; }
  bool at_end() const { return pos_ >= data_.size(); }
  Endian endian() const { return endian_; }
  void set_endian(Endian e) { endian_ = e; }

  template <typename T>
  Result<T> read(std::string_view what) {
    if (remaining() < sizeof(T)) return short_read(what, sizeof(T));
    T v = load<T>(data_.data() + pos_, endian_);
    pos_ += sizeof(T);
    return v;
  }

  Result<uint64_t> read_uint(size_t size, std::string_view what) {
    if (size != 1 && size != 2 && size != 4 && size != 8)
      return error_at(file_offset(), fmt::format("{}: unsupported integer size {}", what, size));
    if (remaining() < size) return short_read(what, size);
    uint64_t v = load_uint(data_.data() + pos_, size, endian_);
    pos_ += size;
    return v;
  }

  Result<Bytes> read_bytes(size_t n, std::string_view what) {
    if (remaining() < n) return short_read(what, n);
    Bytes out = data_.subspan(pos_, n);
    pos_ += n;
    return out;
  }

  // A NUL-terminated string; the NUL is consumed but not returned.
  Result<std::string_view> read_cstring(std::string_view what) {
    const uint8_t* begin = data_.data() + pos_;
    const void* nul = std::memchr(begin, 0, remaining());
    if (!nul)
      return error_at(file_offset(), fmt::format("{}: string not terminated before end of data", what));
    size_t len = static_cast<const uint8_t*>(nul) - begin;
    pos_ += len + 1;
    return std::string_view(reinterpret_cast<const char*>(begin), len);
  }

  Status skip(size_t n, std::string_view what) {
    if (remaining() < n) return short_read(what, n);
    pos_ += n;
    return {};
  }

 private:
  Error short_read(std::string_view what, size_t want) const {
    return error_at(file_offset(), fmt::format("{}: need {} bytes, only {} left", what, want, remaining()));
  }

  Bytes data_;
  Endian endian_;
  uint64_t base_;
  size_t pos_ = 0;
};

}  // namespace tracebed
