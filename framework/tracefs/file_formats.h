// Parsers for the small tracefs control files, one per file format.
//
// Each takes the file's text exactly as read and checks its shape: a file
// that does not look like what the kernel writes is an Error naming the
// file and line, not a silently wrong value.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <ostream>
#include <string>
#include <string_view>
#include <vector>

#include "framework/base/result.h"

namespace tracebed::tracefs {

// trace_clock: "[local] global counter ..." (the current one in brackets).
struct Selection {
  std::vector<std::string> choices;
  std::string current;
};
Result<Selection> parse_selection(std::string_view text, std::string_view file);

// buffer_size_kb: "7 (expanded: 1408)" before the first resize, "1410"
// after, and "X" at the top when the per-CPU sizes differ
// (kernel/trace/trace.c tracing_entries_read).
struct BufferSize {
  std::optional<uint64_t> kb;           // empty when the CPUs differ
  std::optional<uint64_t> expanded_kb;  // the size once expanded, if not yet
  bool cpus_differ() const { return !kb.has_value(); }
  // What a reader gets: the expanded size when there is one.
  uint64_t effective_kb() const { return expanded_kb ? *expanded_kb : kb.value_or(0); }
};
Result<BufferSize> parse_buffer_size(std::string_view text, std::string_view file);

// trace_options: one option per line, "noname" when off.
Result<std::map<std::string, bool>> parse_trace_options(std::string_view text);

// available_events, set_event: "system:event" per line.
struct EventName {
  std::string system;
  std::string name;
  std::string str() const { return system + ":" + name; }
  friend bool operator==(const EventName&, const EventName&) = default;
  friend auto operator<=>(const EventName&, const EventName&) = default;
  // So test failures print "sched:sched_switch", not bytes.
  friend std::ostream& operator<<(std::ostream& os, const EventName& e) { return os << e.str(); }
};
Result<std::vector<EventName>> parse_event_list(std::string_view text, std::string_view file);

// saved_cmdlines: "pid comm" per line.
Result<std::map<int, std::string>> parse_saved_cmdlines(std::string_view text);

// set_event_pid, set_ftrace_pid, ...: one pid per line; "no pid" when empty
// on kernels that say so for set_ftrace_pid.
Result<std::vector<int>> parse_pid_list(std::string_view text, std::string_view file);

// The "ID: 372" line of an event's format file.
Result<int> parse_format_id(std::string_view format_text);

// A single unsigned number (tracing_on, id, max_graph_depth, ...).
Result<uint64_t> parse_number(std::string_view text, std::string_view file);

}  // namespace tracebed::tracefs
