// kallsyms in a trace.dat, v6 and v7, read on its first lookup.
#include "framework/decode/trace_dat_internal.h"

namespace tracebed::decode::trace_dat {

// kallsyms is most of a trace.dat's metadata and only symbol lookups need
// it: check where it lies now, read (and decompress) it on the first lookup.
// What can only fail then (a corrupt compressed block, a bad size inside)
// is reported by TraceContext::kallsyms_error().
Status TraceDatImpl::defer_v6_kallsyms(FileCursor& c) {
  TRACEBED_ASSIGN_OR_RETURN(uint32_t size, c.read<uint32_t>("kallsyms size"));
  const uint64_t at = c.file_offset();
  TRACEBED_TRY(c.skip(size, "kallsyms"));
  if (size == 0) return {};
  ctx_.defer_kallsyms([this, at, size](const TraceContext::KallsymsProgress&) { return stored_kallsyms(at, size); });
  return {};
}

Result<TraceContext::KallsymsText> TraceDatImpl::stored_kallsyms(uint64_t at, uint32_t size) const {
  TraceContext::KallsymsText text;
  text.size = size;
  if (map_file_) {
    if (auto mapped = file_->map(at, size, "kallsyms"); mapped.ok()) {
      text.mapped = std::move(mapped).value();
      return text;
    }
  }
  text.storage.resize(size);
  if (Status st = file_->read(at, text.storage, "kallsyms"); !st.ok()) return st.error().within(file_->path());
  return text;
}

Status TraceDatImpl::defer_v7_kallsyms() {
  auto it = opts_.sections.find(kOptKallsyms);
  if (it == opts_.sections.end()) return {};
  const uint64_t offset = it->second;
  SectionInfo head;
  if (auto header = read_section(offset, kOptKallsyms, &head, false); !header.ok()) return header.error();
  // A compressed section tells how far it is decompressed: the lines are
  // parsed meanwhile where there is a CPU to spare (TraceContext).
  ctx_.defer_kallsyms([this, offset, head](const TraceContext::KallsymsProgress& progress) -> Result<TraceContext::KallsymsText> {
    auto fail = [&](const Error& e) { return e.within(path_); };
    // Stored as it is (the header checked at open): mapped or read, as v6's is.
    if (!head.compressed() && head.size >= 4) {
      uint8_t b[4];
      if (Status st = file_->read(head.data, std::span<uint8_t>(b, 4), "kallsyms size"); !st.ok()) return fail(st.error());
      const uint32_t size = load<uint32_t>(b, ctx_.endian);
      if (size > 0 && size <= head.size - 4) return stored_kallsyms(head.data + 4, size);
    }
    // The section is the text's u32 size, then the text.
    const SectionProgress text_ready = [&](const std::shared_ptr<const ByteBuffer>& out, size_t n) {
      if (n < 4) return;
      const uint32_t size = load<uint32_t>(out->data(), ctx_.endian);
      if (size <= out->size() - 4) progress(out, reinterpret_cast<const char*>(out->data()) + 4, n - 4, size);
    };
    SectionInfo info;
    auto sec = read_section(offset, kOptKallsyms, &info, true, &text_ready);
    if (!sec.ok()) return fail(sec.error());
    const bool packed = info.compressed();
    ByteReader r(*sec, ctx_.endian, packed ? 0 : info.data);
    auto size = r.read<uint32_t>("kallsyms size");
    if (!size.ok()) return fail(size.error());
    auto bytes = r.read_bytes(*size, "kallsyms");
    if (!bytes.ok()) {
      Error e = bytes.error();
      if (packed) e = e.within(fmt::format("offset {:#x}: section {} (decompressed)", offset, kOptKallsyms));
      return fail(e);
    }
    TraceContext::KallsymsText text;
    text.offset = static_cast<size_t>(bytes->data() - sec->data());
    text.size = bytes->size();
    text.storage = std::move(sec).value();
    return text;
  }, /*in_steps=*/head.compressed());
  return {};
}

}  // namespace tracebed::decode::trace_dat
