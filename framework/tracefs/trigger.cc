#include "framework/tracefs/trigger.h"


#include <fmt/format.h>

#include "framework/base/text.h"
#include "framework/tracefs/tracefs_text.h"

namespace tracebed::tracefs {

Trigger Trigger::enable_event(std::string_view system, std::string_view event) {
  return Trigger(fmt::format("enable_event:{}:{}", system, event));
}

Trigger Trigger::disable_event(std::string_view system, std::string_view event) {
  return Trigger(fmt::format("disable_event:{}:{}", system, event));
}

Trigger Trigger::enable_hist(std::string_view system, std::string_view event) {
  return Trigger(fmt::format("enable_hist:{}:{}", system, event));
}

Trigger Trigger::disable_hist(std::string_view system, std::string_view event) {
  return Trigger(fmt::format("disable_hist:{}:{}", system, event));
}

std::string Trigger::remove_command() const {
  if (is_hist()) {
    std::string cmd = "!" + (remove_spec_.empty() ? spec_ : remove_spec_);
    if (!filter_.empty()) cmd += " if " + filter_;
    return cmd;
  }
  return "!" + spec_ + (count_ ? ":0" : "");
}

std::string Trigger::command() const {
  std::string cmd = spec_;
  if (count_) cmd += fmt::format(":{}", *count_);
  if (!filter_.empty()) cmd += " if " + filter_;
  return cmd;
}

FunctionTrigger FunctionTrigger::enable_event(std::string_view function, std::string_view system,
                                              std::string_view event) {
  return {function, fmt::format("enable_event:{}:{}", system, event)};
}

FunctionTrigger FunctionTrigger::disable_event(std::string_view function, std::string_view system,
                                               std::string_view event) {
  return {function, fmt::format("disable_event:{}:{}", system, event)};
}

std::string FunctionTrigger::command() const {
  std::string cmd = function_ + ":" + spec_;
  if (count_) cmd += fmt::format(":{}", *count_);
  return cmd;
}

std::string FunctionTrigger::remove_command() const {
  return "!" + function_ + ":" + spec_ + (count_ ? ":0" : "");
}

bool TriggerEntry::is_action() const {
  // kernel/trace/trace_events_hist.c: onmatch(, onmax(, onchange(.
  return name == "hist" && line.find(":on") != std::string::npos && line.find('(') != std::string::npos;
}

std::string TriggerEntry::remove_command() const {
  // Function triggers: "!<function>:<trigger>[:0]", the ":0" for counted
  // ones (see FunctionTrigger::remove_command).
  if (!function.empty()) return "!" + function + ":" + spec + (count ? ":0" : "");
  // Event triggers: the line without " [active]", as ftracetest's
  // reset_trigger_file writes it; the kernel unregisters before it parses
  // the count or the filter.
  std::string_view cmd = line;
  for (std::string_view state : {" [active]", " [paused]"}) {
    if (cmd.ends_with(state)) cmd.remove_suffix(state.size());
  }
  return "!" + std::string(cmd);
}

namespace {

// Parses "traceoff:count=3 if prev_pid == 0", "enable_event:s:e:unlimited",
// "hist:keys=pid:... [active]".
Result<TriggerEntry> parse_trigger_line(std::string_view line, std::string_view file, size_t line_no) {
  TriggerEntry e;
  e.line = line;
  std::string_view rest = line;
  for (std::string_view state : {" [active]", " [paused]"}) {
    if (rest.ends_with(state)) rest.remove_suffix(state.size());
  }
  size_t if_pos = rest.find(" if ");
  if (if_pos != std::string_view::npos) {
    e.filter = trim(rest.substr(if_pos + 4));
    rest = rest.substr(0, if_pos);
  }
  rest = trim(rest);
  if (rest.empty() || rest.find(' ') != std::string_view::npos)
    return Error{fmt::format("{} line {}: expected \"<trigger>[:count=N|:unlimited][ if <filter>]\", read \"{}\"",
                             file, line_no, line)};
  size_t colon = rest.find(':');
  e.name = rest.substr(0, colon);
  size_t last = rest.rfind(':');
  std::string_view tail = last == std::string_view::npos ? std::string_view{} : rest.substr(last + 1);
  if (tail == "unlimited") {
    rest = rest.substr(0, last);
  } else if (tail.starts_with("count=")) {
    std::optional<uint64_t> n = base::parse_number<uint64_t>(tail.substr(6));
    if (!n) return Error{fmt::format("{} line {}: bad count in \"{}\"", file, line_no, line)};
    e.count = *n;
    rest = rest.substr(0, last);
  }
  e.spec = rest;
  return e;
}

}  // namespace

Result<std::vector<TriggerEntry>> parse_trigger_file(std::string_view text) {
  std::vector<TriggerEntry> out;
  size_t line_no = 0;
  for (std::string_view line : split_lines(text)) {
    ++line_no;
    if (trim(line).empty() || line.starts_with("#")) continue;
    TRACEBED_ASSIGN_OR_RETURN(TriggerEntry e, parse_trigger_line(line, "trigger", line_no));
    out.push_back(std::move(e));
  }
  return out;
}

Result<FunctionFilter> parse_function_filter(std::string_view text, std::string_view file) {
  FunctionFilter f;
  size_t line_no = 0;
  for (std::string_view line : split_lines(text)) {
    ++line_no;
    if (trim(line).empty()) continue;
    if (line.starts_with("#")) {
      // kernel/trace/ftrace.c: "#### all functions enabled ####" (or
      // "#### no functions disabled ####" for set_ftrace_notrace).
      if (line.find("all functions enabled") != std::string_view::npos) f.all_functions = true;
      continue;
    }
    size_t colon = line.find(':');
    if (colon == std::string_view::npos) {
      f.functions.emplace_back(line);
      continue;
    }
    // "<function>:<trigger>:<count=N|unlimited>"
    TRACEBED_ASSIGN_OR_RETURN(TriggerEntry e, parse_trigger_line(line.substr(colon + 1), file, line_no));
    e.function = line.substr(0, colon);
    e.line = line;
    f.triggers.push_back(std::move(e));
  }
  return f;
}

}  // namespace tracebed::tracefs
