#include "framework/base/text.h"

namespace tracebed::base {

std::vector<std::string_view> split(std::string_view s, char sep, SplitOptions options) {
  std::vector<std::string_view> out;
  for (;;) {
    size_t at = s.find(sep);
    std::string_view field = s.substr(0, at);
    if (options.trim) field = trim(field);
    if (!field.empty() || !options.skip_empty) out.push_back(field);
    if (at == std::string_view::npos) return out;
    s.remove_prefix(at + 1);
  }
}

std::vector<NumberedLine> content_lines(std::string_view text) {
  std::vector<NumberedLine> out;
  size_t number = 0;
  for (std::string_view raw : split_lines(text)) {
    ++number;
    std::string_view line = trim(raw);
    if (!line.empty() && line.front() != '#') out.push_back({number, line});
  }
  return out;
}

std::vector<std::string_view> split_lines(std::string_view text) {
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

std::vector<std::string_view> split_words(std::string_view text) {
  std::vector<std::string_view> words;
  for (text = trim_left(text); !text.empty(); text = trim_left(text)) {
    size_t e = 0;
    while (e < text.size() && !is_blank(text[e])) ++e;
    words.push_back(text.substr(0, e));
    text.remove_prefix(e);
  }
  return words;
}

}  // namespace tracebed::base
