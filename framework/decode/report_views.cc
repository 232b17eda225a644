#include "framework/decode/report_views.h"

#include <algorithm>
#include <cstring>
#include <set>
#include <vector>

#include <fmt/format.h>

#include "framework/decode/plugins.h"
#include "framework/decode/report.h"
#include "framework/decode/report_text.h"
#include "framework/decode/text_out.h"
#include "framework/decode/trace_dat.h"

namespace tracebed::decode {

using namespace std::string_view_literals;

namespace {

Status put(const std::string& text, std::FILE* out) {
  if (std::fwrite(text.data(), 1, text.size(), out) != text.size()) return Error{"write error on output"};
  return {};
}

// printf's "%s" and "%.*s" stop at a NUL.
std::string_view c_string(std::string_view s) { return s.substr(0, s.find('\0')); }

}  // namespace

Status write_event_list(TraceDat& file, std::FILE* out) {
  std::vector<const EventFormat*> events;
  for (const auto& event : file.context().events()) events.push_back(event.get());
  // libtraceevent's events_system_cmp: strcmp of the systems, then of the
  // names, then the ids.
  std::sort(events.begin(), events.end(), [](const EventFormat* a, const EventFormat* b) {
    if (int c = std::strcmp(a->system.c_str(), b->system.c_str())) return c < 0;
    if (int c = std::strcmp(a->name.c_str(), b->name.c_str())) return c < 0;
    return a->id < b->id;
  });
  std::string text;
  for (const EventFormat* event : events) text += fmt::format("{}:{}\n", event->system, event->name);
  if (std::fwrite(text.data(), 1, text.size(), out) != text.size()) return Error{"write error on output"};
  return {};
}

Status write_cpu_list(TraceDat& file, const std::string& shown_path, CpuListStamps stamps, std::FILE* out) {
  // trace-read.c (show_cpus): tracecmd_read_cpu_first() of each CPU up to
  // tracecmd_cpus(); a CPU with a record gets a line.
  std::string text = fmt::format("List of CPUs in {} with data:\n", shown_path);
  const bool in_ns = file.stamps_in_ns();
  // show_event_ts prints a stamp as a report line's head does, without the
  // colon: "%9.1d" (-t), "%6.1000d" (µs, rounded), "%12d" for raw counters.
  auto append_stamp = [&](TextOut& line, uint64_t ts) {
    if (!in_ns)
      append_uint(line, ts, 12);
    else if (stamps.raw_timestamps)
      append_event_time(ts, 9, 1, line);
    else
      append_event_time(ts, 6, 1000, line);
  };
  std::set<int> cpus;
  if (!file.buffers().empty())
    for (const TraceDatCpu& cpu : file.buffers()[0].cpus) cpus.insert(cpu.cpu);
  for (int cpu : cpus) {
    // tracecmd_read_cpu_first/last read the top-level buffer only.
    auto stream = file.trace_cmd_events(std::set<int>{cpu});
    if (!stream) return stream.error();
    bool any = false;
    uint64_t first_ts = 0, last_ts = 0;
    Status st = (*stream)->for_each([&](const Record& record) {
      if (record.buffer != 0 || record.cpu != cpu) return true;
      if (!any) first_ts = record.ts;
      any = true;
      last_ts = record.ts;
      // Only the last stamp needs the rest of the CPU's records.
      return stamps.last;
    });
    if (!st) return st;
    if (!any) continue;
    TextOut line(text);
    line += "  "sv;
    append_uint(line, static_cast<uint64_t>(cpu));
    if (stamps.first) {
      line += "\tFirst event:"sv;
      append_stamp(line, first_ts);
    }
    if (stamps.last) {
      line += "\tLast event:"sv;
      append_stamp(line, last_ts);
    }
    line += '\n';
  }
  return put(text, out);
}

Status write_event_formats(TraceDat& file, std::FILE* out) {
  std::string text, last_system;
  bool any = false;
  // trace-input.c read_event_file: "\nsystem: %s\n" before a system's
  // first format, then each format and a newline.
  Status st = file.for_each_stored_event_format([&](std::string_view system, std::string_view format) {
    if (!any || system != last_system) text += fmt::format("\nsystem: {}\n", c_string(system));
    any = true;
    last_system = std::string(system);
    text += c_string(format);
    text += '\n';
  });
  if (!st) return st;
  return put(text, out);
}

Status write_functions(TraceDat& file, std::FILE* out) {
  std::string text;
  file.context().for_each_symbol([&](const Symbol& s) {
    text += fmt::format("{:016x} {}", s.address, s.name);
    text += s.module.empty() ? std::string("\n") : fmt::format(" [{}]\n", s.module);
  });
  TRACEBED_TRY(put(text, out));
  if (file.context().kallsyms_error()) return *file.context().kallsyms_error();
  return {};
}

Status write_printk_formats(TraceDat& file, std::FILE* out) {
  std::string text;
  for (const auto& p : file.context().printk_formats_listed())
    text += fmt::format("{:016x} {}\n", p.address, c_string(p.text));
  return put(text, out);
}

Status write_stats(TraceDat& file, std::FILE* out) {
  if (!file.buffers().empty() && file.buffers()[0].latency) return write_report(file, ReportOptions{}, out);
  std::string text = fmt::format("cpus={}\n", file.cpu_count());
  text +=
      "\nKernel buffer statistics:\n"
      "  Note: \"entries\" are the entries left in the kernel ring buffer and are not\n"
      "        recorded in the trace data. They should all be zero.\n\n";
  const std::string& stats = file.cpu_stats();
  text += stats.empty() ? std::string(" No stats in this file") : std::string(c_string(stats));
  text += '\n';
  // trace-input.c show_cpu_stats: every CPU up to the highest with data
  // (v7 lists only those; the others print as zeros), or v6's table.
  std::vector<const TraceDatCpu*> by_id;
  if (!file.buffers().empty())
    for (const TraceDatCpu& cpu : file.buffers()[0].cpus) {
      if (cpu.cpu < 0) continue;
      if (static_cast<size_t>(cpu.cpu) >= by_id.size()) by_id.resize(static_cast<size_t>(cpu.cpu) + 1, nullptr);
      by_id[static_cast<size_t>(cpu.cpu)] = &cpu;
    }
  for (size_t i = 0; i < by_id.size(); ++i) {
    const uint64_t offset = by_id[i] ? by_id[i]->trace_cmd_offset : 0;
    const uint64_t size = by_id[i] ? by_id[i]->size : 0;
    text += fmt::format("CPU{} data recorded at offset={:#x}\n    {} bytes in size\n", i, offset, size);
  }
  return put(text, out);
}

}  // namespace tracebed::decode
