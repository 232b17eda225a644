#include "framework/tracefs/sql.h"

#include <memory>

#include <fmt/format.h>

#include "framework/base/text.h"
#include "framework/tracefs/tracefs_text.h"

namespace tracebed::tracefs {

// The formats compile_sql() checks a statement against: an event's format
// file, a synthetic event's fields, and where to find them.

const SqlFormatField* SqlFormat::field(std::string_view name) const {
  for (const SqlFormatField& f : fields)
    if (f.name == name) return &f;
  return nullptr;
}

namespace {

std::optional<uint64_t> to_uint(std::string_view s) { return base::parse_number<uint64_t>(trim(s)); }

// "offset:8;\tsize:16;" -> the number after key.
std::optional<uint64_t> attr(std::string_view line, std::string_view key) {
  size_t at = line.find(key);
  if (at == std::string_view::npos) return std::nullopt;
  std::string_view rest = line.substr(at + key.size());
  return to_uint(rest.substr(0, rest.find(';')));
}

}  // namespace

Result<SqlFormat> parse_sql_format(const EventName& event, std::string_view format_text) {
  SqlFormat out;
  out.event = event;
  size_t line_no = 0;
  for (std::string_view line : split_lines(format_text)) {
    ++line_no;
    std::string_view t = trim(line);
    if (!t.starts_with("field:")) continue;
    // "field:char next_comm[16];\toffset:8;\tsize:16;\tsigned:0;"
    std::string_view decl = t.substr(6, t.find(';') - 6);
    size_t sp = decl.find_last_of(" \t");
    if (sp == std::string_view::npos)
      return Error{fmt::format("{} format line {}: expected \"field:<type> <name>;\", read \"{}\"", event.str(),
                               line_no, t)};
    SqlFormatField f;
    f.type = trim(decl.substr(0, sp));
    std::string_view name = decl.substr(sp + 1);
    if (size_t br = name.find('['); br != std::string_view::npos) {
      f.array_len = static_cast<uint32_t>(to_uint(name.substr(br + 1, name.find(']') - br - 1)).value_or(0));
      name = name.substr(0, br);
    }
    f.name = name;
    f.dynamic = f.type.starts_with("__data_loc") || f.type.starts_with("__rel_loc");
    auto size = attr(t, "size:");
    auto is_signed = attr(t, "signed:");
    if (!size || !is_signed)
      return Error{fmt::format("{} format line {}: no size or signed in \"{}\"", event.str(), line_no, t)};
    f.size = static_cast<uint32_t>(*size);
    f.is_signed = *is_signed != 0;
    if (f.array_len == 0 && !f.dynamic && f.type.ends_with("]")) f.array_len = f.size;
    out.fields.push_back(std::move(f));
  }
  if (out.fields.empty()) return Error{fmt::format("{} format: no fields", event.str())};
  return out;
}

SqlFormat synth_format(const SynthDef& ev) {
  SqlFormat out;
  out.event = {"synthetic", ev.name()};
  // The common fields every event has (kernel/trace/trace_events.c).
  out.fields = {{"common_type", "unsigned short", 2, false, 0, false},
                {"common_flags", "unsigned char", 1, false, 0, false},
                {"common_preempt_count", "unsigned char", 1, false, 0, false},
                {"common_pid", "int", 4, true, 0, false}};
  for (const SynthField& f : ev.fields()) {
    SqlFormatField g;
    g.name = f.name;
    g.type = f.type;
    switch (f.kind) {
      case SynthField::Kind::string:
        g.size = f.size;
        g.array_len = f.size;
        g.is_signed = true;
        break;
      case SynthField::Kind::dynamic:
        g.type = "__data_loc char[]";
        g.size = 4;
        g.dynamic = true;
        break;
      case SynthField::Kind::stack:
        g.type = "__data_loc unsigned long[]";
        g.size = 4;
        g.dynamic = true;
        break;
      case SynthField::Kind::scalar: {
        // kernel/trace/trace_events_synth.c synth_field_size/synth_field_signed.
        const std::string& t = f.type;
        if (t == "u8" || t == "unsigned char") g.size = 1;
        else if (t == "s8" || t == "char" || t == "bool") g.size = 1, g.is_signed = true;
        else if (t == "u16") g.size = 2;
        else if (t == "s16") g.size = 2, g.is_signed = true;
        else if (t == "u32" || t == "unsigned int" || t == "gfp_t") g.size = 4;
        else if (t == "s32" || t == "int" || t == "pid_t") g.size = 4, g.is_signed = true;
        else if (t == "s64" || t == "long") g.size = 8, g.is_signed = true;
        else g.size = 8;  // u64, unsigned long
        break;
      }
    }
    out.fields.push_back(std::move(g));
  }
  return out;
}

SqlResolver SqlResolver::with(std::vector<SynthDef> synthetic) const {
  auto known = std::make_shared<std::vector<SynthDef>>(std::move(synthetic));
  SqlResolver base = *this;
  SqlResolver r;
  r.event = [known, base](std::string_view name) -> Result<EventName> {
    for (const SynthDef& s : *known)
      if (s.name() == name) return EventName{"synthetic", s.name()};
    return base.event(name);
  };
  r.format = [known, base](const EventName& ev) -> Result<SqlFormat> {
    if (ev.system == "synthetic")
      for (const SynthDef& s : *known)
        if (s.name() == ev.name) return synth_format(s);
    return base.format(ev);
  };
  return r;
}

SqlResolver tracefs_resolver(const Tracefs& fs) {
  auto events = std::make_shared<std::optional<std::vector<EventName>>>();
  SqlResolver r;
  r.event = [fs, events](std::string_view name) -> Result<EventName> {
    if (!*events) {
      TRACEBED_ASSIGN_OR_RETURN(std::vector<EventName> all, fs.available_events());
      *events = std::move(all);
    }
    std::vector<EventName> found;
    for (const EventName& e : **events)
      if (e.name == name) found.push_back(e);
    if (found.empty()) return Error{fmt::format("no event \"{}\" in {}/available_events", name, fs.root())};
    if (found.size() > 1) {
      std::string all;
      for (const EventName& e : found) all += (all.empty() ? "" : ", ") + e.system + "." + e.name;
      return Error{fmt::format("event \"{}\" is in several systems ({}): write <system>.<event>", name, all)};
    }
    return found.front();
  };
  r.format = [fs](const EventName& ev) -> Result<SqlFormat> {
    TRACEBED_ASSIGN_OR_RETURN(std::string text, fs.top().event(ev.system, ev.name).format());
    return parse_sql_format(ev, text);
  };
  return r;
}

}  // namespace tracebed::tracefs
