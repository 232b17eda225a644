// The host <-> guest agent protocol: small length-prefixed frames.
//
// Frame: a 16-byte little-endian header, then `length` payload bytes.
//   u32 magic "TBAG" | u8 version | u8 flags | u16 op | u32 id | u32 length
// A reply carries the request's id and op | kReply. Streaming replies set
// kMore on every frame but the last. Every reply payload starts with an i32
// errno (0 = success), then the op's fields (see Op below).
//
// Payload fields are little-endian integers and length-prefixed byte strings
// (u32 length + bytes). Both ends treat the other's bytes as untrusted: every
// read is bounds-checked, every length is checked against kMaxPayload before
// anything is allocated.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "framework/base/bytes.h"
#include "framework/base/result.h"

namespace tracebed::agent {

inline constexpr uint32_t kMagic = 0x47414254;  // "TBAG" in little-endian byte order
inline constexpr uint8_t kVersion = 1;
inline constexpr size_t kHeaderSize = 16;
// Large enough for a few MB of trace pages or a tool binary chunk, small
// enough that a corrupt length cannot make the host allocate gigabytes.
inline constexpr uint32_t kMaxPayload = 32u << 20;

// Paths in one read_files request: more than any kernel has events.
inline constexpr uint32_t kMaxReadFiles = 16384;

inline constexpr uint16_t kReply = 0x8000;
inline constexpr uint8_t kMore = 0x01;

// Request fields -> reply fields (after the leading i32 errno).
enum class Op : uint16_t {
  hello = 1,         // u8 version -> u8 version, str release, u32 ncpus
  read_file = 2,     // str path, u64 offset, u32 max -> bytes data
  write_file = 3,    // str path, u32 flags (WriteFlags), u32 mode, bytes data -> u64 written
  list_dir = 4,      // str path -> u32 n, n x (str name, u8 d_type)
  stat = 5,          // str path -> u32 mode, u64 size, i64 mtime_ns
  mkdir = 6,         // str path, u32 mode -> (nothing)
  rmdir = 7,         // str path -> (nothing)
  run = 8,           // strs argv, strs env, bytes stdin, u32 timeout_ms
                     //   -> i32 exit_code, i32 signal, u8 timed_out, bytes stdout, bytes stderr
  spawn = 9,         // strs argv, strs env, str output_path -> i32 pid
  kill = 10,         // i32 pid, i32 signal, u32 wait_ms -> u8 exited, i32 exit_code, i32 signal
  read_pages = 11,   // str tracing_dir, u32 cpu, u32 page_size, u32 max_pages, u32 wait_ms -> bytes pages
  stream_pages = 12, // str tracing_dir, strs cpus, u32 page_size, u32 duration_ms, u64 max_bytes
                     //   -> (kMore frames: u32 cpu, bytes pages)... final: u64 total_bytes
  shutdown = 13,     // -> (nothing); the guest powers off after replying
  read_files = 14,   // strs paths, u32 max_each -> u32 n, n x (i32 errno, bytes data) for the first n
                     //   paths (fewer than asked when the reply would exceed kMaxPayload)
};

enum WriteFlags : uint32_t {
  kWriteAppend = 1,   // O_APPEND
  kWriteCreate = 2,   // O_CREAT | O_TRUNC (copy a file in)
  kWriteTruncate = 4, // O_TRUNC: tracefs resets trace, set_event, set_ftrace_filter, error_log... on it
};

std::string_view op_name(uint16_t op);

struct FrameHeader {
  uint8_t version = kVersion;
  uint8_t flags = 0;
  uint16_t op = 0;
  uint32_t id = 0;
  uint32_t length = 0;
};

// Parses a header; rejects a bad magic, an unknown version or a length above
// max_payload, naming the offending value.
Result<FrameHeader> decode_header(Bytes header, uint32_t max_payload = kMaxPayload);
void encode_header(const FrameHeader& h, uint8_t out[kHeaderSize]);

// Builds a payload field by field.
class Encoder {
 public:
  Encoder& u8(uint8_t v) { return put(v); }
  Encoder& u16(uint16_t v) { return put(v); }
  Encoder& u32(uint32_t v) { return put(v); }
  Encoder& u64(uint64_t v) { return put(v); }
  Encoder& i32(int32_t v) { return put(v); }
  Encoder& i64(int64_t v) { return put(v); }
  Encoder& bytes(std::string_view data);
  Encoder& str(std::string_view s) { return bytes(s); }
  Encoder& strs(const std::vector<std::string>& list);

  const std::vector<uint8_t>& data() const { return buf_; }
  std::vector<uint8_t> take() { return std::move(buf_); }

 private:
  template <typename T>
  Encoder& put(T v) {
    if constexpr (std::endian::native != std::endian::little) v = byteswap(v);
    const auto* p = reinterpret_cast<const uint8_t*>(&v);
    buf_.insert(buf_.end(), p, p + sizeof v);
    return *this;
  }
  std::vector<uint8_t> buf_;
};

// Reads a payload field by field; each error names the op, the field and the
// payload offset. Strings and byte fields are views into the payload.
class Decoder {
 public:
  Decoder(Bytes payload, std::string_view context) : r_(payload), context_(context) {}

  Result<uint8_t> u8(std::string_view field) { return wrap(r_.read<uint8_t>(field)); }
  Result<uint16_t> u16(std::string_view field) { return wrap(r_.read<uint16_t>(field)); }
  Result<uint32_t> u32(std::string_view field) { return wrap(r_.read<uint32_t>(field)); }
  Result<uint64_t> u64(std::string_view field) { return wrap(r_.read<uint64_t>(field)); }
  Result<int32_t> i32(std::string_view field) { return wrap(r_.read<int32_t>(field)); }
  Result<int64_t> i64(std::string_view field) { return wrap(r_.read<int64_t>(field)); }
  Result<std::string_view> bytes(std::string_view field);
  Result<std::string_view> str(std::string_view field) { return bytes(field); }
  // At most max_count strings; more is an error rather than an allocation.
  Result<std::vector<std::string>> strs(std::string_view field, uint32_t max_count = 4096);
  // Fails if bytes are left over: a sender and receiver that disagree on a
  // layout should fail loudly, not half-work.
  Status finish();

  size_t remaining() const { return r_.remaining(); }

 private:
  template <typename T>
  Result<T> wrap(Result<T> r) {
    if (!r) return r.error().within(context_);
    return r;
  }
  ByteReader r_;
  std::string context_;
};

// A whole frame (header + payload), ready to write.
std::vector<uint8_t> make_frame(uint16_t op, uint32_t id, uint8_t flags, const std::vector<uint8_t>& payload);

}  // namespace tracebed::agent
