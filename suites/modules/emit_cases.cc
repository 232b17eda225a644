#include "suites/modules/emit_cases.h"

#include <fmt/format.h>

#include <map>

#include "suites/modules/event_text.h"

namespace tracebed::suites {

std::mt19937_64& rng() {
  static std::mt19937_64 r(20261127);
  return r;
}

IntsRecord ints_record(int i) {
  return {value_of<uint8_t>(i),  value_of<int8_t>(i + 1),  value_of<uint16_t>(i), value_of<int16_t>(i + 1),
          value_of<uint32_t>(i), value_of<int32_t>(i + 1), value_of<uint64_t>(i), value_of<int64_t>(i + 1)};
}

std::string ints_line(int seq, const IntsRecord& v) {
  return fmt::format("ints {} {} {} {} {} {} {} {} {}\n", seq, v.u8, v.s8, v.u16, v.s16, v.u32, v.s32, v.u64, v.s64);
}

namespace {

EmitCase ints(int records) {
  EmitCase c{"tb_ints", "", {}};
  for (int i = 0; i < records; ++i) {
    const IntsRecord v = ints_record(i);
    c.lines += ints_line(i, v);
    c.text.push_back(fmt::format("seq={} u8v={} s8v={} u16v={} s16v={} u32v={} s32v={} u64v={} s64v={}", i, v.u8,
                                 static_cast<uint8_t>(v.s8), v.u16, static_cast<uint16_t>(v.s16), v.u32, v.s32, v.u64,
                                 v.s64));
  }
  return c;
}

// print_event_fields' text of an array: "ARRAY[de, ad]".
std::string array_bytes(std::string_view bytes) {
  std::string out = "ARRAY[";
  for (size_t i = 0; i < bytes.size(); ++i)
    out += fmt::format("{}{:02x}", i ? ", " : "", static_cast<unsigned char>(bytes[i]));
  return out + "]";
}

EmitCase arrays(int records) {
  EmitCase c{"tb_arrays", "", {}};
  for (int i = 0; i < records; ++i) {
    // Names of 1 to 20 characters: char[16] keeps 15 and a NUL.
    std::string name(1 + i % 20, static_cast<char>('a' + i % 26));
    uint32_t w[4];
    for (int k = 0; k < 4; ++k) w[k] = value_of<uint32_t>(i + k);
    std::string bytes(i % 70, '\0');  // 0 to over four 16-byte chunks of __print_hex
    for (auto& b : bytes) b = static_cast<char>(rng()());
    // libtraceevent's fallback prints an array whose bytes are printable
    // (up to a NUL) as a string, reading past its end: a first byte that
    // is not keeps the text "ARRAY[...]".
    if (!bytes.empty()) bytes[0] = static_cast<char>(bytes[0] | 0x80);
    c.lines += fmt::format("arrays {} {} {} {} {} {} {}\n", i, name, w[0], w[1], w[2], w[3],
                           bytes.empty() ? "-" : hex_string(bytes));
    std::string words;
    for (uint32_t word : w) words += le_bytes(word, 4);
    c.text.push_back(fmt::format("[FAILED TO PARSE] seq={} name={} words={} bytes={}", i, name.substr(0, 15),
                                 array_bytes(words), bytes.empty() ? "" : array_bytes(bytes)));
  }
  return c;
}

EmitCase strings(int records) {
  EmitCase c{"tb_strings", "", {}};
  for (int i = 0; i < records; ++i) {
    std::string s;  // 1 to `records` characters, no space
    for (int k = 0; k < 1 + i; ++k) s += static_cast<char>('!' + 1 + (i * 7 + k) % 90);
    size_t len = (i * 13) % (s.size() + 3);  // 0, and past the end: the module stops at the string's
    c.lines += fmt::format("strings {} {} {}\n", i, len, s);
    c.text.push_back(fmt::format("seq={} str={} lstr={} vstr=v{}:{} rstr={}", i, s, s.substr(0, len), i, s, s));
  }
  return c;
}

// print_cpumask_to_seq's text: runs of set bits, "0-1,3".
std::string cpu_ranges(uint64_t cpus) {
  std::string out;
  for (int cpu = 0; cpu < 64; ++cpu) {
    if (!(cpus >> cpu & 1)) continue;
    int last = cpu;
    while (last + 1 < 64 && (cpus >> (last + 1) & 1)) ++last;
    out += fmt::format("{}{}", out.empty() ? "" : ",", cpu);
    if (last > cpu) out += fmt::format("-{}", last);
    cpu = last;
  }
  return out;
}

EmitCase masks(int records, int ncpus) {
  EmitCase c{"tb_masks", "", {}};
  uint64_t cpu_bits = ncpus >= 64 ? ~0ULL : (1ULL << ncpus) - 1;
  for (int i = 0; i < records; ++i) {
    uint64_t bits = value_of<uint64_t>(i), cpus = value_of<uint64_t>(i + 7);
    int nbytes = i % 9;
    c.lines += fmt::format("masks {} {:#x} {:#x} {}\n", i, bits, cpus, nbytes);
    std::string b = le_bytes(bits, 8), m = cpu_ranges(cpus & cpu_bits);
    c.text.push_back(fmt::format("seq={} bits={} cpus={} rbits={} rcpus={} rbytes={}", i, print_bitmask(b), m,
                                 print_bitmask(b), m, print_hex(b.substr(0, nbytes))));
  }
  return c;
}

EmitCase flags(int records) {
  EmitCase c{"tb_flags", "", {}};
  const std::vector<std::pair<uint64_t, std::string>> names = {
      {0x1, "READ"}, {0x2, "WRITE"}, {0x4, "EXEC"}, {0x100, "SHARED"}};
  // { -1, "DEAD" } never matches: the int is read unsigned (see the header).
  const std::map<int, std::string> states = {{0, "IDLE"}, {1, "RUNNING"}, {2, "BLOCKED"}};
  for (int i = 0; i < records; ++i) {
    // Known bits, unknown bits, none; known states, unknown, negative.
    uint64_t f = i % 5 == 0 ? 0 : i % 5 == 1 ? value_of<uint64_t>(i) : static_cast<uint64_t>(i) & 0x10f;
    int state = i % 7 - 2;
    c.lines += fmt::format("flags {} {:#x} {}\n", i, f, state);
    auto sym = states.find(state);
    c.text.push_back(
        fmt::format("seq={} flags={} state={}", i, print_flags(f, "|", names),
                    sym != states.end() ? sym->second : fmt::format("0x{:x}", static_cast<uint32_t>(state))));
  }
  return c;
}

}  // namespace

std::vector<EmitCase> every_event_case(int records, int ncpus) {
  return {ints(records), arrays(records), strings(records), masks(records, ncpus), flags(records)};
}

}  // namespace tracebed::suites
