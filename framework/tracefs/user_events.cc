#include "framework/tracefs/user_events.h"

#include <algorithm>
#include <cstring>

#include <fmt/format.h>

#include "framework/base/text.h"

namespace tracebed::tracefs {

namespace {

bool starts_with(std::string_view s, std::string_view p) { return s.substr(0, p.size()) == p; }

// kstrtouint(s, radix): the digits and at most a final newline (lib/kstrtox.c).
std::optional<uint32_t> parse_kernel_uint(std::string_view s, int radix) {
  if (s.ends_with('\n')) s.remove_suffix(1);
  return base::parse_number<uint32_t>(s, radix);
}

UserEventField::Kind kind_of(std::string_view type) {
  if (starts_with(type, "__data_loc ")) return UserEventField::Kind::data_loc;
  if (starts_with(type, "__rel_loc ")) return UserEventField::Kind::rel_loc;
  if (starts_with(type, "struct ")) return UserEventField::Kind::structure;
  if (type.find("char[") != std::string_view::npos) return UserEventField::Kind::char_array;
  return UserEventField::Kind::integer;
}

// user_field_array_size: the text after '[' is copied into an 8-byte buffer
// (so at most 7 characters, ']' included) and read with kstrtouint(.., 0).
Result<uint32_t> array_size(std::string_view type) {
  size_t open = type.find('[');
  if (open == std::string_view::npos) return Error{fmt::format("\"{}\": no [size]", type)};
  std::string_view after = type.substr(open + 1);
  if (after.size() > 7) return Error{fmt::format("\"{}\": array size text longer than 6 characters", type)};
  size_t close = after.find(']');
  if (close == std::string_view::npos) return Error{fmt::format("\"{}\": no ']'", type)};
  auto n = parse_kernel_uint(after.substr(0, close), 0);
  if (!n) return Error{fmt::format("\"{}\": array size is not a number", type)};
  if (*n > kUserEventMaxArray) return Error{fmt::format("\"{}\": array size {} exceeds {}", type, *n, kUserEventMaxArray)};
  return static_cast<uint32_t>(*n);
}

bool is_hex(std::string_view s) {
  return !s.empty() && std::all_of(s.begin(), s.end(), [](char c) { return std::isxdigit(static_cast<unsigned char>(c)); });
}

void put_le(std::string& out, size_t at, uint64_t v, uint32_t size) {
  for (uint32_t i = 0; i < size; ++i) out[at + i] = static_cast<char>((v >> (8 * i)) & 0xff);
}

}  // namespace

Result<uint32_t> user_field_size(std::string_view type) {
  struct Known {
    std::string_view type;
    uint32_t size;
  };
  // user_field_size in kernel/trace/trace_events_user.c, in its order.
  static constexpr Known known[] = {
      {"s64", 8}, {"u64", 8}, {"s32", 4}, {"u32", 4}, {"int", 4}, {"unsigned int", 4},
      {"s16", 2}, {"u16", 2}, {"short", 2}, {"unsigned short", 2}, {"s8", 1}, {"u8", 1},
      {"char", 1}, {"unsigned char", 1},
  };
  for (const Known& k : known)
    if (type == k.type) return k.size;
  if (starts_with(type, "char[") || starts_with(type, "unsigned char[")) return array_size(type);
  if (starts_with(type, "__data_loc ") || starts_with(type, "__rel_loc ")) return 4u;
  if (type == "long" || type == "unsigned long")
    return Error{fmt::format("\"{}\": long is refused, its size differs between user and kernel", type)};
  return Error{fmt::format("\"{}\": unknown type", type)};
}

std::string UserEventField::str() const {
  if (kind == Kind::structure) return fmt::format("{} {} {}", type, name, size);
  return fmt::format("{} {}", type, name);
}

void UserEventDef::add(UserEventField f) {
  f.offset = min_size();
  f.is_signed = !f.type.empty() && f.type[0] != 'u';
  f.kind = kind_of(f.type);
  if (f.name.empty() || f.name.find_first_of(" \t;") != std::string::npos)
    problems_.push_back(fmt::format("field name \"{}\" is empty or has a blank or ';'", f.name));
  fields_.push_back(std::move(f));
}

UserEventDef& UserEventDef::field(std::string_view type, std::string_view name) {
  UserEventField f;
  f.type = std::string(type);
  f.name = std::string(name);
  auto size = user_field_size(type);
  if (size && *size == 0) size = Error{fmt::format("\"{}\": size 0", type)};
  if (size) f.size = *size;
  else problems_.push_back(fmt::format("field {}: {}", name, size.error().message));
  add(std::move(f));
  return *this;
}

UserEventDef& UserEventDef::char_array(std::string_view n, uint32_t len, bool is_unsigned) {
  return field(fmt::format("{}char[{}]", is_unsigned ? "unsigned " : "", len), n);
}

UserEventDef& UserEventDef::data_loc_string(std::string_view n, bool is_unsigned) {
  return field(fmt::format("__data_loc {}char[]", is_unsigned ? "unsigned " : ""), n);
}

UserEventDef& UserEventDef::rel_loc_string(std::string_view n, bool is_unsigned) {
  return field(fmt::format("__rel_loc {}char[]", is_unsigned ? "unsigned " : ""), n);
}

UserEventDef& UserEventDef::structure(std::string_view struct_type, std::string_view n, uint32_t size) {
  UserEventField f;
  f.type = fmt::format("struct {}", struct_type);
  f.name = std::string(n);
  f.size = size;
  if (size == 0) problems_.push_back(fmt::format("field {}: struct size 0", n));
  if (struct_type.empty() || struct_type.find_first_of(" \t;") != std::string_view::npos)
    problems_.push_back(fmt::format("field {}: struct type \"{}\" is empty or has a blank", n, struct_type));
  add(std::move(f));
  return *this;
}

UserEventDef& UserEventDef::flag(std::string_view f) {
  flags_.emplace_back(f);
  return *this;
}

const UserEventField* UserEventDef::find(std::string_view field) const {
  for (const auto& f : fields_)
    if (f.name == field) return &f;
  return nullptr;
}

uint32_t UserEventDef::min_size() const {
  return fields_.empty() ? 0 : fields_.back().offset + fields_.back().size;
}

std::string UserEventDef::command() const {
  std::string out = name_;
  if (!flags_.empty()) out += ":" + fmt::format("{}", fmt::join(flags_, ","));
  for (size_t i = 0; i < fields_.size(); ++i) out += (i ? "; " : " ") + fields_[i].str();
  return out;
}

std::string UserEventDef::remove_command() const {
  std::string out = fmt::format("-:{}/{}", kUserEventsSystem, name_);
  for (size_t i = 0; i < fields_.size(); ++i) out += (i ? "; " : " ") + fields_[i].str();
  return out;
}

std::optional<std::string> UserEventDef::problem() const {
  std::vector<std::string> p = problems_;
  if (name_.empty() || name_.find_first_of(" \t:") != std::string::npos)
    p.push_back(fmt::format("event name \"{}\" is empty or has a blank or ':'", name_));
  if (!flags_.empty()) p.push_back(fmt::format("the kernel accepts no text flags (\"{}\")", fmt::join(flags_, ",")));
  std::string cmd = command();
  if (cmd.size() >= kUserEventMaxDesc)
    p.push_back(fmt::format("definition is {} bytes, the kernel takes at most {}", cmd.size(), kUserEventMaxDesc - 1));
  if (p.empty()) return std::nullopt;
  return fmt::format("user event \"{}\": {}", name_, fmt::join(p, "; "));
}

namespace {

// One field of user_event_parse_fields ("u32 count", "struct foo bar 24",
// "__rel_loc char[] msg"), or why the kernel refuses it.
Result<UserEventField> parse_user_field(std::string_view field) {
  // Types with a space in them end at the next space after the prefix.
  static constexpr std::string_view prefixes[] = {"unsigned ", "struct ", "__data_loc unsigned ", "__data_loc ",
                                                  "__rel_loc unsigned ", "__rel_loc "};
  std::string_view type, tail = field;
  int depth = 0;
  bool is_struct = false;
  for (std::string_view p : prefixes) {
    if (!starts_with(field, p)) continue;
    size_t sp = field.find(' ', p.size());
    if (sp == std::string_view::npos) return Error{"no name after the type"};
    type = field.substr(0, sp);
    tail = field.substr(sp + 1);
    depth = 1;
    is_struct = p == "struct ";
    break;
  }
  std::string_view fname;
  std::optional<uint32_t> struct_size;
  // Single spaces only: the kernel splits with strsep(" "), so a double
  // or trailing space makes an extra (refused) part.
  for (;;) {
    size_t sp = tail.find(' ');
    std::string_view part = tail.substr(0, sp);
    switch (depth++) {
      case 0: type = part; break;
      case 1: fname = part; break;
      case 2: {
        if (!is_struct) return Error{"a size is only allowed after a struct"};
        auto n = parse_kernel_uint(part, 10);
        if (!n) return Error{fmt::format("struct size \"{}\" is not a decimal number", part)};
        struct_size = static_cast<uint32_t>(*n);
        break;
      }
      default: return Error{"too many words"};
    }
    if (sp == std::string_view::npos) break;
    tail.remove_prefix(sp + 1);
  }
  if (depth < 2) return Error{"no name after the type"};
  UserEventField f;
  f.type = std::string(type);
  f.name = std::string(fname);
  if (struct_size) {
    f.size = *struct_size;
  } else {
    auto size = user_field_size(type);
    if (!size) return size.error();
    f.size = *size;
  }
  if (f.size == 0) return Error{"size 0"};
  return f;
}

}  // namespace

Result<UserEventDef> UserEventDef::parse(std::string_view text) {
  std::string_view whole = text;
  auto bad = [&](std::string_view why) { return Error{fmt::format("user event definition \"{}\": {}", whole, why)}; };
  if (starts_with(text, "u:")) text = base::trim_left(text.substr(2));
  if (text.size() >= kUserEventMaxDesc)
    return bad(fmt::format("{} bytes, the kernel takes at most {}", text.size(), kUserEventMaxDesc - 1));
  // user_event_parse_cmd: the name ends at the first space, flags after ':'.
  size_t space = text.find(' ');
  std::string_view name = text.substr(0, space);
  std::optional<std::string_view> args;
  if (space != std::string_view::npos) args = text.substr(space + 1);
  size_t colon = name.find(':');
  if (colon != std::string_view::npos)
    return bad(fmt::format("flags \"{}\": the kernel accepts no text flags", name.substr(colon + 1)));
  if (name.empty()) return bad("no event name");
  UserEventDef def{std::string(name)};
  if (!args) return def;
  // user_event_parse_fields: ';'-separated; an empty field is skipped.
  std::string_view rest = *args;
  int index = 0;
  for (;;) {
    size_t semi = rest.find(';');
    std::string_view field = base::trim_left(rest.substr(0, semi));
    ++index;
    if (!field.empty()) {
      auto f = parse_user_field(field);
      if (!f) return bad(fmt::format("field {} \"{}\": {}", index, field, f.error().message));
      def.add(std::move(*f));
    }
    if (semi == std::string_view::npos) break;
    rest.remove_prefix(semi + 1);
  }
  return def;
}

Result<std::string> encode_user_payload(const UserEventDef& def, const std::vector<UserValue>& values,
                                        uint32_t header_size) {
  const auto& fields = def.fields();
  if (values.size() != fields.size())
    return Error{fmt::format("user event {}: {} values for {} fields", def.name(), values.size(), fields.size())};
  std::string out(def.min_size(), '\0');
  for (size_t i = 0; i < fields.size(); ++i) {
    const UserEventField& f = fields[i];
    const UserValue& v = values[i];
    auto bad = [&](std::string_view why) { return Error{fmt::format("user event {}: field {}: {}", def.name(), f.str(), why)}; };
    switch (f.kind) {
      case UserEventField::Kind::integer: {
        if (std::holds_alternative<std::string>(v)) return bad("a string for an integer field");
        unsigned bits = f.size * 8;
        uint64_t raw;
        if (const int64_t* s = std::get_if<int64_t>(&v)) {
          int64_t lo = f.is_signed ? (bits == 64 ? INT64_MIN : -(int64_t{1} << (bits - 1))) : 0;
          int64_t hi = bits == 64 ? INT64_MAX : f.is_signed ? (int64_t{1} << (bits - 1)) - 1 : (int64_t{1} << bits) - 1;
          if (*s < lo || *s > hi) return bad(fmt::format("{} does not fit", *s));
          raw = static_cast<uint64_t>(*s);
        } else {
          uint64_t u = std::get<uint64_t>(v);
          uint64_t hi = bits == 64 ? (f.is_signed ? uint64_t{INT64_MAX} : UINT64_MAX)
                                   : (f.is_signed ? (uint64_t{1} << (bits - 1)) - 1 : (uint64_t{1} << bits) - 1);
          if (u > hi) return bad(fmt::format("{} does not fit", u));
          raw = u;
        }
        put_le(out, f.offset, raw, f.size);
        break;
      }
      case UserEventField::Kind::char_array:
      case UserEventField::Kind::structure: {
        const std::string* s = std::get_if<std::string>(&v);
        if (!s) return bad("a number for a byte field");
        if (f.kind == UserEventField::Kind::structure && s->size() != f.size)
          return bad(fmt::format("{} bytes for a {}-byte struct", s->size(), f.size));
        if (s->size() > f.size) return bad(fmt::format("{} bytes do not fit in {}", s->size(), f.size));
        std::memcpy(out.data() + f.offset, s->data(), s->size());
        break;
      }
      case UserEventField::Kind::data_loc:
      case UserEventField::Kind::rel_loc: {
        const std::string* s = std::get_if<std::string>(&v);
        if (!s) return bad("a number for a dynamic field");
        // Character data must end in a NUL (VALIDATOR_ENSURE_NULL).
        bool nul = f.type.find("char") != std::string::npos;
        size_t len = s->size() + (nul ? 1 : 0);
        size_t at = out.size();
        uint64_t offset = f.kind == UserEventField::Kind::data_loc ? header_size + at : at - (f.offset + 4);
        if (len > 0xffff || offset > 0xffff) return bad(fmt::format("{} bytes at {} do not fit a 16-bit location", len, offset));
        out += *s;
        if (nul) out.push_back('\0');
        put_le(out, f.offset, user_dyn_loc(static_cast<uint32_t>(offset), static_cast<uint32_t>(len)), 4);
        break;
      }
    }
  }
  return out;
}

Result<uint32_t> common_header_size(std::string_view format_text) {
  uint32_t end = 0;
  bool any = false;
  size_t pos = 0;
  while (pos < format_text.size()) {
    size_t nl = format_text.find('\n', pos);
    std::string_view line = format_text.substr(pos, nl == std::string_view::npos ? nl : nl - pos);
    pos = nl == std::string_view::npos ? format_text.size() : nl + 1;
    size_t f = line.find("field:");
    if (f == std::string_view::npos) continue;
    size_t semi = line.find(';', f);
    std::string_view decl = line.substr(f + 6, semi == std::string_view::npos ? semi : semi - f - 6);
    size_t name_at = decl.find_last_of(' ');
    if (name_at == std::string_view::npos || !starts_with(decl.substr(name_at + 1), "common_")) continue;
    auto number = [&](std::string_view key) -> std::optional<uint64_t> {
      size_t k = line.find(key);
      if (k == std::string_view::npos) return std::nullopt;
      std::string_view v = line.substr(k + key.size());
      v = v.substr(0, v.find(';'));
      return parse_kernel_uint(v, 10);
    };
    auto offset = number("offset:");
    auto size = number("size:");
    if (!offset || !size) return Error{fmt::format("format: no offset or size in \"{}\"", line)};
    end = std::max(end, static_cast<uint32_t>(*offset + *size));
    any = true;
  }
  if (!any) return Error{"format: no common_ fields"};
  return end;
}

const UserEventStatusEntry* UserEventsStatus::find(std::string_view name) const {
  for (const auto& e : events)
    if (e.name == name) return &e;
  return nullptr;
}

Result<UserEventsStatus> parse_user_events_status(std::string_view text, std::string_view file) {
  UserEventsStatus st;
  bool in_events = true, have_active = false, have_busy = false;
  int lineno = 0;
  size_t pos = 0;
  while (pos < text.size()) {
    size_t nl = text.find('\n', pos);
    std::string_view line = text.substr(pos, nl == std::string_view::npos ? nl : nl - pos);
    pos = nl == std::string_view::npos ? text.size() : nl + 1;
    ++lineno;
    auto bad = [&](std::string_view why) { return Error{fmt::format("{}: line {}: {}: \"{}\"", file, lineno, why, line)}; };
    if (in_events) {
      if (line.empty()) {
        in_events = false;
        continue;
      }
      UserEventStatusEntry e;
      size_t hash = line.find(" # Used by");
      e.name = std::string(line.substr(0, hash));
      if (e.name.empty() || e.name.find(' ') != std::string::npos) return bad("not an event name");
      if (hash != std::string_view::npos) {
        std::string_view users = line.substr(hash + 10);
        size_t i = 0;
        while ((i = users.find_first_not_of(' ', i)) != std::string_view::npos) {
          size_t e2 = users.find(' ', i);
          std::string_view who = users.substr(i, e2 == std::string_view::npos ? e2 : e2 - i);
          if (who == "ftrace") e.ftrace = true;
          else if (who == "perf") e.perf = true;
          else if (who == "other") e.other = true;
          else return bad(fmt::format("unknown user \"{}\"", who));
          i = e2 == std::string_view::npos ? users.size() : e2;
        }
        if (!e.busy()) return bad("\"Used by\" without a user");
      }
      st.events.push_back(std::move(e));
      continue;
    }
    if (line.empty()) continue;
    auto value = [&](std::string_view key, uint64_t& out) -> Status {
      auto n = parse_kernel_uint(line.substr(key.size()), 10);
      if (!n) return bad("not a number");
      out = *n;
      return {};
    };
    if (starts_with(line, "Active: ")) {
      TRACEBED_TRY(value("Active: ", st.active));
      have_active = true;
    } else if (starts_with(line, "Busy: ")) {
      TRACEBED_TRY(value("Busy: ", st.busy));
      have_busy = true;
    } else {
      return bad("expected \"Active: N\" or \"Busy: N\"");
    }
  }
  if (!have_active || !have_busy) return Error{fmt::format("{}: no \"Active:\" and \"Busy:\" lines", file)};
  // The kernel counts both in the loop that prints the names.
  uint64_t busy = std::count_if(st.events.begin(), st.events.end(), [](const auto& e) { return e.busy(); });
  if (st.active != st.events.size() || st.busy != busy)
    return Error{fmt::format("{}: Active {} / Busy {} disagree with the {} names listed ({} in use)", file, st.active,
                             st.busy, st.events.size(), busy)};
  return st;
}

bool is_multi_format_name(std::string_view tp_name, std::string_view name) {
  return tp_name.size() > name.size() + 1 && starts_with(tp_name, name) && tp_name[name.size()] == '.' &&
         is_hex(tp_name.substr(name.size() + 1));
}

}  // namespace tracebed::tracefs
