#include "framework/tracefs/file_formats.h"


#include <fmt/format.h>

#include "framework/base/text.h"
#include "framework/tracefs/tracefs_text.h"

namespace tracebed::tracefs {

namespace {

template <typename T>
bool to_number(std::string_view s, T& out) {
  std::optional<T> v = base::parse_number<T>(s);
  if (v) out = *v;
  return v.has_value();
}

}  // namespace

Result<uint64_t> parse_number(std::string_view text, std::string_view file) {
  uint64_t v = 0;
  if (!to_number(trim(text), v)) return Error{fmt::format("{}: expected a number, read \"{}\"", file, trim(text))};
  return v;
}

Result<Selection> parse_selection(std::string_view text, std::string_view file) {
  Selection s;
  for (std::string_view w : split_words(text)) {
    if (w.size() >= 2 && w.front() == '[' && w.back() == ']') {
      w = w.substr(1, w.size() - 2);
      if (!s.current.empty()) return Error{fmt::format("{}: two selected entries in \"{}\"", file, trim(text))};
      s.current = w;
    }
    s.choices.emplace_back(w);
  }
  if (s.current.empty()) return Error{fmt::format("{}: no [selected] entry in \"{}\"", file, trim(text))};
  return s;
}

Result<BufferSize> parse_buffer_size(std::string_view text, std::string_view file) {
  std::string_view t = trim(text);
  BufferSize b;
  if (t == "X") return b;
  size_t paren = t.find(" (expanded: ");
  std::string_view size = paren == std::string_view::npos ? t : t.substr(0, paren);
  uint64_t kb = 0;
  if (!to_number(size, kb)) return Error{fmt::format("{}: expected \"<kb>\", \"<kb> (expanded: <kb>)\" or \"X\", read \"{}\"", file, t)};
  b.kb = kb;
  if (paren != std::string_view::npos) {
    std::string_view exp = t.substr(paren + 12);
    uint64_t e = 0;
    if (!exp.ends_with(')') || !to_number(exp.substr(0, exp.size() - 1), e))
      return Error{fmt::format("{}: bad \"(expanded: <kb>)\" in \"{}\"", file, t)};
    b.expanded_kb = e;
  }
  return b;
}

Result<std::map<std::string, bool>> parse_trace_options(std::string_view text) {
  std::map<std::string, bool> opts;
  for (std::string_view line : split_lines(text)) {
    line = trim(line);
    if (line.empty()) continue;
    if (line.find(' ') != std::string_view::npos)
      return Error{fmt::format("trace_options: unexpected line \"{}\"", line)};
    // Option names never start with "no" (options/ lists them), so the
    // prefix is the kernel's "off" marker.
    if (line.starts_with("no")) opts[std::string(line.substr(2))] = false;
    else opts[std::string(line)] = true;
  }
  return opts;
}

Result<std::vector<EventName>> parse_event_list(std::string_view text, std::string_view file) {
  std::vector<EventName> events;
  size_t line_no = 0;
  for (std::string_view line : split_lines(text)) {
    ++line_no;
    line = trim(line);
    if (line.empty()) continue;
    size_t colon = line.find(':');
    if (colon == std::string_view::npos || colon == 0 || colon + 1 == line.size())
      return Error{fmt::format("{} line {}: expected \"system:event\", read \"{}\"", file, line_no, line)};
    events.push_back(EventName{std::string(line.substr(0, colon)), std::string(line.substr(colon + 1))});
  }
  return events;
}

Result<std::map<int, std::string>> parse_saved_cmdlines(std::string_view text) {
  std::map<int, std::string> out;
  size_t line_no = 0;
  for (std::string_view line : split_lines(text)) {
    ++line_no;
    if (trim(line).empty()) continue;
    // The comm may contain spaces ("kworker/u8:1 ..." does not, but user
    // comms can): only the first space separates.
    size_t sp = line.find(' ');
    int pid = 0;
    if (sp == std::string_view::npos || !to_number(line.substr(0, sp), pid))
      return Error{fmt::format("saved_cmdlines line {}: expected \"<pid> <comm>\", read \"{}\"", line_no, line)};
    out[pid] = std::string(line.substr(sp + 1));
  }
  return out;
}

Result<std::vector<int>> parse_pid_list(std::string_view text, std::string_view file) {
  std::vector<int> pids;
  for (std::string_view w : split_words(text)) {
    if (w == "no" || w == "pid") continue;  // "no pid" (kernel/trace/ftrace.c, older kernels)
    int pid = 0;
    if (!to_number(w, pid)) return Error{fmt::format("{}: expected pids, read \"{}\"", file, w)};
    pids.push_back(pid);
  }
  return pids;
}

Result<int> parse_format_id(std::string_view format_text) {
  for (std::string_view line : split_lines(format_text)) {
    if (!line.starts_with("ID:")) continue;
    int id = 0;
    if (!to_number(trim(line.substr(3)), id)) return Error{fmt::format("format: bad ID line \"{}\"", line)};
    return id;
  }
  return Error{"format: no \"ID:\" line"};
}

}  // namespace tracebed::tracefs
