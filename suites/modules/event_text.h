// What the kernel prints for the print fmt helpers tracebed_events uses,
// spelled out from the kernel's own code, for comparing with `trace`.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace tracebed::suites {

// The text after "<event>: " of each `trace` line of that event.
std::vector<std::string> event_bodies(const std::vector<std::string>& trace_lines, std::string_view event);

// Lower-case hex digits of each byte, no spaces ("deadbeef"): the emit format.
std::string hex_string(std::string_view bytes);

// __print_hex (trace_print_hex_seq, concatenate=false): "%*ph" per
// 16-byte chunk, chunks joined by a space: "de ad be ef".
std::string print_hex(std::string_view bytes);

// __get_bitmask (trace_print_bitmask_seq -> "%*pb", lib/vsprintf.c
// bitmap_string): 32-bit chunks from the highest, 8 hex digits each,
// joined by commas.
std::string print_bitmask(std::string_view le_bytes);

// __print_flags (trace_print_flags_seq): the names of the set flags joined
// by `delim`, then the bits left over as 0x%lx.
std::string print_flags(uint64_t flags, std::string_view delim,
                        const std::vector<std::pair<uint64_t, std::string>>& names);

// `value`'s low `n` bytes, little-endian.
std::string le_bytes(uint64_t value, size_t n);

}  // namespace tracebed::suites
