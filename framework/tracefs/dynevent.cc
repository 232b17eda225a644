#include "framework/tracefs/dynevent.h"

#include <algorithm>
#include <cerrno>

#include <fmt/format.h>

#include "framework/base/text.h"
#include "framework/tracefs/tracefs_text.h"

namespace tracebed::tracefs {

FetchType FetchType::bitfield(unsigned width, unsigned offset, unsigned container_bits) {
  return FetchType(fmt::format("b{}@{}/{}", width, offset, container_bits));
}

FetchType FetchType::array(unsigned n) const { return FetchType(fmt::format("{}[{}]", s_, n)); }

FetchArg FetchArg::reg(std::string_view name) {
  return FetchArg(name.starts_with("%") ? std::string(name) : "%" + std::string(name));
}

FetchArg FetchArg::arg(unsigned n) { return FetchArg(fmt::format("$arg{}", n)); }

FetchArg FetchArg::stack(unsigned n) { return FetchArg(fmt::format("$stack{}", n)); }

FetchArg FetchArg::field(std::string_view name) { return FetchArg("$" + std::string(name)); }

FetchArg FetchArg::symbol(std::string_view sym, int64_t offset) {
  if (offset == 0) return FetchArg("@" + std::string(sym));
  return FetchArg(fmt::format("@{}{:+}", sym, offset));
}

FetchArg FetchArg::address(uint64_t addr) { return FetchArg(fmt::format("@{:#x}", addr)); }

FetchArg FetchArg::file_offset(uint64_t offset) { return FetchArg(fmt::format("@+{:#x}", offset)); }

FetchArg FetchArg::immediate(int64_t value) { return FetchArg(fmt::format("\\{}", value)); }

FetchArg FetchArg::immediate(std::string_view text) { return FetchArg(fmt::format("\\\"{}\"", text)); }

// The kernel reads the offset with kstrtol after the sign (and the 'u'):
// kernel/trace/trace_probe.c parse_probe_arg, case '+' / '-'.
FetchArg FetchArg::deref(int64_t offset) const { return FetchArg(fmt::format("{:+}({})", offset, fetch_)); }

FetchArg FetchArg::user_deref(int64_t offset) const {
  return FetchArg(fmt::format("{}u{}({})", offset < 0 ? '-' : '+', offset < 0 ? -offset : offset, fetch_));
}

std::string FetchArg::str() const {
  std::string s;
  if (!name_.empty()) s = name_ + "=";
  s += fetch_;
  if (type_) s += ":" + type_->str();
  return s;
}

std::string_view to_string(DynEventKind k) {
  switch (k) {
    case DynEventKind::kprobe: return "kprobe";
    case DynEventKind::kretprobe: return "kretprobe";
    case DynEventKind::uprobe: return "uprobe";
    case DynEventKind::uretprobe: return "uretprobe";
    case DynEventKind::eprobe: return "eprobe";
    case DynEventKind::fprobe: return "fprobe";
    case DynEventKind::fexit: return "fprobe exit";
    case DynEventKind::tprobe: return "tprobe";
    case DynEventKind::synth: return "synthetic";
    case DynEventKind::user: return "user event";
    case DynEventKind::unknown: break;
  }
  return "unknown";
}

KprobeDef KprobeDef::at(std::string_view event, std::string_view symbol, uint64_t offset) {
  KprobeDef k(event);
  k.place_ = offset ? fmt::format("{}+{}", symbol, offset) : std::string(symbol);
  return k;
}

KprobeDef KprobeDef::at_address(std::string_view event, uint64_t address) {
  KprobeDef k(event);
  k.place_ = fmt::format("{:#x}", address);
  return k;
}

KprobeDef KprobeDef::on_return(std::string_view event, std::string_view symbol) {
  KprobeDef k(event);
  k.place_ = std::string(symbol);
  k.is_return_ = true;
  return k;
}

std::string KprobeDef::command() const {
  std::string type = "p";
  std::string suffix;
  if (is_return_ && percent_return_) {
    suffix = "%return";
  } else if (is_return_) {
    type = "r";
    if (maxactive_) type += std::to_string(*maxactive_);
  }
  std::string place = (module_.empty() ? "" : module_ + ":") + place_ + suffix;
  return head(type) + " " + place + args_str();
}

UprobeDef UprobeDef::at(std::string_view event, std::string_view path, uint64_t offset) {
  UprobeDef u(event);
  u.path_ = path;
  u.offset_ = offset;
  return u;
}

UprobeDef UprobeDef::on_return(std::string_view event, std::string_view path, uint64_t offset) {
  UprobeDef u = at(event, path, offset);
  u.is_return_ = true;
  return u;
}

std::string UprobeDef::command() const {
  // README: <path>:<offset>[%return][(ref_ctr_offset)]
  std::string place = fmt::format("{}:{:#x}", path_, offset_);
  std::string type = "p";
  if (is_return_ && percent_return_) place += "%return";
  else if (is_return_) type = "r";
  if (ref_ctr_) place += fmt::format("({:#x})", *ref_ctr_);
  return head(type) + " " + place + args_str();
}

EprobeDef EprobeDef::on(std::string_view event, std::string_view system, std::string_view attached) {
  EprobeDef e(event);
  e.target_ = fmt::format("{}.{}", system, attached);
  return e;
}

std::string EprobeDef::command() const {
  std::string s = head("e") + " " + target_ + args_str();
  if (!filter_.empty()) s += " if " + filter_;
  return s;
}

FprobeDef FprobeDef::entry(std::string_view event, std::string_view function) {
  FprobeDef f(event);
  f.function_ = function;
  return f;
}

FprobeDef FprobeDef::exit(std::string_view event, std::string_view function) {
  FprobeDef f = entry(event, function);
  f.is_return_ = true;
  return f;
}

std::string FprobeDef::command() const {
  std::string type = "f";
  if (is_return_ && maxactive_) type += std::to_string(*maxactive_);
  return head(type) + " " + function_ + (is_return_ ? "%return" : "") + args_str();
}

TprobeDef TprobeDef::on(std::string_view event, std::string_view tracepoint) {
  TprobeDef t(event);
  t.tracepoint_ = tracepoint;
  return t;
}

std::string TprobeDef::command() const { return head("t") + " " + tracepoint_ + args_str(); }

// --- DynamicEvent ---

Result<DynamicEvent> DynamicEvent::create(const Tracefs& fs, const DynEventDef& def) {
  Instance top = fs.top();
  const Files& f = top.files();
  std::string file;
  if (f.has("dynamic_events")) {
    file = "dynamic_events";
  } else if (def.kind == DynEventKind::kprobe || def.kind == DynEventKind::kretprobe) {
    file = "kprobe_events";
  } else if (def.kind == DynEventKind::uprobe || def.kind == DynEventKind::uretprobe) {
    file = "uprobe_events";
  }
  if (file.empty() || !f.has(file)) {
    return Error{fmt::format("create {} {}/{}: no {} in {}", to_string(def.kind), def.group, def.event,
                             file.empty() ? "dynamic_events" : file, f.dir())};
  }
  TRACEBED_TRY(f.append(file, def.command));
  return DynamicEvent(f, def, file);
}

DynamicEvent::DynamicEvent(DynamicEvent&& other) noexcept
    : top_(std::move(other.top_)),
      def_(std::move(other.def_)),
      file_(std::move(other.file_)),
      enabled_in_(std::move(other.enabled_in_)),
      owned_(other.owned_) {
  other.owned_ = false;
}

DynamicEvent& DynamicEvent::operator=(DynamicEvent&& other) noexcept {
  if (this != &other) {
    (void)destroy();
    top_ = std::move(other.top_);
    def_ = std::move(other.def_);
    file_ = std::move(other.file_);
    enabled_in_ = std::move(other.enabled_in_);
    owned_ = other.owned_;
    other.owned_ = false;
  }
  return *this;
}

DynamicEvent::~DynamicEvent() {
  Status s = destroy();
  // A destructor cannot fail; say it, so a leaked probe has a cause.
  if (!s) fmt::print(stderr, "tracebed: dynamic event {}/{} not removed: {}\n", def_.group, def_.event, s.error().message);
}

Status DynamicEvent::enable(const Instance& inst) {
  std::string dir = inst.dir();
  if (std::find(enabled_in_.begin(), enabled_in_.end(), dir) == enabled_in_.end()) enabled_in_.push_back(dir);
  return event(inst).enable();
}

namespace {

// Writes 0 to DIR/events/GRP/EVENT/enable when it reads other than 0; an
// instance removed since has nothing to disable.
Status disable_in(FileOps& ops, const std::string& dir, const DynEventDef& def) {
  std::string path = fmt::format("{}/events/{}/{}/enable", dir, def.group, def.event);
  auto state = ops.read(path);
  if (!state) return {};
  if (trim(*state) == "0") return {};
  TRACEBED_ASSIGN_OR_RETURN(int err, ops.write(path, "0", false));
  if (err) return Error{fmt::format("write \"0\" to {}: {}", path, errno_text(err))};
  return {};
}

}  // namespace

Status DynamicEvent::disable_everywhere() {
  FileOps& ops = top_.ops();
  std::vector<std::string> msgs;
  auto add = [&](const Status& s) {
    if (!s) msgs.push_back(s.error().message);
  };
  for (const std::string& dir : enabled_in_) add(disable_in(ops, dir, def_));
  add(disable_in(ops, top_.dir(), def_));
  if (auto names = ops.list(top_.path("instances"))) {
    for (const std::string& n : *names) add(disable_in(ops, top_.path("instances/" + n), def_));
  }
  if (msgs.empty()) return {};
  return Error{fmt::format("{}", fmt::join(msgs, "; "))};
}

Status DynamicEvent::destroy() {
  if (!owned_) return {};
  owned_ = false;
  std::vector<std::string> msgs;
  FileOps& ops = top_.ops();
  // Disable what we enabled and the top level's copy; the kernel refuses
  // to remove an enabled event (EBUSY, trace_probe.c "the event is busy").
  for (const std::string& dir : enabled_in_) {
    if (Status s = disable_in(ops, dir, def_); !s) msgs.push_back(s.error().message);
  }
  if (Status s = disable_in(ops, top_.dir(), def_); !s) msgs.push_back(s.error().message);
  TRACEBED_ASSIGN_OR_RETURN(int err, top_.try_write(file_, def_.remove_command(), true));
  if (err == EBUSY) {
    // Enabled in an instance we were not told of: disable it everywhere.
    if (Status s = disable_everywhere(); !s) msgs.push_back(s.error().message);
    TRACEBED_ASSIGN_OR_RETURN(err, top_.try_write(file_, def_.remove_command(), true));
  }
  if (err) msgs.push_back(top_.write_error(file_, def_.remove_command(), err).message);
  if (msgs.empty()) return {};
  return Error{fmt::format("remove {}/{}: {}", def_.group, def_.event, fmt::join(msgs, "; "))};
}

// --- Reading back ---

namespace {

// "p", "r", "f", "t", "e", "s" and where the place tells: a uprobe's place
// is PATH:OFFSET, with a '/' in the path (kernel/trace/trace_uprobe.c
// trace_uprobe_show prints the path as given, absolute for a binary).
DynEventKind kind_of(char type, std::string_view target) {
  bool ret = target.ends_with("%return");
  bool upath = target.find('/') != std::string_view::npos && target.find(':') != std::string_view::npos;
  switch (type) {
    case 'p': return upath ? (ret ? DynEventKind::uretprobe : DynEventKind::uprobe) : (ret ? DynEventKind::kretprobe : DynEventKind::kprobe);
    case 'r': return upath ? DynEventKind::uretprobe : DynEventKind::kretprobe;
    case 'f': return ret ? DynEventKind::fexit : DynEventKind::fprobe;
    case 't': return DynEventKind::tprobe;
    case 'e': return DynEventKind::eprobe;
    case 's': return DynEventKind::synth;
    default: return DynEventKind::unknown;
  }
}

}  // namespace

Result<std::vector<DynEventEntry>> parse_dynamic_events(std::string_view text, std::string_view file) {
  std::vector<DynEventEntry> out;
  int lineno = 0;
  for (std::string_view raw : split_lines(text)) {
    ++lineno;
    std::string_view line = trim(raw);
    if (line.empty() || line.starts_with("#")) continue;
    auto bad = [&](std::string_view why) {
      return Error{fmt::format("{}: line {}: {}: \"{}\"", file, lineno, why, line)};
    };
    DynEventEntry e;
    e.line = std::string(raw);
    // User events show no group: "u:NAME type a; type b"
    // (trace_events_user.c user_event_show).
    if (line.starts_with("u:")) {
      e.kind = DynEventKind::user;
      e.group = "user_events";
      std::string_view rest = line.substr(2);
      size_t sp = rest.find(' ');
      e.event = std::string(rest.substr(0, sp));
      if (e.event.empty()) return bad("empty user event name");
      rest = sp == std::string_view::npos ? std::string_view{} : rest.substr(sp + 1);
      for (std::string_view f : split_fields(rest)) e.args.emplace_back(f);
      out.push_back(std::move(e));
      continue;
    }
    // Head: TYPE[MAXACTIVE]:GROUP/EVENT, then a blank (a tab for synthetic).
    size_t blank = line.find_first_of(" \t");
    std::string_view head = line.substr(0, blank);
    std::string_view rest = blank == std::string_view::npos ? std::string_view{} : trim(line.substr(blank));
    size_t colon = head.find(':');
    size_t slash = head.find('/');
    if (colon == std::string_view::npos || colon == 0 || slash == std::string_view::npos || slash < colon)
      return bad("no TYPE:GROUP/EVENT head");
    char type = head[0];
    if (colon > 1) {
      auto n = base::parse_number<unsigned>(head.substr(1, colon - 1));
      if (!n) return bad("bad maxactive");
      e.maxactive = n;
    }
    e.group = std::string(head.substr(colon + 1, slash - colon - 1));
    e.event = std::string(head.substr(slash + 1));
    if (e.group.empty() || e.event.empty()) return bad("empty group or event");

    if (type == 's') {
      // Synthetic fields are separated by "; " (trace_events_synth.c
      // synth_event_show).
      e.kind = DynEventKind::synth;
      for (std::string_view f : split_fields(rest)) e.args.emplace_back(f);
      out.push_back(std::move(e));
      continue;
    }
    // Eprobes end with " if FILTER" (trace_eprobe.c eprobe_dyn_event_show).
    if (type == 'e') {
      size_t ifpos = rest.find(" if ");
      if (ifpos != std::string_view::npos) {
        e.filter = std::string(trim(rest.substr(ifpos + 4)));
        rest = rest.substr(0, ifpos);
      }
    }
    std::vector<std::string_view> words = split_words(rest);
    if (words.empty()) return bad("no probe place");
    e.target = std::string(words[0]);
    for (size_t i = 1; i < words.size(); ++i) e.args.emplace_back(words[i]);
    e.kind = kind_of(type, e.target);
    if (e.kind == DynEventKind::unknown) return bad(fmt::format("unknown event type '{}'", type));
    out.push_back(std::move(e));
  }
  return out;
}

std::string DynEventEntry::remove_command() const {
  std::string cmd = "-:" + group + "/" + event;
  if (kind == DynEventKind::user && !args.empty()) cmd += fmt::format(" {}", fmt::join(args, "; "));
  return cmd;
}

Result<std::vector<DynEventEntry>> read_dynamic_events(const Tracefs& fs) {
  Instance top = fs.top();
  const Files& f = top.files();
  if (f.has("dynamic_events")) {
    TRACEBED_ASSIGN_OR_RETURN(std::string text, f.read("dynamic_events"));
    return parse_dynamic_events(text, f.path("dynamic_events"));
  }
  std::vector<DynEventEntry> out;
  for (std::string_view file : {"kprobe_events", "uprobe_events"}) {
    if (!f.has(file)) continue;
    TRACEBED_ASSIGN_OR_RETURN(std::string text, f.read(file));
    TRACEBED_ASSIGN_OR_RETURN(std::vector<DynEventEntry> part, parse_dynamic_events(text, f.path(file)));
    for (auto& e : part) out.push_back(std::move(e));
  }
  return out;
}

}  // namespace tracebed::tracefs
