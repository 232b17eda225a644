#include "suites/modules/event_text.h"

#include <fmt/format.h>

namespace tracebed::suites {

std::vector<std::string> event_bodies(const std::vector<std::string>& trace_lines, std::string_view event) {
  std::vector<std::string> out;
  std::string marker = fmt::format(" {}: ", event);
  for (const auto& line : trace_lines) {
    size_t pos = line.find(marker);
    if (pos != std::string::npos) out.push_back(line.substr(pos + marker.size()));
  }
  return out;
}

std::string hex_string(std::string_view bytes) {
  std::string out;
  for (unsigned char c : bytes) out += fmt::format("{:02x}", c);
  return out;
}

std::string print_hex(std::string_view bytes) {
  std::string out;
  for (size_t i = 0; i < bytes.size(); ++i) {
    if (i) out += ' ';
    out += fmt::format("{:02x}", static_cast<unsigned char>(bytes[i]));
  }
  return out;
}

std::string print_bitmask(std::string_view le) {
  std::string out;
  for (size_t chunk = le.size() / 4; chunk-- > 0;) {
    uint32_t v = 0;
    for (size_t k = 0; k < 4; ++k) v |= uint32_t{static_cast<unsigned char>(le[chunk * 4 + k])} << (8 * k);
    out += fmt::format("{}{:08x}", out.empty() ? "" : ",", v);
  }
  return out;
}

std::string print_flags(uint64_t flags, std::string_view delim,
                        const std::vector<std::pair<uint64_t, std::string>>& names) {
  std::string out;
  for (const auto& [mask, name] : names) {
    if (!flags) break;
    if ((flags & mask) != mask) continue;
    flags &= ~mask;
    if (!out.empty()) out += delim;
    out += name;
  }
  if (flags) out += fmt::format("{}0x{:x}", out.empty() ? "" : std::string(delim), flags);
  return out;
}

std::string le_bytes(uint64_t value, size_t n) {
  std::string out;
  for (size_t i = 0; i < n; ++i) out += static_cast<char>((value >> (8 * i)) & 0xff);
  return out;
}

}  // namespace tracebed::suites
