#include "framework/base/utf8.h"

namespace tracebed::base {

size_t utf8_char_length(std::string_view s) {
  if (s.empty()) return 0;
  auto byte = [&](size_t i) { return static_cast<unsigned char>(s[i]); };
  unsigned char b = byte(0);
  if (b < 0x80) return 1;
  size_t n = b >= 0xf0 ? 4 : b >= 0xe0 ? 3 : b >= 0xc0 ? 2 : 0;
  if (n == 0 || b > 0xf4 || b == 0xc0 || b == 0xc1 || s.size() < n) return 0;
  for (size_t i = 1; i < n; ++i)
    if ((byte(i) & 0xc0) != 0x80) return 0;
  // The second byte's range rules out overlongs, surrogates and > U+10FFFF.
  unsigned char c = byte(1);
  if ((b == 0xe0 && c < 0xa0) || (b == 0xed && c > 0x9f) || (b == 0xf0 && c < 0x90) || (b == 0xf4 && c > 0x8f))
    return 0;
  return n;
}

std::string valid_utf8(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  while (!s.empty()) {
    size_t n = utf8_char_length(s);
    if (n == 0) {
      out += "\xEF\xBF\xBD";
      n = 1;
    } else {
      out.append(s.substr(0, n));
    }
    s.remove_prefix(n);
  }
  return out;
}

}  // namespace tracebed::base
