// TraceContext: event formats, kallsyms, printk formats and comms, with the
// lookup rules of libtraceevent 1.7.1 (event-parse.c: func_map_init,
// func_bcmp, tep_register_print_string, tep_register_comm) so symbol and
// string resolution agrees with trace-cmd report.
#include "framework/decode/trace_context.h"

#include <algorithm>
#include <charconv>
#include <cctype>

namespace tracebed {

namespace {

std::string_view next_line(std::string_view text, size_t& pos) {
  size_t nl = text.find('\n', pos);
  std::string_view line = text.substr(pos, nl == std::string_view::npos ? std::string_view::npos : nl - pos);
  pos = nl == std::string_view::npos ? text.size() : nl + 1;
  return line;
}

// strtoull(s, NULL, 16) on a view: skips leading blanks and an optional 0x.
uint64_t parse_hex_prefix(std::string_view s) {
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front()))) s.remove_prefix(1);
  if (s.size() > 1 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X')) s.remove_prefix(2);
  uint64_t v = 0;
  std::from_chars(s.data(), s.data() + s.size(), v, 16);
  return v;
}

}  // namespace

Status TraceContext::add_event_format(std::string_view system, std::string_view text, std::string_view origin) {
  TRACEBED_ASSIGN_OR_RETURN(auto ev, parse_event_format(text, system, origin));
  if (events_.empty()) {
    // trace-cmd takes the common fields' layout from the first event
    // (libtraceevent get_common_info uses tep->events[0]).
    for (size_t i = 0; i < ev->common_count; ++i) {
      const Field& f = ev->fields[i];
      if (f.name == "common_type") common_type_ = f;
      else if (f.name == "common_pid") common_pid_ = f;
      else if (f.name == "common_flags") common_flags_ = f;
      else if (f.name == "common_preempt_count") common_preempt_ = f;
    }
  }
  // A second format with the same id replaces the lookup (the later file wins).
  by_id_[ev->id] = ev.get();
  events_.push_back(std::move(ev));
  return {};
}

const EventFormat* TraceContext::event_by_id(uint32_t id) const {
  auto it = by_id_.find(id);
  return it == by_id_.end() ? nullptr : it->second;
}

const EventFormat* TraceContext::event_by_name(std::string_view system, std::string_view name) const {
  for (const auto& ev : events_)
    if (ev->name == name && (system.empty() || ev->system == system)) return ev.get();
  return nullptr;
}

const EventFormat* TraceContext::event_of(Bytes record) const {
  const Field* type = common_type();
  if (!type || size_t(type->offset) + type->size > record.size()) return nullptr;
  return event_by_id(static_cast<uint32_t>(type->read_uint(record, endian)));
}

void TraceContext::parse_kallsyms(std::string_view text) {
  // libtraceevent keeps a list with the newest symbol first and sorts it with
  // glibc's (stable, merge) qsort: among equal addresses the later line
  // comes first. Build the same order so lookups pick the same name.
  std::vector<KSym> added;
  size_t pos = 0;
  while (pos < text.size()) {
    std::string_view line = next_line(text, pos);
    if (line.empty()) continue;  // strtok_r skips empty lines
    // sscanf("%16llx %c %n%*s%n%*1[\t][%n%*s%n"): up to 16 hex digits, the
    // type letter, the name, then "\t[module]". Like trace-cmd, stop at the
    // first line that does not have that shape.
    size_t i = 0;
    while (i < line.size() && std::isspace(static_cast<unsigned char>(line[i]))) ++i;
    if (i + 1 < line.size() && line[i] == '0' && (line[i + 1] == 'x' || line[i + 1] == 'X')) i += 2;
    size_t hex_start = i;
    while (i < line.size() && i - hex_start < 16 && std::isxdigit(static_cast<unsigned char>(line[i]))) ++i;
    if (i == hex_start) break;
    uint64_t addr = parse_hex_prefix(line.substr(hex_start, i - hex_start));
    while (i < line.size() && std::isspace(static_cast<unsigned char>(line[i]))) ++i;
    if (i >= line.size()) break;
    char type = line[i++];
    while (i < line.size() && std::isspace(static_cast<unsigned char>(line[i]))) ++i;
    size_t name_pos = i;
    while (i < line.size() && !std::isspace(static_cast<unsigned char>(line[i]))) ++i;
    if (i == name_pos) break;
    std::string_view name = line.substr(name_pos, i - name_pos);
    std::string_view module;
    if (i + 1 < line.size() && line[i] == '\t' && line[i + 1] == '[') {
      size_t mod_pos = i + 2, end = mod_pos;
      while (end < line.size() && !std::isspace(static_cast<unsigned char>(line[end]))) ++end;
      module = line.substr(mod_pos, end - mod_pos);
      if (!module.empty() && module.back() == ']') module.remove_suffix(1);  // "the extra ']'"
    }
    // Same filters as libtraceevent: ARM's bogus '$a' symbols and x86-64
    // per-cpu offsets reported as absolute symbols.
    if (name[0] == '$' || type == 'A' || type == 'a') continue;
    added.push_back(KSym{addr, std::string(name), std::string(module)});
  }
  std::reverse(added.begin(), added.end());
  // Earlier kallsyms_ entries were registered before: they come after the
  // new ones among equal addresses.
  added.insert(added.end(), std::make_move_iterator(kallsyms_.begin()), std::make_move_iterator(kallsyms_.end()));
  std::stable_sort(added.begin(), added.end(), [](const KSym& a, const KSym& b) { return a.address < b.address; });
  kallsyms_ = std::move(added);
}

