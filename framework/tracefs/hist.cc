#include "framework/tracefs/hist.h"

#include <charconv>

#include <fmt/format.h>

#include "framework/base/text.h"
#include "framework/tracefs/tracefs_text.h"

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

}  // namespace tracebed::tracefs
