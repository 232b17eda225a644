// trace.dat v6 (trace-cmd.dat.v6.5): metadata in a fixed order straight from
// the file, then options and a "flyrecord" (or "latency") CPU table.
#include "framework/decode/trace_dat_internal.h"

namespace tracebed::decode::trace_dat {

Status TraceDatImpl::read_v6(FileCursor& c) {
  Sink s{ctx_, warnings_, file_long_size_, {}, nullptr};
  TRACEBED_TRY(read_header_info(c, s));
  TRACEBED_TRY(read_ftrace_formats(c, s));
  event_systems_offset_ = c.file_offset();
  TRACEBED_TRY(read_event_systems(c, s));
  TRACEBED_TRY(defer_v6_kallsyms(c));
  TRACEBED_TRY(read_printk(c, s));
  TRACEBED_TRY(read_cmdlines(c, s));
  TRACEBED_ASSIGN_OR_RETURN(uint32_t cpus, c.read<uint32_t>("cpu count"));
  uint64_t at = c.file_offset();
  TRACEBED_ASSIGN_OR_RETURN(Bytes tag, c.read_bytes(10, "options/flyrecord tag"));
  if (as_text(tag).starts_with("options")) {
    TRACEBED_TRY(read_v6_options(c, opts_));
    at = c.file_offset();
    TRACEBED_ASSIGN_OR_RETURN(tag, c.read_bytes(10, "flyrecord tag"));
  }
  if (opts_.cpu_count) cpus = *opts_.cpu_count;
  cpu_count_ = static_cast<int>(cpus);
  TraceDatBuffer top;
  std::vector<CpuSpan> top_spans;
  if (as_text(tag).starts_with("latency")) {
    latency_ = true;
    top.latency = true;
    // trace-input.c init_data_v6 reads a trace clock blob (u64 size + text)
    // after the tag whenever a TRACECLOCK option was seen, latency or not;
    // when the size is impossible it stops after the 8 bytes. The text
    // trace-cmd prints starts where that leaves the file.
    if (opts_.use_trace_clock && c.remaining() >= 8) {
      TRACEBED_ASSIGN_OR_RETURN(uint64_t size, c.read<uint64_t>("trace clock size"));
      if (size <= c.remaining()) {
        auto clock = c.read_bytes(size, "trace clock");
        if (!clock.ok()) return clock.error();
      }
    }
    latency_offset_ = c.file_offset();
  } else if (as_text(tag).starts_with("flyrecord")) {
    TRACEBED_TRY(read_v6_cpu_table(c, cpus, top_spans));
    if (opts_.use_trace_clock) {
      // The trace_clock file: "local [global] counter ..."; the bracketed one
      // is in use. trace-cmd falls back to "local" when the blob is unreadable
      // ("File has trace_clock bug, using local clock").
      auto clock = read_sized_text<FileCursor, uint64_t>(c, "trace clock");
      if (clock.ok()) {
        std::string_view t = as_text(*clock);
        const size_t open = t.find('[');
        const size_t close = open == std::string_view::npos ? open : t.find(']', open);
        if (close != std::string_view::npos) top.clock = std::string(t.substr(open + 1, close - open - 1));
      } else {
        warnings_.push_back(clock.error().message + " (using the local clock, as trace-cmd does)");
        top.clock = "local";
      }
    }
  } else {
    return error_at(at, "expected \"options\", \"latency\" or \"flyrecord\"");
  }
  buffers_.push_back(top);
  spans_.push_back(std::move(top_spans));
  TRACEBED_TRY(read_v6_instances(cpus));
  return finish_buffers();
}

// Instances: each BUFFER option points at its own "flyrecord" CPU table.
Status TraceDatImpl::read_v6_instances(uint32_t cpus) {
  for (const BufferOption& b : opts_.buffers) {
    FileCursor bc(*file_, b.offset, ctx_.endian);
    TRACEBED_ASSIGN_OR_RETURN(Bytes btag, bc.read_bytes(10, fmt::format("buffer \"{}\" tag", b.name)));
    if (as_text(btag).starts_with("options")) {
      // An instance's own options (trace-cmd reads them into the instance's
      // handle); they must not add to the list this loop walks.
      Options ignored;
      TRACEBED_TRY(read_v6_options(bc, ignored));
      TRACEBED_ASSIGN_OR_RETURN(btag, bc.read_bytes(10, fmt::format("buffer \"{}\" tag", b.name)));
    }
    if (!as_text(btag).starts_with("flyrecord"))
      return error_at(b.offset, fmt::format("buffer \"{}\": expected \"flyrecord\"", b.name));
    TraceDatBuffer tb;
    tb.name = b.name;
    tb.clock = buffers_[0].clock;
    std::vector<CpuSpan> sp;
    TRACEBED_TRY(read_v6_cpu_table(bc, cpus, sp));
    if (b.name.empty()) {
      buffers_[0].cpus.clear();
      spans_[0] = std::move(sp);
    } else {
      buffers_.push_back(tb);
      spans_.push_back(std::move(sp));
    }
  }
  return {};
}

Status TraceDatImpl::read_v6_options(FileCursor& c, Options& into) {
  // Each option takes at least 6 bytes of the file, so this ends.
  for (;;) {
    TRACEBED_ASSIGN_OR_RETURN(uint16_t id, c.read<uint16_t>("option id"));
    if (id == kOptDone) return {};
    const uint64_t at = c.file_offset();
    TRACEBED_ASSIGN_OR_RETURN(uint32_t size, c.read<uint32_t>("option size"));
    TRACEBED_ASSIGN_OR_RETURN(Bytes data, c.read_bytes(size, fmt::format("option {}", id)));
    std::vector<uint8_t> copy(data.begin(), data.end());
    TRACEBED_TRY(parse_option(id, copy, at + 4, ctx_.endian, 6, into));
  }
}

Status TraceDatImpl::read_v6_cpu_table(FileCursor& c, uint32_t cpus, std::vector<CpuSpan>& out) {
  if (cpus > c.remaining() / 16)
    return error_at(c.file_offset(), fmt::format("cpu table of {} cpus exceeds file size {}", cpus, file_->size()));
  for (uint32_t i = 0; i < cpus; ++i) {
    CpuSpan s;
    s.cpu = static_cast<int>(i);
    TRACEBED_ASSIGN_OR_RETURN(s.offset, c.read<uint64_t>("cpu data offset"));
    TRACEBED_ASSIGN_OR_RETURN(s.size, c.read<uint64_t>("cpu data size"));
    out.push_back(s);
  }
  return {};
}

}  // namespace tracebed::decode::trace_dat

