#include "framework/tracefs/synth.h"

#include <cerrno>

#include <fmt/format.h>

#include "framework/tracefs/tracefs_text.h"

namespace tracebed::tracefs {

std::string SynthField::str() const {
  switch (kind) {
    case Kind::string: return fmt::format("{} {}[{}]", type, name, size);
    case Kind::dynamic: return fmt::format("{} {}[]", type, name);
    case Kind::stack: return fmt::format("{}[] {}", type, name);
    case Kind::scalar: break;
  }
  return type + " " + name;
}

SynthDef& SynthDef::field(std::string_view type, std::string_view name) {
  return add({std::string(type), std::string(name), SynthField::Kind::scalar, 0});
}

SynthDef& SynthDef::string(std::string_view name, uint32_t size) {
  return add({"char", std::string(name), SynthField::Kind::string, size});
}

SynthDef& SynthDef::dynamic_string(std::string_view name) {
  return add({"char", std::string(name), SynthField::Kind::dynamic, 0});
}

SynthDef& SynthDef::stacktrace(std::string_view name) {
  return add({"long", std::string(name), SynthField::Kind::stack, 0});
}

SynthDef& SynthDef::add(SynthField f) {
  fields_.push_back(std::move(f));
  return *this;
}

const SynthField* SynthDef::find(std::string_view field) const {
  for (const SynthField& f : fields_)
    if (f.name == field) return &f;
  return nullptr;
}

std::string SynthDef::command() const {
  std::string cmd = name_;
  for (size_t i = 0; i < fields_.size(); ++i) cmd += (i ? "; " : " ") + fields_[i].str();
  return cmd;
}

namespace {

// "u64 lat", "char comm[16]", "char[16] comm", "char name[]", "char[] name",
// "long[] stack", "unsigned int x".
Result<SynthField> parse_field(std::string_view text, std::string_view line) {
  text = trim(text);
  size_t sp = text.find_last_of(" \t");
  if (sp == std::string_view::npos)
    return Error{fmt::format("synthetic event \"{}\": field \"{}\" has no type", line, text)};
  std::string type(trim(text.substr(0, sp)));
  std::string name(trim(text.substr(sp + 1)));
  SynthField f;
  // The array part sits on the name when written, on the type when read.
  std::string* arr = nullptr;
  if (name.ends_with("]")) arr = &name;
  else if (type.ends_with("]")) arr = &type;
  if (arr) {
    size_t open = arr->find('[');
    if (open == std::string::npos)
      return Error{fmt::format("synthetic event \"{}\": bad array in \"{}\"", line, text)};
    std::string_view dim = std::string_view(*arr).substr(open + 1, arr->size() - open - 2);
    arr->resize(open);
    if (dim.empty()) {
      // "char name[]" / "char[] name" is a dynamic string; "long[] stack" a stack.
      f.kind = type == "char" ? SynthField::Kind::dynamic : SynthField::Kind::stack;
    } else {
      f.kind = SynthField::Kind::string;
      uint32_t n = 0;
      for (char c : dim) {
        if (c < '0' || c > '9')
          return Error{fmt::format("synthetic event \"{}\": bad array size in \"{}\"", line, text)};
        n = n * 10 + static_cast<uint32_t>(c - '0');
      }
      f.size = n;
    }
  }
  f.type = type;
  f.name = name;
  return f;
}

}  // namespace

Result<SynthDef> SynthDef::parse(std::string_view line) {
  std::string_view rest = trim(line);
  if (rest.starts_with("s:")) {
    rest.remove_prefix(2);
    if (rest.starts_with("synthetic/")) rest.remove_prefix(10);
  }
  size_t sp = rest.find_first_of(" \t");
  std::string_view name = rest.substr(0, sp);
  if (name.empty()) return Error{fmt::format("synthetic event \"{}\": no name", line)};
  SynthDef ev{std::string(name)};
  std::string_view fields = sp == std::string_view::npos ? std::string_view{} : rest.substr(sp + 1);
  while (!trim(fields).empty()) {
    size_t semi = fields.find(';');
    std::string_view one = fields.substr(0, semi);
    fields = semi == std::string_view::npos ? std::string_view{} : fields.substr(semi + 1);
    if (trim(one).empty()) continue;
    TRACEBED_ASSIGN_OR_RETURN(SynthField f, parse_field(one, line));
    ev.add(std::move(f));
  }
  return ev;
}

Result<std::vector<SynthDef>> parse_synthetic_events(std::string_view text) {
  std::vector<SynthDef> out;
  for (std::string_view line : split_lines(text)) {
    if (trim(line).empty() || line.starts_with("#")) continue;
    // dynamic_events also lists kprobes, uprobes, eprobes: "p:kprobes/x ...".
    if (line.find(':') != std::string_view::npos && !line.starts_with("s:")) {
      size_t colon = line.find(':');
      size_t blank = line.find_first_of(" \t");
      if (colon < blank) continue;
    }
    TRACEBED_ASSIGN_OR_RETURN(SynthDef ev, SynthDef::parse(line));
    out.push_back(std::move(ev));
  }
  return out;
}

// ---- Synth ----

Result<Synth> Synth::create(const Instance& top, SynthDef spec, Via via) {
  if (!top.is_top())
    return Error{fmt::format("synthetic event {}: synthetic events live at the tracefs root, not in instance {}",
                             spec.name(), top.name())};
  const Files& f = top.files();
  if (via == Via::synthetic_events) TRACEBED_TRY(f.append("synthetic_events", spec.command()));
  else TRACEBED_TRY(f.append("dynamic_events", spec.dynamic_command()));
  Synth s(f, std::move(spec), via);
  s.owned_ = true;
  return s;
}

Synth::Synth(Synth&& other) noexcept
    : top_(std::move(other.top_)),
      spec_(std::move(other.spec_)),
      via_(other.via_),
      triggers_(std::move(other.triggers_)),
      owned_(other.owned_) {
  other.owned_ = false;
  other.triggers_.clear();
}

Synth& Synth::operator=(Synth&& other) noexcept {
  if (this != &other) {
    (void)destroy();
    top_ = std::move(other.top_);
    spec_ = std::move(other.spec_);
    via_ = other.via_;
    triggers_ = std::move(other.triggers_);
    owned_ = other.owned_;
    other.owned_ = false;
    other.triggers_.clear();
  }
  return *this;
}

Synth::~Synth() { (void)destroy(); }

Event Synth::event() const { return Event(*top_, "synthetic", spec_.name()); }

Status Synth::add_trigger(const Event& ev, const Trigger& t) {
  TRACEBED_TRY(ev.add_trigger(t));
  triggers_.push_back({ev, t});
  return {};
}

void Synth::release() {
  owned_ = false;
  triggers_.clear();
}

Status Synth::destroy() {
  std::vector<std::string> problems;
  // Newest first: an end trigger's onmatch refers to the start trigger's
  // variables, so it goes before them.
  while (!triggers_.empty()) {
    Added a = std::move(triggers_.back());
    triggers_.pop_back();
    if (Status s = a.event.remove_trigger(a.trigger); !s) problems.push_back(s.error().message);
  }
  if (owned_) {
    owned_ = false;
    Event ev = event();
    if (ev.exists()) (void)ev.disable();
    // A copy enabled in any instance holds the event too (EBUSY): tests
    // enable it in their own instance, which still exists here.
    const Files& top = *top_;
    if (auto names = top.ops().list(top.path("instances"))) {
      for (const std::string& n : *names) {
        const std::string enable = top.path(fmt::format("instances/{}/events/synthetic/{}/enable", n, spec_.name()));
        if (auto state = top.ops().read(enable); state && !state->starts_with("0"))
          (void)top.ops().write(enable, "0", false);
      }
    }
    const Files& f = *top_;
    std::string_view file = via_ == Via::synthetic_events ? "synthetic_events" : "dynamic_events";
    std::string cmd = via_ == Via::synthetic_events ? spec_.remove_command() : spec_.dynamic_remove_command();
    auto err = f.try_write(file, cmd, true);
    if (!err) {
      problems.push_back(err.error().message);
    } else if (*err == EBUSY) {
      // The kernel logs nothing for this; say what holds it.
      std::string why = fmt::format(
          "remove synthetic event {}: Device or resource busy (EBUSY): it is in use: a hist trigger's action still "
          "calls it, or its own event has triggers or is enabled",
          spec_.name());
      if (auto t = ev.triggers(); t && !t->empty()) {
        why += fmt::format("; triggers on {}:", ev.files().path("trigger"));
        for (const TriggerEntry& e : *t) why += "\n  " + e.line;
      }
      problems.push_back(why);
    } else if (*err) {
      problems.push_back(f.write_error(file, cmd, *err).message);
    }
  }
  if (problems.empty()) return {};
  std::string msg = problems.front();
  for (size_t i = 1; i < problems.size(); ++i) msg += "\n" + problems[i];
  return Error{msg};
}

}  // namespace tracebed::tracefs
