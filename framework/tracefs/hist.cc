#include "framework/tracefs/hist.h"

#include <charconv>

#include <fmt/format.h>

#include "framework/base/text.h"
#include "framework/tracefs/text.h"
#include "framework/tracefs/tracefs.h"

namespace tracebed::tracefs {

namespace {

template <typename T, typename F>
std::string join(const std::vector<T>& items, std::string_view sep, F&& str) {
  std::string out;
  for (size_t i = 0; i < items.size(); ++i) {
    if (i) out += sep;
    out += str(items[i]);
  }
  return out;
}

std::string join(const std::vector<std::string>& items, std::string_view sep) {
  return join(items, sep, [](const std::string& s) { return s; });
}

// Splits at `sep` outside parentheses: "keys=a:onmatch(x.y).trace(s,$a)".
std::vector<std::string_view> split_top(std::string_view s, char sep) {
  std::vector<std::string_view> out;
  int depth = 0;
  size_t start = 0;
  for (size_t i = 0; i < s.size(); ++i) {
    if (s[i] == '(') ++depth;
    else if (s[i] == ')') --depth;
    else if (s[i] == sep && depth == 0) {
      out.push_back(s.substr(start, i - start));
      start = i + 1;
    }
  }
  out.push_back(s.substr(start));
  return out;
}

std::optional<uint64_t> parse_uint(std::string_view s, int radix = 10) {
  return base::parse_number<uint64_t>(trim(s), radix);
}

std::string dollar(std::string_view var) { return var.starts_with("$") ? std::string(var) : "$" + std::string(var); }

}  // namespace

// ---- HistField ----

bool HistField::has(std::string_view modifier) const {
  for (const std::string& m : mods_)
    if (m == modifier || (m.starts_with(modifier) && m.size() > modifier.size() && m[modifier.size()] == '='))
      return true;
  return false;
}

std::string HistField::str() const {
  std::string s = name_;
  for (const std::string& m : mods_) s += "." + m;
  return s;
}

HistField HistField::parse(std::string_view text) {
  text = trim(text);
  // Expressions ("common_timestamp.usecs-$ts0") stay whole; a '-' after
  // the first '.' belongs to a modifier ("sym-offset").
  size_t minus = text.find('-');
  if (text.find_first_of("+*/$") != std::string_view::npos ||
      (minus != std::string_view::npos && minus < text.find('.')))
    return HistField(text);
  size_t dot = text.find('.');
  HistField f(text.substr(0, dot));
  while (dot != std::string_view::npos) {
    size_t next = text.find('.', dot + 1);
    f.mods_.emplace_back(text.substr(dot + 1, next == std::string_view::npos ? next : next - dot - 1));
    dot = next;
  }
  return f;
}

// ---- HistAction ----

HistAction HistAction::onmatch(std::string_view system, std::string_view event) {
  return HistAction(fmt::format("onmatch({}.{})", system, event));
}

HistAction HistAction::onmax(std::string_view var) { return HistAction(fmt::format("onmax({})", dollar(var))); }

HistAction HistAction::onchange(std::string_view var) {
  return HistAction(fmt::format("onchange({})", dollar(var)));
}

HistAction& HistAction::trace(std::string_view synthetic_event, std::vector<std::string> args) {
  action_ = fmt::format(".trace({}{}{})", synthetic_event, args.empty() ? "" : ",", join(args, ","));
  return *this;
}

HistAction& HistAction::synth(std::string_view synthetic_event, std::vector<std::string> args) {
  action_ = fmt::format(".{}({})", synthetic_event, join(args, ","));
  return *this;
}

HistAction& HistAction::save(std::vector<std::string> fields) {
  action_ = fmt::format(".save({})", join(fields, ","));
  return *this;
}

HistAction& HistAction::snapshot() {
  action_ = ".snapshot()";
  return *this;
}

Result<HistAction> HistAction::parse(std::string_view text) {
  text = trim(text);
  size_t close = text.find(')');
  if (!text.starts_with("on") || text.find('(') == std::string_view::npos || close == std::string_view::npos ||
      close + 1 >= text.size() || text[close + 1] != '.' || !text.ends_with(")"))
    return Error{fmt::format("hist action \"{}\": expected <handler>(...).<action>(...)", text)};
  HistAction a{std::string(text.substr(0, close + 1))};
  a.action_ = text.substr(close + 1);
  return a;
}

// ---- HistTrigger ----

HistTrigger& HistTrigger::key(HistField f) {
  keys_.push_back(std::move(f));
  return *this;
}
HistTrigger& HistTrigger::val(HistField f) {
  vals_.push_back(std::move(f));
  return *this;
}
HistTrigger& HistTrigger::sort(HistField f) {
  sort_.push_back(std::move(f));
  return *this;
}
HistTrigger& HistTrigger::size(uint32_t entries) {
  size_ = entries;
  return *this;
}
HistTrigger& HistTrigger::name(std::string_view shared_name) {
  name_ = shared_name;
  return *this;
}
HistTrigger& HistTrigger::var(std::string_view name, std::string_view expr) {
  vars_.emplace_back(std::string(name), std::string(expr));
  return *this;
}
HistTrigger& HistTrigger::clock(std::string_view clock) {
  clock_ = clock;
  return *this;
}
HistTrigger& HistTrigger::action(HistAction a) {
  actions_.push_back(std::move(a));
  return *this;
}
HistTrigger& HistTrigger::nohitcount() {
  nohitcount_ = true;
  return *this;
}
HistTrigger& HistTrigger::pause() {
  pause_ = true;
  cont_ = false;
  return *this;
}
HistTrigger& HistTrigger::cont() {
  cont_ = true;
  pause_ = false;
  return *this;
}
HistTrigger& HistTrigger::clear() {
  clear_ = true;
  return *this;
}
HistTrigger& HistTrigger::filter(std::string_view expr) {
  filter_ = expr;
  return *this;
}

std::string HistTrigger::spec(bool for_removal) const {
  auto field = [](const HistField& f) { return f.str(); };
  std::string s = "hist:keys=" + join(keys_, ",", field);
  if (!vals_.empty()) s += ":vals=" + join(vals_, ",", field);
  if (!vars_.empty())
    s += ":" + join(vars_, ",", [](const auto& v) { return v.first + "=" + v.second; });
  if (!sort_.empty()) s += ":sort=" + join(sort_, ",", field);
  if (size_) s += fmt::format(":size={}", *size_);
  if (!name_.empty()) s += ":name=" + name_;
  if (!clock_.empty()) s += ":clock=" + clock_;
  if (nohitcount_) s += ":nohitcount";
  if (!for_removal) {
    if (pause_) s += ":pause";
    if (cont_) s += ":cont";
    if (clear_) s += ":clear";
  }
  for (const HistAction& a : actions_) s += ":" + a.str();
  return s;
}

std::string HistTrigger::command() const {
  std::string s = spec(false);
  if (!filter_.empty()) s += " if " + filter_;
  return s;
}

std::string HistTrigger::remove_command() const {
  std::string s = "!" + spec(true);
  if (!filter_.empty()) s += " if " + filter_;
  return s;
}

Trigger HistTrigger::trigger() const {
  Trigger t(spec(false));
  t.filter_ = filter_;
  t.remove_spec_ = spec(true);
  return t;
}

Result<HistTrigger> HistTrigger::parse(std::string_view line) {
  std::string_view rest = trim(line);
  HistTrigger h;
  if (rest.ends_with(" [paused]")) h.pause_ = true;
  for (std::string_view state : {" [active]", " [paused]"})
    if (rest.ends_with(state)) rest.remove_suffix(state.size());
  if (size_t if_pos = rest.find(" if "); if_pos != std::string_view::npos) {
    h.filter_ = trim(rest.substr(if_pos + 4));
    rest = trim(rest.substr(0, if_pos));
  }
  if (!rest.starts_with("hist"))
    return Error{fmt::format("hist trigger \"{}\": does not start with \"hist\"", line)};
  auto parts = split_top(rest, ':');
  auto fields = [](std::string_view list) {
    std::vector<HistField> out;
    for (std::string_view f : split_top(list, ',')) out.push_back(HistField::parse(f));
    return out;
  };
  for (size_t i = 1; i < parts.size(); ++i) {
    std::string_view p = trim(parts[i]);
    auto value_of = [&](std::string_view prefix) -> std::optional<std::string_view> {
      if (p.starts_with(prefix)) return p.substr(prefix.size());
      return std::nullopt;
    };
    if (p.empty()) continue;
    if (auto v = value_of("keys=")) h.keys_ = fields(*v);
    else if (auto v2 = value_of("key=")) h.keys_ = fields(*v2);
    else if (auto v3 = value_of("vals=")) h.vals_ = fields(*v3);
    else if (auto v4 = value_of("values=")) h.vals_ = fields(*v4);
    else if (auto v5 = value_of("sort=")) h.sort_ = fields(*v5);
    else if (auto v6 = value_of("size=")) {
      auto n = parse_uint(*v6);
      if (!n) return Error{fmt::format("hist trigger \"{}\": bad size \"{}\"", line, *v6)};
      h.size_ = static_cast<uint32_t>(*n);
    } else if (auto v7 = value_of("name=")) h.name_ = *v7;
    else if (auto v8 = value_of("clock=")) h.clock_ = *v8;
    else if (p == "pause" || p == "paused") h.pause_ = true;
    else if (p == "cont" || p == "continue") h.cont_ = true;
    else if (p == "clear") h.clear_ = true;
    else if (p == "nohitcount" || p == "NOHC") h.nohitcount_ = true;
    else if (p.starts_with("on") && p.find('(') != std::string_view::npos && p.find('(') < p.find('=')) {
      TRACEBED_ASSIGN_OR_RETURN(HistAction a, HistAction::parse(p));
      h.actions_.push_back(std::move(a));
    } else if (p.find('=') != std::string_view::npos) {
      for (std::string_view v : split_top(p, ',')) {
        size_t eq = v.find('=');
        if (eq == std::string_view::npos)
          return Error{fmt::format("hist trigger \"{}\": expected <var>=<expr>, read \"{}\"", line, v)};
        h.vars_.emplace_back(std::string(trim(v.substr(0, eq))), std::string(trim(v.substr(eq + 1))));
      }
    } else if (i == 1) {
      h.name_ = p;  // read back as "hist:<name>:keys=..." (event_hist_trigger_print)
    } else {
      return Error{fmt::format("hist trigger \"{}\": unknown part \"{}\"", line, p)};
    }
  }
  if (h.keys_.empty()) return Error{fmt::format("hist trigger \"{}\": no keys", line)};
  return h;
}

// ---- the hist file ----

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
