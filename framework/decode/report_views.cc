#include "framework/decode/report_views.h"

#include <algorithm>
#include <cstring>
#include <set>
#include <vector>

#include <fmt/format.h>

#include "framework/decode/trace_dat.h"

namespace tracebed::decode {

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

Status write_first_last_events(TraceDat& file, const std::string& shown_path, bool first, bool last,
                               std::FILE* out) {
  std::string text = fmt::format("List of CPUs in {} with data:\n", shown_path);
  const bool in_ns = file.stamps_in_ns();
  // trace-read.c prints seconds as "%12.6f" of a double, raw counters as
  // "%12llu".
  auto stamp = [&](uint64_t ts) {
    return in_ns ? fmt::format("{:12.6f}", static_cast<double>(ts) / 1e9) : fmt::format("{:12}", ts);
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
      return first && !last ? false : true;
    });
    if (!st) return st;
    if (!any) continue;
    text += fmt::format("  {}", cpu);
    if (first) text += "\tFirst event:" + stamp(first_ts);
    if (last) text += "\tLast event:" + stamp(last_ts);
    text += '\n';
  }
  if (std::fwrite(text.data(), 1, text.size(), out) != text.size()) return Error{"write error on output"};
  return {};
}

}  // namespace tracebed::decode
