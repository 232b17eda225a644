// The event list and formats the sqlhist compiler uses without a kernel:
// testdata/available_events-6.12.txt and testdata/format-<event>-6.12.txt,
// captured from debian-6.12 (6.12.107+deb13-cloud-amd64) and compiled in at
// build time (sql_offline_data.cmake). sql_test.cc checks they still match.
#include "framework/tracefs/sql.h"

#include <fmt/format.h>

#include "framework/tracefs/sql_offline_data.h"

namespace tracebed::tracefs {

std::string_view offline_release() { return "6.12.107+deb13-cloud-amd64"; }

std::string offline_available_events() { return std::string(offline_available_events_text()); }

std::string_view offline_format(const EventName& ev) {
  for (const OfflineFormat& f : offline_formats())
    if (f.system == ev.system && f.name == ev.name) return f.text;
  return {};
}

SqlResolver offline_resolver() {
  auto events = std::make_shared<std::vector<EventName>>();
  if (auto list = parse_event_list(offline_available_events(), "available_events")) *events = std::move(*list);
  SqlResolver r;
  r.event = [events](std::string_view name) -> Result<EventName> {
    std::vector<EventName> found;
    for (const EventName& e : *events)
      if (e.name == name) found.push_back(e);
    if (found.size() == 1) return found.front();
    if (found.empty())
      return Error{fmt::format("no event \"{}\" in the available_events of {}", name, offline_release())};
    return Error{fmt::format("event \"{}\" is in several systems: write <system>.<event>", name)};
  };
  r.format = [](const EventName& ev) -> Result<SqlFormat> {
    std::string_view text = offline_format(ev);
    if (text.empty()) {
      std::string known;
      for (const OfflineFormat& f : offline_formats()) known += fmt::format("{}{}.{}", known.empty() ? "" : ", ", f.system, f.name);
      return Error{fmt::format("no built-in format for {}.{} (built in: {}); give a kernel", ev.system, ev.name, known)};
    }
    return parse_sql_format(ev, text);
  };
  return r;
}

}  // namespace tracebed::tracefs
