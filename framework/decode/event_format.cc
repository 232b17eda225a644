// Parser for events/<system>/<event>/format files (kernel/trace/trace_events.c
// f_show writes them) and for header_page.
//
// Field flags follow libtraceevent's event_read_fields so that the print-fmt
// evaluator and `report -R` see fields the way trace-cmd does: any `[...]`
// makes an array (dynamic ones too), an array of char/u8/s8 is a string, a
// type containing "long" is long, and a 2-byte __data_loc is the pre-3.x
// string format (offset only, the string runs to the end of the record).
#include "framework/decode/event_format.h"

#include <charconv>
#include <cstring>
#include <optional>

#include "framework/base/text.h"
#include "framework/decode/print_fmt.h"

namespace tracebed::decode {

namespace {

using base::trim;

bool is_ident_char(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
}

// strtoul(s, NULL, 0) on a view: leading number only, 0 when none.
uint64_t parse_c_number(std::string_view s) {
  s = trim(s);
  int base = 10;
  if (s.size() > 1 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X')) {
    base = 16;
    s.remove_prefix(2);
  } else if (s.size() > 1 && s[0] == '0') {
    base = 8;
    s.remove_prefix(1);
  }
  uint64_t v = 0;
  std::from_chars(s.data(), s.data() + s.size(), v, base);
  return v;
}

// "key:value" inside a field line, e.g. "offset:8". Returns false if absent.
bool find_attr(std::string_view line, std::string_view key, uint64_t& out) {
  size_t pos = 0;
  while ((pos = line.find(key, pos)) != std::string_view::npos) {
    bool starts_word = pos == 0 || !is_ident_char(line[pos - 1]);
    size_t after = pos + key.size();
    if (starts_word && after < line.size() && line[after] == ':') {
      size_t end = line.find(';', after);
      out = parse_c_number(line.substr(after + 1, end == std::string_view::npos ? end : end - after - 1));
      return true;
    }
    pos = after;
  }
  return false;
}

// The value of a format's "ID:" line: all of it a decimal number that fits
// 32 bits. parse_event_format and peek_event_format read it alike.
std::optional<uint32_t> parse_event_id(std::string_view v) { return base::parse_number<uint32_t>(v); }

// The attributes as f_show writes them after a field's declaration,
// "\toffset:%u;\tsize:%u;\tsigned:%d;" (a kernel before 2.6.31 has no
// signed), read in one pass: a recording holds a thousand formats and more,
// and searching each line for each key was most of opening a file. False
// when the text has any other shape (the caller then searches).
bool read_kernel_attrs(std::string_view attrs, uint64_t& offset, uint64_t& size, uint64_t& is_signed) {
  const char* p = attrs.data();
  const char* const end = p + attrs.size();
  // "KEY:" then decimal digits (no leading zero, which strtoul would read as
  // octal) then ';'.
  auto attr = [&](std::string_view key, uint64_t& out) {
    if (static_cast<size_t>(end - p) < key.size() + 2 || std::memcmp(p, key.data(), key.size()) != 0) return false;
    p += key.size();
    const char* const digits = p;
    uint64_t v = 0;
    while (p < end && *p >= '0' && *p <= '9' && p - digits < 19) v = v * 10 + static_cast<uint64_t>(*p++ - '0');
    if (p == digits || p == end || *p != ';' || (*digits == '0' && p - digits > 1)) return false;
    ++p;
    out = v;
    return true;
  };
  if (!attr("\toffset:", offset) || !attr("\tsize:", size)) return false;
  is_signed = 0;
  if (p != end && !attr("\tsigned:", is_signed)) return false;
  return p == end;
}

// Splits a declaration ("unsigned long ip", "char comm[16]",
// "__data_loc char[] name", "const void * ptr") into name and type the way
// libtraceevent does: the type keeps the brackets, the name has none.
bool split_declaration(std::string_view decl, Field& f) {
  decl = trim(decl);
  size_t open = decl.find('[');
  if (open != std::string_view::npos) {
    size_t close = decl.find(']', open);
    if (close == std::string_view::npos) return false;
    std::string_view brackets = decl.substr(open, close - open + 1);
    std::string_view before = trim(decl.substr(0, open));
    std::string_view after = trim(decl.substr(close + 1));
    // Last token inside the brackets is the length ("[16]", "[TASK_COMM_LEN]" -> 0).
    std::string_view inner = trim(brackets.substr(1, brackets.size() - 2));
    size_t last = inner.find_last_of(" \t+*");
    f.array_len = static_cast<uint32_t>(parse_c_number(last == std::string_view::npos ? inner : inner.substr(last + 1)));
    if (!after.empty()) {
      // "type[] name": the name follows the brackets.
      f.name = std::string(after);
      f.type = std::string(before) + std::string(brackets);
    } else {
      size_t n = before.size();
      while (n > 0 && is_ident_char(before[n - 1])) --n;
      if (n == before.size()) return false;
      f.name = std::string(before.substr(n));
      f.type = std::string(trim(before.substr(0, n))) + std::string(brackets);
    }
    f.flags |= kFieldArray;
  } else {
    size_t n = decl.size();
    while (n > 0 && is_ident_char(decl[n - 1])) --n;
    if (n == decl.size() || n == 0) return false;
    f.name = std::string(decl.substr(n));
    f.type = std::string(trim(decl.substr(0, n)));
  }
  if (f.type.empty() || f.name.empty()) return false;
  if (f.type.find('*') != std::string::npos) f.flags |= kFieldPointer;
  return true;
}

// Element size of the base type of a dynamic array (libtraceevent's type_size).
uint32_t dynamic_elem_size(std::string_view type) {
  size_t open = type.find('[');
  std::string_view base = trim(type.substr(0, open));
  size_t n = base.size();
  while (n > 0 && is_ident_char(base[n - 1])) --n;
  base = base.substr(n);
  static constexpr std::pair<std::string_view, uint32_t> kSizes[] = {
      {"u8", 1}, {"u16", 2}, {"u32", 4}, {"u64", 8}, {"s8", 1}, {"s16", 2}, {"s32", 4}, {"s64", 8}, {"char", 1}};
  for (auto& [name, size] : kSizes)
    if (base == name) return size;
  return 0;
}

// Fills `f`, a new Field (made in place in the event's list: a recording
// has thousands of fields to read). Errors say what is wrong; the caller
// says where.
Status parse_field_line(std::string_view line, bool common, Field& f) {
  const size_t colon = line.starts_with("field:") ? 0 : line.find("field:");
  const size_t semi = line.find(';');
  if (colon == std::string_view::npos || semi == std::string_view::npos || semi < colon)
    return Error{"expected `field:TYPE NAME;`"};
  std::string_view decl = line.substr(colon + 6, semi - colon - 6);
  // ftrace's own formats may say "field:special ..." in old kernels.
  if (decl.substr(0, 8) == "special ") decl.remove_prefix(8);
  if (!split_declaration(decl, f))
    return Error{fmt::format("cannot split `{}` into type and name", trim(decl))};
  std::string_view attrs = line.substr(semi + 1);
  uint64_t offset = 0, size = 0, is_signed = 0;
  if (!read_kernel_attrs(attrs, offset, size, is_signed)) {
    if (!find_attr(attrs, "offset", offset)) return Error{fmt::format("field {} has no offset", f.name)};
    if (!find_attr(attrs, "size", size)) return Error{fmt::format("field {} has no size", f.name)};
    find_attr(attrs, "signed", is_signed);
  }
  if (offset > UINT32_MAX || size > UINT32_MAX)
    return Error{fmt::format("field {} offset/size out of range", f.name)};
  f.offset = static_cast<uint32_t>(offset);
  f.size = static_cast<uint32_t>(size);
  if (is_signed) f.flags |= kFieldSigned;

  const std::string_view type = f.type;
  if (type.starts_with("__data_loc")) f.flags |= kFieldDataLoc;
  if (type.starts_with("__rel_loc")) f.flags |= kFieldDataLoc | kFieldRelLoc;
  if (f.has(kFieldArray) && (type.find("char") != std::string_view::npos || type.find("u8") != std::string_view::npos ||
                             type.find("s8") != std::string_view::npos))
    f.flags |= kFieldString;
  if (type.find("long") != std::string_view::npos) f.flags |= kFieldLong;
  if (f.has(kFieldDataLoc) && f.size == 2) f.flags |= kFieldString | kFieldArray;
  if (common) f.flags |= kFieldCommon;

  if (f.has(kFieldArray) || f.has(kFieldDataLoc)) {
    if (f.array_len)
      f.elem_size = f.size / f.array_len;
    else if (f.has(kFieldDataLoc))
      f.elem_size = dynamic_elem_size(f.type);
    else if (f.has(kFieldString))
      f.elem_size = 1;
    else if (f.has(kFieldLong))
      f.elem_size = 0;  // the kernel's long: resolved by the reader (TraceContext::long_size)
  } else {
    f.elem_size = f.size;
  }
  return {};
}

}  // namespace

Bytes Field::payload(Bytes record, Endian e) const {
  if (has(kFieldDataLoc)) {
    if (size_t(offset) + size > record.size() || (size != 2 && size != 4 && size != 8)) return {};
    uint64_t v = load_uint(record.data() + offset, size, e);
    uint64_t off = v & 0xffff;
    uint64_t len = size == 2 ? (off <= record.size() ? record.size() - off : 0) : (v >> 16) & 0xffff;
    if (has(kFieldRelLoc)) off += uint64_t(offset) + size;
    if (off > record.size() || len > record.size() - off) return {};
    return record.subspan(off, len);
  }
  if (offset > record.size()) return {};
  if (size == 0) return record.subspan(offset);  // `char buf[]`: the rest of the record
  if (size_t(offset) + size > record.size()) return {};
  return record.subspan(offset, size);
}

std::string_view Field::read_string(Bytes record, Endian e) const {
  Bytes p = payload(record, e);
  const char* s = reinterpret_cast<const char*>(p.data());
  const void* nul = p.empty() ? nullptr : std::memchr(s, 0, p.size());
  return std::string_view(s, nul ? static_cast<const char*>(nul) - s : p.size());
}

void EventFormat::parse_print_fmt() const {
  std::lock_guard lock(print_fmt_mu_);
  if (print_fmt_parsed_.load(std::memory_order_relaxed)) return;
  if (!has_print_fmt) {
    print_fmt_error_ = "no `print fmt:` line";
  } else if (auto parsed = PrintFmt::parse(print_fmt, *this); parsed.ok()) {
    printer_ = std::shared_ptr<const PrintFmt>(std::move(parsed).value());
  } else {
    print_fmt_error_ = parsed.error().message;
  }
  print_fmt_parsed_.store(true, std::memory_order_release);
}

const Field* EventFormat::field(std::string_view n) const {
  for (const Field& f : fields)
    if (f.name == n) return &f;
  return nullptr;
}

Result<std::unique_ptr<EventFormat>> parse_event_format(std::string_view text, std::string_view system,
                                                        std::string_view origin) {
  auto ev = std::make_unique<EventFormat>();
  ev->system = std::string(system);
  bool have_name = false, have_id = false, in_format = false, have_print = false;
  int section = 0;  // 0 = common fields, 1 = event fields
  size_t line_no = 0;
  size_t pos = 0;
  while (pos < text.size()) {
    size_t nl = text.find('\n', pos);
    std::string_view raw = text.substr(pos, nl == std::string_view::npos ? std::string_view::npos : nl - pos);
    size_t line_start = pos;
    pos = nl == std::string_view::npos ? text.size() : nl + 1;
    ++line_no;
    // Only errors name the line: formatting it for every line of thousands
    // of formats cost more than parsing them.
    auto where = [&] { return fmt::format("{}: line {}", origin, line_no); };
    std::string_view line = trim(raw);

    if (line.substr(0, 10) == "print fmt:") {
      // The print fmt is the rest of the file (it may span lines in theory).
      std::string_view rest = text.substr(line_start);
      rest = trim(rest.substr(rest.find(':') + 1));
      ev->print_fmt = std::string(rest);
      have_print = true;
      break;
    }
    if (line.empty()) {
      if (in_format && section == 0 && !ev->fields.empty()) section = 1;
      continue;
    }
    if (line.substr(0, 5) == "name:") {
      ev->name = std::string(trim(line.substr(5)));
      have_name = !ev->name.empty();
      continue;
    }
    if (line.substr(0, 3) == "ID:") {
      const std::string_view v = trim(line.substr(3));
      const std::optional<uint32_t> id = parse_event_id(v);
      if (!id) return Error{fmt::format("{}: bad event ID `{}`", where(), v)};
      ev->id = *id;
      have_id = true;
      continue;
    }
    if (line.substr(0, 7) == "format:") {
      in_format = true;
      continue;
    }
    if (line.substr(0, 6) == "field:") {
      if (!in_format) return Error{fmt::format("{}: field before `format:`", where())};
      if (ev->fields.empty()) ev->fields.reserve(16);
      Status st = parse_field_line(line, section == 0, ev->fields.emplace_back());
      if (!st.ok()) return Error{fmt::format("{}: {}", where(), st.error().message)};
      if (section == 0) ev->common_count = ev->fields.size();
      continue;
    }
    return Error{fmt::format("{}: unexpected line `{}`", where(), line)};
  }
  if (!have_name) return Error{fmt::format("{}: no `name:` line", origin)};
  if (!have_id) return Error{fmt::format("{}: event {} has no `ID:` line", origin, ev->name)};
  if (!in_format) return Error{fmt::format("{}: event {} has no `format:` section", origin, ev->name)};
  // Old kernels without common fields: everything parsed so far is "common"
  // only if a blank line followed; otherwise they are the event's own.
  if (section == 0) {
    for (Field& f : ev->fields) f.flags &= ~kFieldCommon;
    ev->common_count = 0;
  }
  ev->has_print_fmt = have_print;
  return ev;
}

bool peek_event_format(std::string_view text, EventFormatHead& head) {
  bool have_name = false, have_id = false;
  for (size_t pos = 0; pos < text.size();) {
    const size_t nl = text.find('\n', pos);
    const std::string_view line =
        trim(text.substr(pos, nl == std::string_view::npos ? std::string_view::npos : nl - pos));
    pos = nl == std::string_view::npos ? text.size() : nl + 1;
    if (line.substr(0, 5) == "name:") {
      head.name = trim(line.substr(5));
      have_name = !head.name.empty();
    } else if (line.substr(0, 3) == "ID:") {
      const std::optional<uint32_t> id = parse_event_id(trim(line.substr(3)));
      if (!id) return false;
      head.id = *id;
      have_id = true;
    } else if (line.substr(0, 7) == "format:") {
      return have_name && have_id;
    } else if (!line.empty()) {
      return false;
    }
  }
  return false;
}

Result<HeaderPage> parse_header_page(std::string_view text, std::string_view origin) {
  HeaderPage hp;
  bool ts = false, commit = false, data = false;
  size_t line_no = 0, pos = 0;
  while (pos < text.size()) {
    size_t nl = text.find('\n', pos);
    std::string_view line = trim(text.substr(pos, nl == std::string_view::npos ? std::string_view::npos : nl - pos));
    pos = nl == std::string_view::npos ? text.size() : nl + 1;
    ++line_no;
    if (line.empty()) continue;
    Field f;
    Status parsed = parse_field_line(line, false, f);
    if (!parsed.ok()) return Error{fmt::format("{}: line {}: {}", origin, line_no, parsed.error().message)};
    if (f.name == "timestamp") {
      hp.timestamp_offset = f.offset;
      hp.timestamp_size = f.size;
      ts = true;
    } else if (f.name == "commit") {
      hp.commit_offset = f.offset;
      hp.commit_size = f.size;
      commit = true;
    } else if (f.name == "data") {
      hp.data_offset = f.offset;
      hp.data_size = f.size;
      data = true;
    }
  }
  if (!ts || !commit || !data)
    return Error{fmt::format("{}: header_page lacks {}", origin, !ts ? "timestamp" : !commit ? "commit" : "data")};
  if (hp.commit_size != 4 && hp.commit_size != 8)
    return Error{fmt::format("{}: header_page commit size {} is neither 4 nor 8", origin, hp.commit_size)};
  return hp;
}

}  // namespace tracebed::decode