namespace tracebed::decode::trace_dat {

// Re-reads the event systems of a v6 file with the same checks as at open
// (read_event_systems). v7 keeps them in a section trace-cmd 3.1.6's
// `--events` never reads: nothing to visit.
Status TraceDatImpl::for_each_stored_event_format(
    const std::function<void(std::string_view system, std::string_view text)>& visit) {
  if (version_ != 6 || event_systems_offset_ == 0) return {};
  FileCursor c(*file_, event_systems_offset_, ctx_.endian);
  TRACEBED_ASSIGN_OR_RETURN(uint32_t systems, read_count(c, "event system count", 5));
  for (uint32_t i = 0; i < systems; ++i) {
    TRACEBED_ASSIGN_OR_RETURN(std::string_view name_view, c.read_cstring("event system name"));
    const std::string name(name_view);
    TRACEBED_ASSIGN_OR_RETURN(uint32_t count, read_count(c, "event format count", 8, name));
    for (uint32_t f = 0; f < count; ++f) {
      TRACEBED_ASSIGN_OR_RETURN(uint64_t size, c.read<uint64_t>("event format size"));
      TRACEBED_ASSIGN_OR_RETURN(Bytes text, c.read_bytes(size, "event format"));
      visit(name, as_text(text));
    }
  }
  return {};
}

}  // namespace tracebed::decode::trace_dat
