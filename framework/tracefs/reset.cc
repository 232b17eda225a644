#include "framework/tracefs/reset.h"

#include <algorithm>
#include <cerrno>
#include <optional>

#include <fmt/format.h>

#include "framework/tracefs/tracefs_text.h"

namespace tracebed::tracefs {

namespace {

// Collects failures and keeps going: a reset that stops at the first
// stuck file leaves the next test more broken than it has to.
class Problems {
 public:
  void add(const Status& s) {
    if (!s) msgs_.push_back(s.error().message);
  }
  void add(std::string msg) { msgs_.push_back(std::move(msg)); }
  Status status(std::string_view what) const {
    if (msgs_.empty()) return {};
    return Error{fmt::format("{}: {}", what, fmt::join(msgs_, "; "))};
  }

 private:
  std::vector<std::string> msgs_;
};

struct EventDir {
  std::string system;
  std::string name;
};

// Every events/<system>/<event> directory, from two levels of listing.
std::vector<EventDir> event_dirs(const Instance& inst) {
  std::vector<EventDir> out;
  FileOps& ops = inst.files().ops();
  auto systems = ops.list(inst.path("events"));
  if (!systems) return out;
  for (const std::string& sys : *systems) {
    if (sys == "enable" || sys == "header_page" || sys == "header_event" || sys == "filter") continue;
    auto events = ops.list(inst.path("events/" + sys));
    if (!events) continue;
    for (const std::string& ev : *events) {
      if (ev == "enable" || ev == "filter") continue;
      out.push_back({sys, ev});
    }
  }
  return out;
}

// The same file of every event directory, read in one go: a guest reset
// would otherwise pay a round trip for each of thousands of files. A
// missing file (ftrace's internal events have no trigger) reads as nothing.
std::vector<std::optional<std::string>> read_of_each(const Instance& inst, const std::vector<EventDir>& dirs,
                                                     std::string_view file, Problems& p) {
  std::vector<std::string> paths;
  paths.reserve(dirs.size());
  for (const EventDir& d : dirs) paths.push_back(inst.path(fmt::format("events/{}/{}/{}", d.system, d.name, file)));
  std::vector<std::optional<std::string>> out(dirs.size());
  auto read = inst.files().ops().read_each(paths);
  if (!read) {
    p.add(read.error().message);
    return out;
  }
  for (size_t i = 0; i < dirs.size() && i < read->size(); ++i)
    if ((*read)[i]) out[i] = std::move(*(*read)[i]);
  return out;
}

// ftracetest reset_trigger_file: action triggers first, then the rest.
void remove_triggers(const Instance& inst, const std::vector<EventDir>& dirs, Problems& p) {
  std::vector<std::optional<std::string>> texts = read_of_each(inst, dirs, "trigger", p);
  for (bool actions : {true, false}) {
    for (size_t i = 0; i < dirs.size(); ++i) {
      if (!texts[i]) continue;
      auto triggers = parse_trigger_file(*texts[i]);
      if (!triggers) {
        p.add(triggers.error().within(inst.path(fmt::format("events/{}/{}/trigger", dirs[i].system, dirs[i].name)))
                  .message);
        continue;
      }
      Event ev = inst.event(dirs[i].system, dirs[i].name);
      for (const TriggerEntry& t : *triggers) {
        if (t.is_action() != actions) continue;
        p.add(ev.files().append("trigger", t.remove_command()));
      }
    }
  }
}

// reset_events_filter: every filter that is not "none".
void clear_filters(const Instance& inst, const std::vector<EventDir>& dirs, Problems& p) {
  std::vector<std::optional<std::string>> texts = read_of_each(inst, dirs, "filter", p);
  for (size_t i = 0; i < dirs.size(); ++i) {
    if (!texts[i] || trim(*texts[i]) == "none") continue;
    p.add(inst.event(dirs[i].system, dirs[i].name).clear_filter());
  }
}

}  // namespace

std::optional<std::string> dynamic_event_removal(std::string_view line) {
  line = trim(line);
  if (line.empty() || line.starts_with("#")) return std::nullopt;
  // ftracetest clear_dynamic_events writes "-" + the head without its type
  // letter ("-10:kprobes/tbret" for "r10:..."); "-:<group>/<name>" is the
  // documented form and needs no maxactive.
  // A user event is matched by its fields too: "-:name" alone removes
  // only one without fields (trace_events_user.c user_event_match).
  if (line.starts_with("u:")) return "-:" + std::string(line.substr(2));
  size_t colon = line.find(':');
  size_t space = line.find(' ');
  if (colon == std::string_view::npos || (space != std::string_view::npos && space < colon)) return std::nullopt;
  std::string_view name = line.substr(colon + 1, space == std::string_view::npos ? line.npos : space - colon - 1);
  if (name.empty()) return std::nullopt;
  return "-:" + std::string(name);
}

Status clear_dynamic_events(const Instance& top) {
  const Files& f = top.files();
  Problems p;
  if (f.has("dynamic_events")) {
    // ftracetest clear_dynamic_events: "-:<group/event>" per line, repeated
    // while something refused (a synthetic event used by an eprobe, ...).
    for (int pass = 0; pass < 10; ++pass) {
      auto text = f.read("dynamic_events");
      if (!text) {
        p.add(text.error().message);
        break;
      }
      bool again = false;
      bool any = false;
      for (std::string_view line : split_lines(*text)) {
        std::optional<std::string> del = dynamic_event_removal(line);
        if (!del) continue;
        any = true;
        auto err = f.try_write("dynamic_events", *del, true);
        if (!err.ok() || *err != 0) again = true;
      }
      if (!any || !again) break;
      if (pass == 9) p.add("dynamic_events: events left after 10 passes");
    }
  }
  for (std::string_view file : {"kprobe_events", "uprobe_events", "synthetic_events"}) {
    if (f.has(file)) p.add(f.write(file, ""));
  }
  return p.status("clear dynamic events");
}

Status reset(const Instance& inst) {
  const Files& f = inst.files();
  Problems p;
  // A file this kernel will not let us open (EPERM, ENODEV: function
  // tracing disabled or locked down) holds no state of ours to undo.
  auto if_has = [&](std::string_view file, std::string_view value) {
    if (!f.has(file)) return;
    auto err = f.try_write(file, value);
    if (!err) p.add(err.error().message);
    else if (*err && *err != EPERM && *err != ENODEV) p.add(f.write_error(file, value, *err));
  };
  if_has("tracing_on", "0");
  if_has("current_tracer", "nop");

  std::vector<EventDir> dirs = event_dirs(inst);
  // Synthetic events' triggers first: their hists feed the others.
  std::vector<EventDir> synthetic;
  std::copy_if(dirs.begin(), dirs.end(), std::back_inserter(synthetic),
               [](const EventDir& d) { return d.system == "synthetic"; });
  remove_triggers(inst, synthetic, p);
  remove_triggers(inst, dirs, p);

  clear_filters(inst, dirs, p);

  // reset_ftrace_filter: empty the filter, then remove function triggers,
  // which an empty write leaves in place.
  if (f.has("set_ftrace_filter")) {
    if_has("set_ftrace_filter", "");
    if (auto filter = inst.ftrace_filter()) {
      for (const TriggerEntry& t : filter->triggers) p.add(f.append("set_ftrace_filter", t.remove_command()));
    }
  }
  if_has("events/enable", "0");
  if (inst.is_top()) p.add(clear_dynamic_events(inst));
  if_has("set_event_pid", "");
  if_has("set_ftrace_pid", "");
  if_has("set_ftrace_notrace", "");
  if_has("set_graph_function", "");
  if_has("set_graph_notrace", "");
  if_has("stack_trace_filter", "");
  if_has("snapshot", "0");
  if_has("options/pause-on-trace", "1");
  if_has("trace", "");
  if_has("tracing_on", "1");
  return p.status(fmt::format("reset {}", inst.dir()));
}

Result<Knobs> Knobs::save(const Instance& inst, const Tracefs* fs) {
  Knobs k;
  TRACEBED_ASSIGN_OR_RETURN(std::vector<int> cpus, inst.cpus());
  // Before its first expansion the buffer's top-level file reads
  // "7 (expanded: 1408)" but the per-CPU files read only "7": save the size
  // it will have, or a tool that expands it meanwhile (trace-cmd record) is
  // shrunk back to 7 KiB per CPU.
  TRACEBED_ASSIGN_OR_RETURN(BufferSize all, inst.buffer_size());
  for (int cpu : cpus) {
    TRACEBED_ASSIGN_OR_RETURN(BufferSize b, inst.buffer_size(cpu));
    const bool unexpanded = all.expanded_kb && b.kb == all.kb;
    k.cpu_buffer_kb.emplace_back(cpu, unexpanded ? *all.expanded_kb : b.effective_kb());
  }
  if (inst.files().has("buffer_subbuf_size_kb")) {
    TRACEBED_ASSIGN_OR_RETURN(k.subbuf_kb, inst.subbuf_size_kb());
  }
  TRACEBED_ASSIGN_OR_RETURN(Selection clock, inst.trace_clock());
  k.clock = clock.current;
  if (inst.files().has("tracing_cpumask")) {
    TRACEBED_ASSIGN_OR_RETURN(k.cpumask, inst.tracing_cpumask());
  }
  TRACEBED_ASSIGN_OR_RETURN(k.options, inst.options());
  if (fs && inst.is_top()) {
    TRACEBED_ASSIGN_OR_RETURN(k.instances, fs->instance_names());
  }
  if (inst.is_top() && inst.files().has("tracing_thresh")) {
    TRACEBED_ASSIGN_OR_RETURN(std::string thresh, inst.files().read("tracing_thresh"));
    k.thresh = std::string(trim(thresh));
  }
  return k;
}

Status Knobs::restore(const Instance& inst, const Tracefs* fs) const {
  Problems p;
  if (fs && inst.is_top()) {
    if (auto now = fs->instance_names()) {
      for (const std::string& name : *now) {
        if (!std::binary_search(instances.begin(), instances.end(), name)) p.add(fs->remove_instance(name));
      }
    } else {
      p.add(now.error().message);
    }
  }
  // The sub-buffer size first: changing it reallocates the buffers.
  if (subbuf_kb) {
    auto cur = inst.subbuf_size_kb();
    if (!cur || *cur != *subbuf_kb) p.add(inst.set_subbuf_size_kb(*subbuf_kb));
  }
  auto all = inst.buffer_size();
  for (auto [cpu, kb] : cpu_buffer_kb) {
    auto cur = inst.buffer_size(cpu);
    // An unexpanded buffer (top level "7 (expanded: 1408)", per CPU "7"):
    // leave it unexpanded when the size it would expand to is the one saved.
    if (cur && all && all->expanded_kb && cur->kb == all->kb && *all->expanded_kb == kb) continue;
    if (cur && cur->effective_kb() == kb) continue;
    p.add(inst.set_buffer_size_kb(cpu, kb));
  }
  if (thresh) {
    auto now = inst.files().read("tracing_thresh");
    if (!now || trim(*now) != *thresh) p.add(inst.files().write("tracing_thresh", *thresh));
  }
  auto clock_now = inst.trace_clock();
  if (!clock_now || clock_now->current != clock) p.add(inst.set_trace_clock(clock));
  if (!cpumask.empty()) {
    auto cur = inst.tracing_cpumask();
    if (!cur || *cur != cpumask) p.add(inst.set_tracing_cpumask(cpumask));
  }
  if (auto now = inst.options()) {
    for (const auto& [name, on] : options) {
      auto it = now->find(name);
      if (it != now->end() && it->second != on) p.add(inst.files().write("trace_options", (on ? "" : "no") + name));
    }
  } else {
    p.add(now.error().message);
  }
  return p.status(fmt::format("restore {}", inst.dir()));
}

}  // namespace tracebed::tracefs
