#include "framework/agent/protocol.h"

#include <cstring>

namespace tracebed::agent {

std::string_view op_name(uint16_t op) {
  switch (static_cast<Op>(op & ~kReply)) {
    case Op::hello: return "hello";
    case Op::read_file: return "read_file";
    case Op::write_file: return "write_file";
    case Op::list_dir: return "list_dir";
    case Op::stat: return "stat";
    case Op::mkdir: return "mkdir";
    case Op::rmdir: return "rmdir";
    case Op::run: return "run";
    case Op::spawn: return "spawn";
    case Op::kill: return "kill";
    case Op::read_pages: return "read_pages";
    case Op::stream_pages: return "stream_pages";
    case Op::shutdown: return "shutdown";
    case Op::read_files: return "read_files";
  }
  return "unknown";
}

Result<FrameHeader> decode_header(Bytes header, uint32_t max_payload) {
  ByteReader r(header);
  TRACEBED_ASSIGN_OR_RETURN(uint32_t magic, r.read<uint32_t>("frame magic"));
  if (magic != kMagic)
    return Error{fmt::format("agent frame: bad magic {:#010x} (want {:#010x}): stream out of sync or not the agent", magic, kMagic)};
  FrameHeader h;
  TRACEBED_ASSIGN_OR_RETURN(h.version, r.read<uint8_t>("frame version"));
  if (h.version != kVersion)
    return Error{fmt::format("agent frame: protocol version {} (this build speaks {})", h.version, kVersion)};
  TRACEBED_ASSIGN_OR_RETURN(h.flags, r.read<uint8_t>("frame flags"));
  TRACEBED_ASSIGN_OR_RETURN(h.op, r.read<uint16_t>("frame op"));
  TRACEBED_ASSIGN_OR_RETURN(h.id, r.read<uint32_t>("frame id"));
  TRACEBED_ASSIGN_OR_RETURN(h.length, r.read<uint32_t>("frame length"));
  if (h.length > max_payload)
    return Error{fmt::format("agent frame {} id {}: payload length {} exceeds the limit {}",
                             op_name(h.op), h.id, h.length, max_payload)};
  return h;
}

void encode_header(const FrameHeader& h, uint8_t out[kHeaderSize]) {
  Encoder e;
  e.u32(kMagic).u8(h.version).u8(h.flags).u16(h.op).u32(h.id).u32(h.length);
  std::memcpy(out, e.data().data(), kHeaderSize);
}

Encoder& Encoder::bytes(std::string_view data) {
  u32(static_cast<uint32_t>(data.size()));
  buf_.insert(buf_.end(), data.begin(), data.end());
  return *this;
}

Encoder& Encoder::strs(const std::vector<std::string>& list) {
  u32(static_cast<uint32_t>(list.size()));
  for (const auto& s : list) str(s);
  return *this;
}

Result<std::string_view> Decoder::bytes(std::string_view field) {
  TRACEBED_ASSIGN_OR_RETURN(uint32_t n, wrap(r_.read<uint32_t>(field)));
  if (n > r_.remaining())
    return error_at(r_.file_offset(), fmt::format("{}: length {} exceeds the {} bytes left", field, n, r_.remaining()))
        .within(context_);
  TRACEBED_ASSIGN_OR_RETURN(Bytes b, wrap(r_.read_bytes(n, field)));
  return std::string_view(reinterpret_cast<const char*>(b.data()), b.size());
}

Result<std::vector<std::string>> Decoder::strs(std::string_view field, uint32_t max_count) {
  TRACEBED_ASSIGN_OR_RETURN(uint32_t n, wrap(r_.read<uint32_t>(field)));
  if (n > max_count)
    return error_at(r_.file_offset(), fmt::format("{}: {} entries exceed the limit {}", field, n, max_count))
        .within(context_);
  std::vector<std::string> out;
  out.reserve(n);
  for (uint32_t i = 0; i < n; ++i) {
    TRACEBED_ASSIGN_OR_RETURN(std::string_view s, bytes(field));
    out.emplace_back(s);
  }
  return out;
}

Status Decoder::finish() {
  if (r_.remaining() != 0)
    return error_at(r_.file_offset(), fmt::format("{} trailing bytes after the last field", r_.remaining()))
        .within(context_);
  return {};
}

std::vector<uint8_t> make_frame(uint16_t op, uint32_t id, uint8_t flags, const std::vector<uint8_t>& payload) {
  std::vector<uint8_t> out(kHeaderSize + payload.size());
  FrameHeader h;
  h.flags = flags;
  h.op = op;
  h.id = id;
  h.length = static_cast<uint32_t>(payload.size());
  encode_header(h, out.data());
  if (!payload.empty()) std::memcpy(out.data() + kHeaderSize, payload.data(), payload.size());
  return out;
}

}  // namespace tracebed::agent
