// trace.dat v6 and v7 (trace-cmd's trace-cmd.dat.v6.5 / trace-cmd.dat.v7.5
// man pages; what trace-cmd 3.1.6 writes and reads in lib/trace-cmd/
// trace-input.c). Metadata is read once at open; ring-buffer data is left in
// the file and streamed by merge.cc. trace_dat_internal.h lists the other parts.
#include "framework/decode/trace_dat.h"

#include "framework/decode/trace_dat_internal.h"

namespace tracebed::decode {
namespace trace_dat {

Result<std::unique_ptr<EventStream>> TraceDatImpl::stream(std::optional<std::set<int>> cpus, bool as_trace_cmd) {
  if (!buffers_.empty() && buffers_[0].latency && spans_[0].empty())
    return Error{"latency-format file: its text is in latency_text(), it has no ring-buffer events"};
  StreamSetup s;
  s.file = file_;
  s.layout = PageLayout{ctx_.endian, ctx_.long_size};
  s.page_size = page_size_;
  s.codec = codec_;
  s.time = opts_.time;
  s.time.offset = opts_.ts_offset + user_ts_offset_;
  if (user_hz_) s.time.ts2secs = 1e9 / static_cast<double>(user_hz_);
  s.time.scaled = s.time.tsc_mult != 0 || s.time.ts2secs != 0;
  s.sync = opts_.sync;
  s.buffers = spans_;
  s.cpus = std::move(cpus);
  s.context = &ctx_;
  s.as_trace_cmd = as_trace_cmd;
  s.prefetch_chunks = decompress_ahead_;
  s.map_data = map_file_;
  return make_event_stream(std::move(s));
}

Result<std::string> TraceDatImpl::latency_text() {
  if (!latency_) return Error{"not a latency-format file"};
  if (version_ < 7) {
    const uint64_t n = file_->size() - latency_offset_;
    std::string out(n, '\0');
    TRACEBED_TRY(file_->read(latency_offset_, std::span<uint8_t>(reinterpret_cast<uint8_t*>(out.data()), n),
                             "latency text"));
    return out;
  }
  // v7: the BUFFER_TEXT section, compressed in chunks like CPU data or stored as is.
  if (!latency_compressed_) {
    std::string out(latency_size_, '\0');
    TRACEBED_TRY(file_->read(latency_offset_,
                             std::span<uint8_t>(reinterpret_cast<uint8_t*>(out.data()), out.size()),
                             "latency text"));
    return out;
  }
  CpuSpan span;
  span.offset = latency_offset_;
  span.size = latency_size_;
  span.compressed = true;
  TRACEBED_TRY(scan_chunks(*file_, span, ctx_.endian));
  std::string out;
  uint64_t pos = span.offset + 4;
  std::vector<uint8_t> z;
  for (uint32_t i = 0; i < span.chunks; ++i) {
    uint8_t h[8];
    TRACEBED_TRY(file_->read(pos, std::span<uint8_t>(h, 8), "latency chunk header"));
    const uint32_t zsize = load<uint32_t>(h, ctx_.endian), usize = load<uint32_t>(h + 4, ctx_.endian);
    z.resize(zsize);
    TRACEBED_TRY(file_->read(pos + 8, z, "latency chunk"));
    TRACEBED_TRY(check_decompressed_size(codec_, z, usize, fmt::format("offset {:#x}: latency chunk {}", pos, i)));
    const size_t old = out.size();
    out.resize(old + usize);
    TRACEBED_TRY(decompress(codec_, z, std::span<uint8_t>(reinterpret_cast<uint8_t*>(out.data()) + old, usize),
                            fmt::format("offset {:#x}: latency chunk {}", pos, i)));
    pos += 8 + uint64_t{zsize};
  }
  return out;
}

Status TraceDatImpl::read_header(FileCursor& c) {
  TRACEBED_ASSIGN_OR_RETURN(Bytes magic, c.read_bytes(10, "file header"));
  if (magic[0] != 0x17 || magic[1] != 0x08 || magic[2] != 0x44)
    return error_at(0, fmt::format("not a trace.dat file: magic {:02x} {:02x} {:02x}, want 17 08 44", magic[0],
                                   magic[1], magic[2]));
  if (std::memcmp(magic.data() + 3, "tracing", 7) != 0) return error_at(3, "not a trace.dat file: no \"tracing\" after the magic");
  TRACEBED_ASSIGN_OR_RETURN(std::string_view ver, c.read_cstring("version"));
  if (ver == "6")
    version_ = 6;
  else if (ver == "7")
    version_ = 7;
  else
    return error_at(10, fmt::format("unsupported trace.dat version \"{}\" (this reader knows 6 and 7)", ver));
  const uint64_t eat = c.file_offset();
  TRACEBED_ASSIGN_OR_RETURN(uint8_t endian, c.read<uint8_t>("endian"));
  if (endian > 1) return error_at(eat, fmt::format("endian byte {} is neither 0 (little) nor 1 (big)", endian));
  ctx_.endian = endian ? Endian::big : Endian::little;
  const uint64_t lat = c.file_offset();
  TRACEBED_ASSIGN_OR_RETURN(uint8_t long_size, c.read<uint8_t>("long size"));
  if (long_size != 4 && long_size != 8) return error_at(lat, fmt::format("long size {} is neither 4 nor 8", long_size));
  file_long_size_ = long_size;
  ctx_.long_size = long_size;
  return {};
}

Status TraceDatImpl::open(const std::string& path) {
  path_ = path;
  TRACEBED_ASSIGN_OR_RETURN(file_, DataFile::open(path));
  FileCursor c(*file_, 0, Endian::little);
  TRACEBED_TRY(read_header(c));
  FileCursor r(*file_, c.file_offset(), ctx_.endian);
  const uint64_t pat = r.file_offset();
  TRACEBED_ASSIGN_OR_RETURN(page_size_, r.read<uint32_t>("page size"));
  if (page_size_ < 16 || page_size_ > (rb::kCommitMask + 1))
    return error_at(pat, fmt::format("page size {} is out of range (16 to {})", page_size_, rb::kCommitMask + 1));
  ctx_.page_size = page_size_;
  if (version_ == 6) return read_v6(r);
  const uint64_t cat = r.file_offset();
  TRACEBED_ASSIGN_OR_RETURN(std::string_view codec, r.read_cstring("compression name"));
  auto codec_r = codec_by_name(codec);
  if (!codec_r.ok()) return codec_r.error().within(fmt::format("offset {:#x}", cat));
  codec_ = *codec_r;
  TRACEBED_ASSIGN_OR_RETURN(std::string_view codec_version, r.read_cstring("compression version"));
  (void)codec_version;  // trace-cmd only checks that its library can read the name
  TRACEBED_ASSIGN_OR_RETURN(uint64_t options, r.read<uint64_t>("offset of the first options section"));
  return read_v7(options);
}

Status TraceDatImpl::finish_buffers() {
  // Where trace-cmd 3.1.6 places each CPU's data (TraceDatCpu::trace_cmd_size):
  // compressed data is unpacked to offsets of its own, starting at 0 for the
  // top-level buffer and where it ended for every instance (trace-input.c
  // init_cpu_zfile and handle->next_offset, copied into instance handles).
  uint64_t top_end = 0;
  for (size_t b = 0; b < spans_.size(); ++b) {
    uint64_t next = b == 0 ? 0 : top_end;
    for (CpuSpan& c : spans_[b]) {
      if (c.size && (c.offset > file_->size() || c.size > file_->size() - c.offset))
        return error_at(c.offset, fmt::format("cpu {} data: {} bytes exceed file size {} (file truncated?)", c.cpu,
                                              c.size, file_->size()));
      if (c.compressed && c.size) {
        TRACEBED_TRY(scan_chunks(*file_, c, ctx_.endian));
      } else {
        c.data_size = c.size;
      }
      const uint64_t psize = c.page_size ? c.page_size : page_size_;
      uint64_t placed = c.offset;
      if (c.compressed) {
        placed = next;
        next = (next + c.data_size + psize - 1) / psize * psize;
      }
      c.trace_cmd_size = placed % psize == 0 ? c.data_size : std::min<uint64_t>(c.data_size, psize);
      TraceDatCpu cpu{c.cpu, c.offset, c.data_size};
      cpu.trace_cmd_size = c.trace_cmd_size;
      // Its --stat shows unpacked data one sub-buffer further on.
      cpu.trace_cmd_offset = c.compressed ? placed + psize : placed;
      buffers_[b].cpus.push_back(cpu);
    }
    if (b == 0) top_end = next;
  }
  return {};
}

}  // namespace trace_dat

Result<std::unique_ptr<TraceDat>> TraceDat::open(const std::string& path) {
  auto t = std::make_unique<trace_dat::TraceDatImpl>();
  Status st = t->open(path);
  if (!st.ok()) return st.error().within(path);
  return std::unique_ptr<TraceDat>(std::move(t));
}

}  // namespace tracebed::decode
