// Small text helpers shared by the tracefs file parsers.
#pragma once

#include <string_view>
#include <vector>

namespace tracebed::tracefs {

inline std::string_view trim(std::string_view s) {
  constexpr std::string_view ws = " \t\r\n";
  size_t b = s.find_first_not_of(ws);
  if (b == std::string_view::npos) return {};
  size_t e = s.find_last_not_of(ws);
  return s.substr(b, e - b + 1);
}

// Lines without their '\n'; a final line without a newline still counts.
inline std::vector<std::string_view> split_lines(std::string_view text) {
  std::vector<std::string_view> lines;
  while (!text.empty()) {
    size_t nl = text.find('\n');
    if (nl == std::string_view::npos) {
      lines.push_back(text);
      break;
    }
    lines.push_back(text.substr(0, nl));
    text.remove_prefix(nl + 1);
  }
  return lines;
}

// The non-empty fields of a ';'-separated list, each trimmed (how the
// kernel shows synthetic and user event fields in dynamic_events).
inline std::vector<std::string_view> split_fields(std::string_view text) {
  std::vector<std::string_view> fields;
  for (;;) {
    size_t semi = text.find(';');
    std::string_view f = trim(text.substr(0, semi));
    if (!f.empty()) fields.push_back(f);
    if (semi == std::string_view::npos) return fields;
    text.remove_prefix(semi + 1);
  }
}

// Words separated by blanks (spaces, tabs, newlines).
inline std::vector<std::string_view> split_words(std::string_view text) {
  std::vector<std::string_view> words;
  constexpr std::string_view ws = " \t\r\n";
  size_t i = 0;
  while ((i = text.find_first_not_of(ws, i)) != std::string_view::npos) {
    size_t e = text.find_first_of(ws, i);
    if (e == std::string_view::npos) e = text.size();
    words.push_back(text.substr(i, e - i));
    i = e;
  }
  return words;
}

}  // namespace tracebed::tracefs
