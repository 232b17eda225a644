// trace.dat options (trace-cmd.dat.v7.5, OPTIONS SECTION; v6 stores the same
// ids between the metadata and the CPU data): what each one changes.
#include <cstdlib>

#include "framework/decode/trace_dat_internal.h"

namespace tracebed::decode::trace_dat {

namespace {

// TIME_SHIFT (a guest's clock against its host's):
// u64 peer trace id, u32 flags, u32 cpu count; per CPU: u32 count and
// count times, offsets and scalings (s64); then, if present, count
// fractions per CPU (trace-input.c tsync_cpu_offsets_load).
Result<std::shared_ptr<TimeSync>> parse_time_shift(ByteReader& r) {
  auto sync = std::make_shared<TimeSync>();
  TRACEBED_TRY(r.skip(8, "TIME_SHIFT trace id"));
  TRACEBED_ASSIGN_OR_RETURN(sync->flags, r.read<uint32_t>("TIME_SHIFT flags"));
  TRACEBED_ASSIGN_OR_RETURN(uint32_t ncpu, r.read<uint32_t>("TIME_SHIFT cpu count"));
  if (ncpu > r.remaining() / 4)
    return error_at(r.file_offset(), fmt::format("TIME_SHIFT: {} cpus cannot fit in {} bytes", ncpu, r.remaining()));
  sync->cpus.resize(ncpu);
  for (auto& samples : sync->cpus) {
    TRACEBED_ASSIGN_OR_RETURN(uint32_t count, r.read<uint32_t>("TIME_SHIFT sample count"));
    if (count > r.remaining() / 24)
      return error_at(r.file_offset(),
                      fmt::format("TIME_SHIFT: {} samples cannot fit in {} bytes", count, r.remaining()));
    samples.resize(count);
    for (int64_t TimeSync::Sample::*field : {&TimeSync::Sample::time, &TimeSync::Sample::offset, &TimeSync::Sample::scaling})
      for (auto& smp : samples) {
        TRACEBED_ASSIGN_OR_RETURN(uint64_t v, r.read<uint64_t>("TIME_SHIFT sample"));
        smp.*field = static_cast<int64_t>(v);
      }
  }
  if (!r.at_end()) {
    for (auto& samples : sync->cpus)
      for (auto& smp : samples) {
        TRACEBED_ASSIGN_OR_RETURN(uint64_t v, r.read<uint64_t>("TIME_SHIFT fraction"));
        smp.fraction = static_cast<int64_t>(v);
      }
  }
  for (auto& samples : sync->cpus) {
    std::stable_sort(samples.begin(), samples.end(),
                     [](const TimeSync::Sample& a, const TimeSync::Sample& b) { return a.time < b.time; });
    samples.erase(std::unique(samples.begin(), samples.end(),
                              [](const TimeSync::Sample& a, const TimeSync::Sample& b) { return a.time == b.time; }),
                  samples.end());
  }
  return sync;
}

// BUFFER and BUFFER_TEXT: an instance's name and where its data lies (and,
// from v7, its clock, sub-buffer size and CPUs).
Result<BufferOption> parse_buffer_option(uint16_t id, ByteReader& r, int version) {
  BufferOption b;
  TRACEBED_ASSIGN_OR_RETURN(b.offset, r.read<uint64_t>("BUFFER option offset"));
  TRACEBED_ASSIGN_OR_RETURN(std::string_view name, r.read_cstring("BUFFER option name"));
  b.name = std::string(name);
  b.latency = id == kOptBufferText;
  if (version >= 7) {
    TRACEBED_ASSIGN_OR_RETURN(std::string_view clock, r.read_cstring("BUFFER option clock"));
    b.clock = std::string(clock);
    if (r.remaining() >= 4) {
      TRACEBED_ASSIGN_OR_RETURN(b.page_size, r.read<uint32_t>("BUFFER option page size"));
    }
    if (id == kOptBuffer) {
      TRACEBED_ASSIGN_OR_RETURN(uint32_t cpus, r.read<uint32_t>("BUFFER option cpu count"));
      if (cpus > r.remaining() / 20)
        return error_at(r.file_offset(), fmt::format("BUFFER option: {} cpus cannot fit in {} bytes", cpus,
                                                     r.remaining()));
      for (uint32_t i = 0; i < cpus; ++i) {
        CpuSpan c;
        TRACEBED_ASSIGN_OR_RETURN(uint32_t cpu, r.read<uint32_t>("BUFFER option cpu id"));
        c.cpu = static_cast<int>(cpu);
        TRACEBED_ASSIGN_OR_RETURN(c.offset, r.read<uint64_t>("BUFFER option cpu offset"));
        TRACEBED_ASSIGN_OR_RETURN(c.size, r.read<uint64_t>("BUFFER option cpu size"));
        b.cpus.push_back(c);
      }
    }
  }
  return b;
}

}  // namespace

Status parse_option(uint16_t id, Bytes data, uint64_t at, Endian e, int version, Options& o) {
  ByteReader r(data, e, at);
  auto text_number = [&](int64_t& out) {
    const std::string t = option_text(data);
    out = std::strtoll(t.c_str(), nullptr, 0);
  };
  switch (id) {
    case kOptDate: {  // µs between the stamps and the wall clock, as text
      int64_t v = 0;
      text_number(v);
      o.ts_offset += v * 1000;
      break;
    }
    case kOptOffset: {
      int64_t v = 0;
      text_number(v);
      o.ts_offset += v;
      break;
    }
    case kOptTsc2Nsec:
      if (data.size() >= 16) {
        o.time.tsc_mult = static_cast<int32_t>(load<uint32_t>(data.data(), e));
        o.time.tsc_shift = load<uint32_t>(data.data() + 4, e);
      }
      break;
    case kOptTimeShift: {
      if (data.size() < 16) break;
      TRACEBED_ASSIGN_OR_RETURN(o.sync, parse_time_shift(r));
      break;
    }
    case kOptTraceClock:
      o.use_trace_clock = true;
      break;
    case kOptCpuStat:
      // trace-input.c: the last byte (the payload's NUL) becomes a newline.
      if (!data.empty()) {
        o.cpu_stats.append(as_text(data.first(data.size() - 1)));
        o.cpu_stats += '\n';
      }
      break;
    case kOptUname:
      o.uname = option_text(data);
      break;
    case kOptCpuCount:
      if (data.size() >= 4) o.cpu_count = load<uint32_t>(data.data(), e);
      break;
    case kOptBuffer:
    case kOptBufferText: {
      TRACEBED_ASSIGN_OR_RETURN(BufferOption b, parse_buffer_option(id, r, version));
      o.buffers.push_back(std::move(b));
      break;
    }
    case kOptHeaderInfo:
    case kOptFtraceEvents:
    case kOptEventFormats:
    case kOptKallsyms:
    case kOptPrintk:
    case kOptCmdlines:
      if (version >= 7 && data.size() >= 8) o.sections[id] = load<uint64_t>(data.data(), e);
      break;
    case kOptDone:
      if (data.size() >= 8) o.next_options = load<uint64_t>(data.data(), e);
      o.done = true;
      break;
    default:  // VERSION, HOOK, PROCMAPS, TRACEID, GUEST and unknown ids change nothing we print
      break;
  }
  return {};
}

}  // namespace tracebed::decode::trace_dat
