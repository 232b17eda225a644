#include "framework/tracefs/user_events_tracefs.h"

#include <errno.h>

#include <algorithm>
#include <thread>

#include <fmt/format.h>

#include "framework/tracefs/tracefs_text.h"

namespace tracebed::tracefs {

Result<UserEventsStatus> read_user_events_status(const Tracefs& fs) {
  Instance top = fs.top();
  TRACEBED_ASSIGN_OR_RETURN(std::string text, top.files().read("user_events_status"));
  return parse_user_events_status(text, top.path("user_events_status"));
}

Result<std::vector<std::string>> multi_format_events(const Instance& inst, std::string_view name) {
  std::string dir = inst.path(fmt::format("events/{}", kUserEventsMultiSystem));
  std::vector<std::string> out;
  if (!inst.files().ops().exists(dir)) return out;  // no multi-format event registered yet
  TRACEBED_ASSIGN_OR_RETURN(std::vector<std::string> names, inst.files().ops().list(dir));
  for (auto& n : names)
    if (is_multi_format_name(n, name)) out.push_back(std::move(n));
  std::sort(out.begin(), out.end());
  return out;
}

std::vector<std::string> user_field_names(std::string_view format_text) {
  std::vector<std::string> out;
  for (std::string_view line : split_lines(format_text)) {
    size_t f = line.find("field:");
    if (f == std::string_view::npos) continue;
    size_t semi = line.find(';', f);
    std::string_view decl = trim(line.substr(f + 6, semi == std::string_view::npos ? semi : semi - f - 6));
    std::string_view name = decl.substr(decl.find_last_of(' ') + 1);
    name = name.substr(0, name.find('['));  // "char tag[8]"
    if (name.starts_with("common_")) continue;
    out.emplace_back(name);
  }
  return out;
}

Result<Event> find_multi_format_event(const Instance& inst, const UserEventDef& def) {
  TRACEBED_ASSIGN_OR_RETURN(std::vector<std::string> names, multi_format_events(inst, def.name()));
  std::vector<std::string> wanted;
  for (const auto& f : def.fields()) wanted.push_back(f.name);
  std::vector<std::string> matching;
  std::vector<std::string> seen;
  for (const std::string& n : names) {
    Event ev = inst.event(kUserEventsMultiSystem, n);
    auto format = ev.format();
    if (!format) continue;  // removed meanwhile
    std::vector<std::string> got = user_field_names(*format);
    if (got == wanted) matching.push_back(n);
    seen.push_back(fmt::format("{} ({})", n, fmt::join(got, ",")));
  }
  if (matching.size() != 1)
    return Error{fmt::format("{} multi-format events {}.<id> with fields ({}) in {}/events/{}; there are: {}",
                             matching.empty() ? "no" : "several", def.name(), fmt::join(wanted, ","), inst.dir(),
                             kUserEventsMultiSystem, seen.empty() ? "none" : fmt::format("{}", fmt::join(seen, "; ")))};
  return inst.event(kUserEventsMultiSystem, matching[0]);
}

namespace {

Status remove_from(const Files& top, const std::string& command, std::chrono::milliseconds patience) {
  auto deadline = std::chrono::steady_clock::now() + patience;
  for (;;) {
    TRACEBED_ASSIGN_OR_RETURN(int err, top.try_write("dynamic_events", command, true));
    if (err == 0 || err == ENOENT) return {};
    // References from enablers and files are dropped after an RCU grace
    // period (kernel/trace/trace_events_user.c user_event_enabler_destroy).
    if (err != EBUSY || std::chrono::steady_clock::now() >= deadline) return top.write_error("dynamic_events", command, err);
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
}

}  // namespace

Status remove_user_event(const Tracefs& fs, const UserEventDef& def, std::chrono::milliseconds patience) {
  Instance top = fs.top();
  return remove_from(top.files(), def.remove_command(), patience);
}

Result<PersistentUserEvent> PersistentUserEvent::create(const Tracefs& fs, const UserEventDef& def) {
  if (auto p = def.problem()) return Error{*p};
  Instance top = fs.top();
  const Files& f = top.files();
  if (!f.has("dynamic_events")) return Error{fmt::format("create user event {}: no dynamic_events in {}", def.name(), f.dir())};
  TRACEBED_TRY(f.append("dynamic_events", def.dynamic_command()));
  return PersistentUserEvent(f, def);
}

PersistentUserEvent::PersistentUserEvent(PersistentUserEvent&& o) noexcept
    : top_(std::move(o.top_)), def_(std::move(o.def_)), enabled_in_(std::move(o.enabled_in_)), owned_(o.owned_) {
  o.owned_ = false;
}

PersistentUserEvent& PersistentUserEvent::operator=(PersistentUserEvent&& o) noexcept {
  if (this != &o) {
    (void)destroy();
    top_ = std::move(o.top_);
    def_ = std::move(o.def_);
    enabled_in_ = std::move(o.enabled_in_);
    owned_ = o.owned_;
    o.owned_ = false;
  }
  return *this;
}

PersistentUserEvent::~PersistentUserEvent() { (void)destroy(); }

Status PersistentUserEvent::enable(const Instance& inst) {
  if (std::find(enabled_in_.begin(), enabled_in_.end(), inst.dir()) == enabled_in_.end())
    enabled_in_.push_back(inst.dir());
  return event(inst).enable();
}

Status PersistentUserEvent::destroy(std::chrono::milliseconds patience) {
  if (!owned_) return {};
  owned_ = false;
  std::vector<std::string> msgs;
  // An enabled event holds a reference: the kernel would refuse (EBUSY).
  for (const std::string& dir : enabled_in_) {
    std::string path = fmt::format("{}/events/{}/{}/enable", dir, kUserEventsSystem, def_.name());
    auto state = top_.ops().read(path);
    if (!state || trim(*state) == "0") continue;
    auto err = top_.ops().write(path, "0", false);
    if (!err) msgs.push_back(err.error().message);
    else if (*err) msgs.push_back(fmt::format("write \"0\" to {}: {}", path, errno_text(*err)));
  }
  if (Status s = remove_from(top_, def_.remove_command(), patience); !s) msgs.push_back(s.error().message);
  if (msgs.empty()) return {};
  return Error{fmt::format("remove user event {}: {}", def_.name(), fmt::join(msgs, "; "))};
}

}  // namespace tracebed::tracefs
