// Text helpers every layer needs: blanks trimmed, lines and fields split,
// numbers parsed from a view. All of them return views into their input.
//
//   for (std::string_view line : base::split_lines(text))
//     if (auto n = base::parse_number<uint32_t>(base::trim(line))) ids.push_back(*n);
#pragma once

#include <charconv>
#include <concepts>
#include <optional>
#include <string_view>
#include <vector>

namespace tracebed::base {

// C-locale isspace(): ' ', '\t', '\n', '\v', '\f', '\r'.
constexpr bool is_blank(char c) { return c == ' ' || (c >= '\t' && c <= '\r'); }

constexpr std::string_view trim_left(std::string_view s) {
  while (!s.empty() && is_blank(s.front())) s.remove_prefix(1);
  return s;
}

constexpr std::string_view trim_right(std::string_view s) {
  while (!s.empty() && is_blank(s.back())) s.remove_suffix(1);
  return s;
}

constexpr std::string_view trim(std::string_view s) { return trim_right(trim_left(s)); }

struct SplitOptions {
  bool trim = false;        // blanks around each field removed
  bool skip_empty = false;  // fields empty (after trimming) left out
};

// The fields between `sep`s: "a,,b" is three, "" is one empty field, unless
// options say otherwise.
//   base::split("0, 2,,3", ',', {.trim = true, .skip_empty = true})  // "0", "2", "3"
std::vector<std::string_view> split(std::string_view s, char sep, SplitOptions options = {});

// Lines without their '\n'; a final line without a newline still counts,
// a final newline does not start an empty line.
std::vector<std::string_view> split_lines(std::string_view text);

// The lines of a list file that say something (coverage lists, the
// dynamic_events file): trimmed, with their numbers from 1, without the
// blank ones and those starting with '#'.
struct NumberedLine {
  size_t number;
  std::string_view text;
};
std::vector<NumberedLine> content_lines(std::string_view text);

// Words separated by blanks.
std::vector<std::string_view> split_words(std::string_view text);

// All of `s` as a T in `radix` (2 to 36), or nullopt: nothing around the
// digits (trim first where blanks are allowed), no overflow. Radix 16 takes
// an optional 0x; radix 0 reads a C literal as strtoul(s, NULL, 0) and the
// kernel's kstrtoul(s, 0) do: 0x hex, a leading 0 octal, else decimal.
template <std::integral T>
std::optional<T> parse_number(std::string_view s, int radix = 10) {
  auto hex_prefix = [&] { return s.size() > 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X'); };
  if (radix == 0) {
    radix = hex_prefix() ? 16 : s.size() > 1 && s[0] == '0' ? 8 : 10;
    if (radix == 8) s.remove_prefix(1);
  }
  if (radix == 16 && hex_prefix()) s.remove_prefix(2);
  T v{};
  const char* end = s.data() + s.size();
  auto [p, ec] = std::from_chars(s.data(), end, v, radix);
  if (s.empty() || ec != std::errc{} || p != end) return std::nullopt;
  return v;
}

}  // namespace tracebed::base
