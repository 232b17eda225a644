#include "framework/decode/report_views.h"

#include <algorithm>
#include <cstring>
#include <vector>

#include <fmt/format.h>

#include "framework/decode/trace_dat.h"

namespace tracebed {

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

}  // namespace tracebed
