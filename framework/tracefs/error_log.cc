#include "framework/tracefs/error_log.h"

#include <cstdint>

#include <fmt/format.h>

#include "framework/base/text.h"
#include "framework/tracefs/tracefs_text.h"

namespace tracebed::tracefs {

namespace {

// kernel/trace/trace.c: CMD_PREFIX, and the ": error: " tracing_log_err
// puts between the location and the error text.
constexpr std::string_view kCommandPrefix = "  Command: ";
constexpr std::string_view kErrorSep = ": error: ";

Error bad_line(size_t line_no, std::string_view what, std::string_view line) {
  return Error{fmt::format("error_log line {}: {}: \"{}\"", line_no, what, line)};
}

}  // namespace

std::string ErrorLogEntry::str() const {
  return fmt::format("[{:5}.{:06}] {}{}{}\n{}{}\n{}^", seconds, microseconds, location, kErrorSep, error,
                     kCommandPrefix, command, std::string(kCommandPrefix.size() + caret, ' '));
}

Result<std::vector<ErrorLogEntry>> parse_error_log(std::string_view text) {
  std::vector<ErrorLogEntry> entries;
  std::vector<std::string_view> lines = split_lines(text);
  size_t i = 0;
  while (i < lines.size()) {
    std::string_view head = lines[i];
    size_t head_no = i + 1;
    if (head.empty()) {
      ++i;
      continue;
    }
    ErrorLogEntry e;
    // "[%5llu.%06u] "
    if (head.front() != '[') return bad_line(head_no, "expected \"[seconds.micros]\"", head);
    size_t close = head.find("] ");
    size_t dot = head.find('.');
    if (close == std::string_view::npos || dot == std::string_view::npos || dot > close)
      return bad_line(head_no, "expected \"[seconds.micros]\"", head);
    std::string_view secs = trim(head.substr(1, dot - 1));
    std::string_view micros = head.substr(dot + 1, close - dot - 1);
    auto seconds = base::parse_number<uint64_t>(secs);
    auto microseconds = base::parse_number<uint32_t>(micros);
    if (!seconds || !microseconds) return bad_line(head_no, "bad time stamp", head);
    e.seconds = *seconds;
    e.microseconds = *microseconds;
    std::string_view rest = head.substr(close + 2);
    size_t sep = rest.find(kErrorSep);
    if (sep == std::string_view::npos) return bad_line(head_no, "no \": error: \"", head);
    e.location = rest.substr(0, sep);
    e.error = rest.substr(sep + kErrorSep.size());

    if (i + 2 >= lines.size()) return bad_line(head_no, "entry without Command and caret lines", head);
    std::string_view cmd = lines[i + 1];
    if (!cmd.starts_with(kCommandPrefix)) return bad_line(head_no + 1, "expected \"  Command: \"", cmd);
    e.command = cmd.substr(kCommandPrefix.size());
    std::string_view caret = lines[i + 2];
    size_t pos = caret.find('^');
    if (pos == std::string_view::npos || pos < kCommandPrefix.size() ||
        caret.find_first_not_of(' ') != pos)
      return bad_line(head_no + 2, "expected a caret under the command", caret);
    e.caret = pos - kCommandPrefix.size();
    entries.push_back(std::move(e));
    i += 3;
  }
  return entries;
}

}  // namespace tracebed::tracefs