std::optional<Symbol> TraceContext::lookup_symbol(uint64_t addr) const {
  // glibc bsearch with libtraceevent's func_bcmp: a match is an exact address
  // or an address between this symbol and the next; the last symbol only
  // matches exactly (its "next" is a sentinel at address 0).
  size_t lo = 0, hi = kallsyms_.size();
  while (lo < hi) {
    size_t mid = (lo + hi) / 2;
    const KSym& s = kallsyms_[mid];
    uint64_t next = mid + 1 < kallsyms_.size() ? kallsyms_[mid + 1].address : 0;
    if (addr == s.address || (addr > s.address && addr < next))
      return Symbol{s.name, s.module, s.address};
    if (addr < s.address)
      hi = mid;
    else
      lo = mid + 1;
  }
  return std::nullopt;
}

std::optional<uint64_t> TraceContext::symbol_address(std::string_view name) const {
  for (const KSym& s : kallsyms_)
    if (s.name == name) return s.address;
  return std::nullopt;
}

void TraceContext::parse_printk_formats(std::string_view text) {
  size_t pos = 0;
  while (pos < text.size()) {
    std::string_view line = next_line(text, pos);
    // strtok_r(line, ":") then the text after one space, as trace-cmd does.
    size_t start = line.find_first_not_of(':');
    if (start == std::string_view::npos) continue;
    size_t colon = line.find(':', start);
    if (colon == std::string_view::npos) continue;
    uint64_t addr = parse_hex_prefix(line.substr(start, colon - start));
    std::string_view fmt = line.substr(colon + 1);
    if (!fmt.empty()) fmt.remove_prefix(1);
    // tep_register_print_string: drop the quotes and a literal "\n" just
    // before the closing quote; escapes stay as written (bprint's format
    // parser handles them).
    if (!fmt.empty() && fmt.front() == '"') fmt.remove_prefix(1);
    if (!fmt.empty() && fmt.back() == '"') {
      fmt.remove_suffix(1);
      if (fmt.size() >= 2 && fmt.substr(fmt.size() - 2) == "\\n") fmt.remove_suffix(2);
    }
    printk_.emplace(addr, std::string(fmt));
  }
}

std::optional<std::string_view> TraceContext::printk_format(uint64_t addr) const {
  auto it = printk_.find(addr);
  if (it == printk_.end()) return std::nullopt;
  return std::string_view(it->second);
}

void TraceContext::parse_cmdlines(std::string_view text) {
  size_t pos = 0;
  while (pos < text.size()) {
    std::string_view line = next_line(text, pos);
    // sscanf("%d %m[^\n]s"): a decimal pid, blanks, then the rest of the line.
    size_t i = 0;
    while (i < line.size() && std::isspace(static_cast<unsigned char>(line[i]))) ++i;
    int pid = 0;
    auto [p, ec] = std::from_chars(line.data() + i, line.data() + line.size(), pid);
    if (ec != std::errc()) continue;
    std::string_view rest = line.substr(p - line.data());
    while (!rest.empty() && std::isspace(static_cast<unsigned char>(rest.front()))) rest.remove_prefix(1);
    if (rest.empty()) continue;
    set_comm(pid, rest);
  }
}

void TraceContext::set_comm(int pid, std::string_view comm) {
  // tep_register_comm refuses a pid it already knows (EEXIST): first wins.
  comms_.try_emplace(pid, std::string(comm));
}

std::optional<std::string_view> TraceContext::comm(int pid) const {
  auto it = comms_.find(pid);
  if (it == comms_.end()) return std::nullopt;
  return std::string_view(it->second);
}

}  // namespace tracebed
