#include "framework/tracefs/hist_file.h"

#include <fmt/format.h>

#include "framework/base/text.h"
#include "framework/tracefs/tracefs_text.h"
#include "framework/tracefs/tracefs.h"

namespace tracebed::tracefs {

namespace {

std::optional<uint64_t> parse_uint(std::string_view s, int radix = 10) {
  return base::parse_number<uint64_t>(trim(s), radix);
}

}  // namespace

const HistKey* HistEntry::key(std::string_view field) const {
  for (const HistKey& k : keys)
    if (k.field == field) return &k;
  return nullptr;
}

const HistValue* HistEntry::value(std::string_view field) const {
  for (const HistValue& v : values)
    if (v.field == field) return &v;
  return nullptr;
}

uint64_t HistEntry::hitcount() const {
  const HistValue* v = value("hitcount");
  return v && v->number ? *v->number : 0;
}

namespace {

// The name a key is printed with: the field without modifiers.
std::string printed_name(const HistField& f) { return f.name(); }

bool is_stack_key(const HistField& f) {
  return f.name() == "common_stacktrace" || f.name() == "stacktrace" || f.has("stacktrace");
}

// "bash            [       156]" -> ("bash", 156).
void split_bracket_number(std::string_view text, HistKey& k) {
  size_t open = text.rfind('[');
  size_t close = text.rfind(']');
  if (open == std::string_view::npos || close == std::string_view::npos || close < open) return;
  k.number = parse_uint(text.substr(open + 1, close - open - 1));
  k.symbol = trim(text.substr(0, open));
}

void type_key(const HistField& f, std::string_view raw, HistKey& k) {
  if (is_stack_key(f)) {
    for (std::string_view line : split_lines(raw))
      if (!trim(line).empty()) k.stack.emplace_back(trim(line));
    k.text = trim(raw);
    return;
  }
  std::string_view text = trim(raw);
  k.text = text;
  if (f.has("execname") || f.has("syscall")) {
    split_bracket_number(text, k);
  } else if (f.has("sym") || f.has("sym-offset")) {
    // "[ffffffffaec27cc9] tracing_map_init+0x79/0x250"
    size_t close = text.find(']');
    if (text.starts_with("[") && close != std::string_view::npos) {
      k.number = parse_uint(text.substr(1, close - 1), 16);
      k.symbol = trim(text.substr(close + 1));
    }
  } else if (f.has("hex")) {
    k.number = parse_uint(text, 16);
  } else if (f.has("log2")) {
    // "~ 2^13"
    size_t caret = text.find("2^");
    if (text.starts_with("~") && caret != std::string_view::npos) {
      if (auto n = parse_uint(text.substr(caret + 2))) k.log2 = static_cast<uint32_t>(*n);
    }
  } else if (f.has("buckets")) {
    // "~ 1984-2047"
    std::string_view r = trim(text.substr(text.starts_with("~") ? 1 : 0));
    size_t dash = r.find('-');
    if (dash != std::string_view::npos) {
      auto lo = parse_uint(r.substr(0, dash));
      auto hi = parse_uint(r.substr(dash + 1));
      if (lo && hi) k.bucket = std::make_pair(*lo, *hi);
    }
  } else {
    k.number = parse_uint(text);
  }
}

// "hitcount:          2  bytes_req:        114", "hitcount (%):  12.50",
// "max:        373  next_comm: kworker/u8:0    prev_pid:          0".
std::vector<HistValue> parse_values(std::string_view text) {
  std::vector<HistValue> out;
  auto words = split_words(text);
  for (size_t i = 0; i < words.size(); ++i) {
    std::string_view w = words[i];
    bool percent = false;
    if (i + 1 < words.size() && words[i + 1] == "(%):") {
      percent = true;
      ++i;
    } else if (!w.ends_with(":") || w.size() < 2) {
      if (!out.empty()) out.back().text += (out.back().text.empty() ? "" : " ") + std::string(w);
      continue;
    } else {
      w.remove_suffix(1);
    }
    HistValue v;
    v.field = w;
    out.push_back(std::move(v));
    if (percent) out.back().percent = 0.0;
  }
  for (HistValue& v : out) {
    v.number = parse_uint(v.text);
    if (v.percent) {
      double d = 0;
      auto [p, ec] = std::from_chars(v.text.data(), v.text.data() + v.text.size(), d);
      if (ec == std::errc{}) v.percent = d;
    }
  }
  return out;
}

Result<HistEntry> parse_entry(std::string_view text, const HistSection& sec, size_t line_no) {
  HistEntry e;
  size_t open = text.find('{');
  size_t close = text.rfind('}');
  if (open == std::string_view::npos || close == std::string_view::npos || close < open)
    return Error{fmt::format("hist line {}: expected \"{{ <keys> }} <values>\", read \"{}\"", line_no, text)};
  std::string_view keys = text.substr(open + 1, close - open - 1);
  const auto& fields = sec.trigger.keys();
  size_t pos = 0;
  for (size_t i = 0; i < fields.size(); ++i) {
    std::string head = printed_name(fields[i]) + ":";
    // At the start or after a blank: "pid:" is not in "next_pid:".
    size_t at = keys.find(head, pos);
    while (at != std::string_view::npos && at > 0 && keys[at - 1] != ' ' && keys[at - 1] != ',')
      at = keys.find(head, at + 1);
    if (at == std::string_view::npos)
      return Error{fmt::format("hist line {}: key \"{}\" not in \"{}\"", line_no, fields[i].name(), keys)};
    size_t start = at + head.size();
    size_t end = keys.size();
    if (i + 1 < fields.size()) {
      size_t next = keys.find(", " + printed_name(fields[i + 1]) + ":", start);
      if (next != std::string_view::npos) end = next;
    }
    HistKey k;
    k.field = fields[i].name();
    type_key(fields[i], keys.substr(start, end - start), k);
    e.keys.push_back(std::move(k));
    pos = end;
  }
  e.values = parse_values(text.substr(close + 1));
  return e;
}

// "\ttriggering value { onchange($newprio) }:        121\ttriggered by event with key: { comm: ping }"
Result<HistSnapshot> parse_snapshot_details(std::string_view line, size_t line_no) {
  constexpr std::string_view head = "triggering value { ", by = "triggered by event with key: ";
  std::string_view t = trim(line);
  size_t close = t.find(" }:");
  size_t key = t.find(by);
  if (!t.starts_with(head) || close == std::string_view::npos || key == std::string_view::npos || key < close)
    return Error{fmt::format("hist line {}: expected \"triggering value {{ <handler> }}: <n>\ttriggered by event with "
                             "key: <key>\", read \"{}\"", line_no, line)};
  HistSnapshot s;
  s.handler = t.substr(head.size(), close - head.size());
  auto value = parse_uint(trim(t.substr(close + 3, key - close - 3)));
  if (!value) return Error{fmt::format("hist line {}: no triggering value in \"{}\"", line_no, line)};
  s.value = *value;
  s.key = trim(t.substr(key + by.size()));
  return s;
}

}  // namespace

Result<HistFile> parse_hist_file(std::string_view text) {
  HistFile f;
  auto lines = split_lines(text);
  HistSection* sec = nullptr;
  bool in_totals = false;
  for (size_t i = 0; i < lines.size(); ++i) {
    std::string_view line = lines[i];
    size_t line_no = i + 1;
    if (line.starts_with("# event histogram")) {
      f.sections.emplace_back();
      sec = &f.sections.back();
      in_totals = false;
      continue;
    }
    if (line.starts_with("#")) {
      constexpr std::string_view info = "# trigger info: ";
      if (line.starts_with(info) && sec) {
        sec->trigger_info = trim(line.substr(info.size()));
        auto t = HistTrigger::parse(sec->trigger_info);
        if (!t) return t.error().within(fmt::format("hist line {}", line_no));
        sec->trigger = std::move(*t);
      }
      continue;
    }
    if (trim(line).empty()) continue;
    if (!sec) return Error{fmt::format("hist line {}: \"{}\" before \"# event histogram\"", line_no, line)};
    if (trim(line) == "Totals:") {
      in_totals = true;
      continue;
    }
    if (in_totals) {
      std::string_view t = trim(line);
      size_t colon = t.find(':');
      auto n = colon == std::string_view::npos ? std::nullopt : parse_uint(t.substr(colon + 1));
      if (!n) return Error{fmt::format("hist line {}: expected \"<name>: <number>\" in Totals, read \"{}\"", line_no, line)};
      std::string_view name = t.substr(0, colon);
      if (name == "Hits") sec->totals.hits = *n;
      else if (name == "Entries") sec->totals.entries = *n;
      else if (name == "Dropped") sec->totals.dropped = *n;
      continue;
    }
    if (trim(line) == "Snapshot taken (see tracing/snapshot).  Details:") {
      if (i + 1 >= lines.size()) return Error{fmt::format("hist line {}: snapshot details missing", line_no)};
      TRACEBED_ASSIGN_OR_RETURN(HistSnapshot snap, parse_snapshot_details(lines[i + 1], line_no + 1));
      sec->snapshot = std::move(snap);
      ++i;
      continue;
    }
    if (line.starts_with("{")) {
      // A stacktrace key runs over several lines, to a line starting "}".
      std::string entry(line);
      while (entry.find('}') == std::string::npos && i + 1 < lines.size()) entry += "\n" + std::string(lines[++i]);
      TRACEBED_ASSIGN_OR_RETURN(HistEntry e, parse_entry(entry, *sec, line_no));
      sec->entries.push_back(std::move(e));
      continue;
    }
    if (line.starts_with("\t") && !sec->entries.empty()) {
      // onmax/onchange: "\tmax:        373  next_comm: kworker/u8:0 ..."
      for (HistValue& v : parse_values(line)) sec->entries.back().saved.push_back(std::move(v));
      continue;
    }
    return Error{fmt::format("hist line {}: unexpected \"{}\"", line_no, line)};
  }
  return f;
}

Result<HistFile> read_hist(const Event& ev) {
  TRACEBED_ASSIGN_OR_RETURN(std::string text, ev.files().read("hist"));
  auto f = parse_hist_file(text);
  if (!f) return f.error().within(ev.files().path("hist"));
  return f;
}

}  // namespace tracebed::tracefs
