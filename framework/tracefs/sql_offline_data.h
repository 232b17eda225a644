// The captured files the offline sqlhist compiler reads (sql_offline.cc):
// compiled in from testdata/ by sql_offline_data.cmake at build time.
#pragma once

#include <span>
#include <string_view>

namespace tracebed::tracefs {

struct OfflineFormat {
  std::string_view system, name, text;
};

// testdata/available_events-<kernel>.txt, byte for byte.
std::string_view offline_available_events_text();
// testdata/format-<name>-<kernel>.txt of each built-in event, byte for byte.
std::span<const OfflineFormat> offline_formats();

}  // namespace tracebed::tracefs
