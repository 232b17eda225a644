// trace.dat v7 (trace-cmd.dat.v7.5): sections, possibly compressed, found
// through a chain of options sections.
#include "framework/decode/trace_dat_internal.h"

namespace tracebed::decode::trace_dat {

Result<ByteBuffer> TraceDatImpl::read_section(uint64_t offset, uint16_t want_id, SectionInfo* info, bool body,
                                              const SectionProgress* ready) {
  uint8_t h[16];
  TRACEBED_TRY(file_->read(offset, std::span<uint8_t>(h, 16), fmt::format("section {} header", want_id)));
  const uint16_t id = load<uint16_t>(h, ctx_.endian);
  const uint16_t flags = load<uint16_t>(h + 2, ctx_.endian);
  const uint64_t size = load<uint64_t>(h + 8, ctx_.endian);
  if (id != want_id)
    return error_at(offset, fmt::format("section id {}, but the option pointing here says {}", id, want_id));
  const uint64_t data = offset + 16;
  if (size > file_->size() - std::min(file_->size(), data))
    return error_at(offset, fmt::format("section {} size {} exceeds file size {}", id, size, file_->size()));
  if (info) *info = SectionInfo{flags, data, size};
  if (!(flags & kSectionCompressed)) {
    if (size > kMaxMetadataBytes)
      return error_at(offset, fmt::format("section {} size {} is implausible", id, size));
    if (!body) return ByteBuffer();
    ByteBuffer out(size);
    TRACEBED_TRY(file_->read(data, out, fmt::format("section {}", id)));
    return out;
  }
  if (size < 8) return error_at(offset, fmt::format("section {} is compressed but only {} bytes long", id, size));
  uint8_t b[8];
  TRACEBED_TRY(file_->read(data, std::span<uint8_t>(b, 8), fmt::format("section {} block header", id)));
  const uint32_t zsize = load<uint32_t>(b, ctx_.endian);
  const uint32_t usize = load<uint32_t>(b + 4, ctx_.endian);
  if (zsize > file_->size() - std::min(file_->size(), data + 8))
    return error_at(data, fmt::format("section {} compressed size {} exceeds file size {}", id, zsize, file_->size()));
  if (zsize > size - 8)
    return error_at(data, fmt::format("section {} compressed size {} exceeds the section's {} bytes", id, zsize, size));
  if (usize > kMaxMetadataBytes)
    return error_at(data, fmt::format("section {} uncompressed size {} is implausible", id, usize));
  if (!body) return ByteBuffer();
  // A large one (kallsyms) is mapped rather than copied: a fresh buffer for
  // it costs a page fault per page. Where mapping fails, it is read.
  std::shared_ptr<const uint8_t> mapped;
  ByteBuffer copy;
  if (map_file_ && zsize >= kMapSectionBytes) {
    if (auto m = file_->map(data + 8, zsize, fmt::format("section {}", id)); m.ok()) mapped = std::move(m).value();
  }
  if (!mapped) {
    copy.resize(zsize);
    TRACEBED_TRY(file_->read(data + 8, copy, fmt::format("section {}", id)));
  }
  const Bytes z = mapped ? Bytes(mapped.get(), zsize) : Bytes(copy);
  const std::string where = fmt::format("offset {:#x}: section {}", data, id);
  if (ready) {
    auto out = std::make_shared<ByteBuffer>(usize);
    TRACEBED_TRY(decompress_in_steps(codec_, z, *out, where, [&](size_t n) { (*ready)(out, n); }));
    return std::move(*out);  // the bytes do not move: what `ready` was shown stays where it was
  }
  ByteBuffer out(usize);
  TRACEBED_TRY(decompress(codec_, z, out, where));
  return out;
}

Status TraceDatImpl::read_v7(uint64_t options_offset) {
  // The option chain: each options section ends with DONE pointing at the next.
  std::set<uint64_t> seen;
  uint64_t next = options_offset;
  while (next) {
    if (!seen.insert(next).second || seen.size() > kMaxOptionSections)
      return error_at(next, "options sections form a loop");
    SectionInfo info;
    TRACEBED_ASSIGN_OR_RETURN(ByteBuffer sec, read_section(next, kOptDone, &info));
    const bool packed = info.compressed();
    ByteReader r(sec, ctx_.endian, packed ? 0 : info.data);
    opts_.done = false;
    opts_.next_options = 0;
    while (!opts_.done) {
      auto opt = [&]() -> Status {
        TRACEBED_ASSIGN_OR_RETURN(uint16_t id, r.read<uint16_t>("option id"));
        TRACEBED_ASSIGN_OR_RETURN(uint32_t size, r.read<uint32_t>("option size"));
        const uint64_t at = r.file_offset();
        TRACEBED_ASSIGN_OR_RETURN(Bytes data, r.read_bytes(size, fmt::format("option {}", id)));
        return parse_option(id, data, at, ctx_.endian, 7, opts_);
      }();
      if (!opt.ok())
        return packed ? opt.error().within(fmt::format("offset {:#x}: options section (decompressed)", next))
                      : opt.error();
      if (r.at_end() && !opts_.done) return error_at(next, "options section ends without a DONE option");
    }
    next = opts_.next_options;
  }

  // Metadata sections, in v6's order so the header page is known first.
  Sink s{ctx_, warnings_, file_long_size_, {}, nullptr};
  auto section = [&](uint16_t id, Status (*body)(ByteReader&, Sink&)) -> Status {
    auto it = opts_.sections.find(id);
    if (it == opts_.sections.end()) return {};
    SectionInfo info;
    TRACEBED_ASSIGN_OR_RETURN(ByteBuffer bytes, read_section(it->second, id, &info));
    const bool packed = info.compressed();
    auto sec = std::make_shared<const ByteBuffer>(std::move(bytes));
    ByteReader r(*sec, ctx_.endian, packed ? 0 : info.data);
    s.text_owner = sec;
    Status st = body(r, s);
    s.text_owner.reset();
    if (!st.ok() && packed)
      return st.error().within(fmt::format("offset {:#x}: section {} (decompressed)", it->second, id));
    return st;
  };
  if (!opts_.sections.count(kOptHeaderInfo)) return Error{"no header_page section (option HEADER_INFO missing)"};
  TRACEBED_TRY(section(kOptHeaderInfo, [](ByteReader& r, Sink& s) { return read_header_info(r, s); }));
  TRACEBED_TRY(section(kOptFtraceEvents, [](ByteReader& r, Sink& s) { return read_ftrace_formats(r, s); }));
  TRACEBED_TRY(section(kOptEventFormats, [](ByteReader& r, Sink& s) { return read_event_systems(r, s); }));
  TRACEBED_TRY(defer_v7_kallsyms());
  TRACEBED_TRY(section(kOptPrintk, [](ByteReader& r, Sink& s) { return read_printk(r, s); }));
  TRACEBED_TRY(section(kOptCmdlines, [](ByteReader& r, Sink& s) { return read_cmdlines(r, s); }));
  return add_buffers_v7();
}

Status TraceDatImpl::add_buffers_v7() {
  buffers_.push_back(TraceDatBuffer{});
  spans_.emplace_back();
  bool top_seen = false;
  for (BufferOption& b : opts_.buffers) {
    uint8_t h[16];
    TRACEBED_TRY(file_->read(b.offset, std::span<uint8_t>(h, 16), fmt::format("buffer \"{}\" section header", b.name)));
    const uint16_t id = load<uint16_t>(h, ctx_.endian);
    const uint16_t flags = load<uint16_t>(h + 2, ctx_.endian);
    const uint64_t size = load<uint64_t>(h + 8, ctx_.endian);
    const uint16_t want = b.latency ? kOptBufferText : kOptBuffer;
    if (id != want)
      return error_at(b.offset, fmt::format("buffer \"{}\": section id {}, want {}", b.name, id, want));
    const bool compressed = flags & kSectionCompressed;
    TraceDatBuffer tb;
    tb.name = b.name;
    tb.clock = b.clock;
    tb.latency = b.latency;
    if (b.latency) {
      latency_ = true;
      latency_compressed_ = compressed;
      latency_offset_ = b.offset + 16;
      if (size > file_->size() - std::min(file_->size(), latency_offset_))
        return error_at(b.offset, fmt::format("section {} size {} exceeds file size {}", id, size, file_->size()));
      latency_size_ = size;
    }
    const uint32_t psize = b.page_size ? b.page_size : page_size_;
    if (psize < PageLayout{ctx_.endian, ctx_.long_size}.header_size() || psize > rb::kCommitMask + 1)
      return error_at(b.offset, fmt::format("buffer \"{}\": sub-buffer size {} is out of range", b.name, psize));
    for (CpuSpan& c : b.cpus) {
      c.compressed = compressed;
      c.page_size = psize;
    }
    if (b.name.empty() && !top_seen) {
      top_seen = true;
      buffers_[0] = tb;
      spans_[0] = b.cpus;
    } else {
      buffers_.push_back(tb);
      spans_.push_back(b.cpus);
    }
  }
  // `cpus=N` in the report is libtracecmd's max_cpu: the larger of CPUCOUNT
  // and the number of CPUs the top buffer lists (edge fixture e08 lists CPUs
  // 1 and 3 of 4 and trace-cmd prints cpus=4).
  cpu_count_ = static_cast<int>(std::max<uint64_t>(opts_.cpu_count.value_or(0), spans_[0].size()));
  return finish_buffers();
}

}  // namespace tracebed::decode::trace_dat
