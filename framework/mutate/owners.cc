#include "framework/mutate/owners.h"

#include <filesystem>
#include <map>

namespace tracebed::mutate {

Owners owners_of(const std::string& file) {
  static const std::map<std::string, Owners> kTable = {
      // remotes: the test remote's buffer is ring_buffer.c's only remote (desc) buffer.
      // bootparams: the persistent (boot-mapped) buffers and their backups,
      // and the command line's tracing parameters.
      // modules: synth_event_gen_test.ko is ring_buffer_nest_start's one caller.
      {"ring_buffer.c",
       {{"basics", "instances", "marker", "events", "tooling", "remotes", "bootparams", "modules"},
        {"00basic", "instances", "event"}}},
      // latency: trace_min_max_write serves hwlat's and osnoise's knobs.
      {"trace.c", {{"basics", "instances", "marker", "events", "trigger", "function", "bootparams", "latency"},
                   {"00basic", "instances", "ftrace", "event"}}},
      {"trace_output.c", {{"events", "marker", "basics", "kprobe"}, {"event", "00basic"}}},
      {"trace_seq.c", {{"events", "marker", "hist"}, {"event", "trigger"}}},
      // function: its enable_event/disable_event probes; modules: the events
      // of modules and set_event's :mod: cache; bootparams: trace_event=
      // and the read-only backup instance's event directories.
      {"trace_events.c",
       {{"events", "instances", "filter", "trigger", "function", "modules", "bootparams"}, {"event", "instances"}}},
      // modules: filters on tracebed:tb_ints, every integer width.
      {"trace_events_filter.c", {{"filter", "events", "function", "modules"}, {"event", "ftrace"}}},
      {"trace_events_inject.c", {{"events"}, {"event"}}},
      {"trace_events_trigger.c", {{"trigger", "hist"}, {"trigger"}}},
      // trigger: a truncating open of the trigger file (hist_unreg_all).
      {"trace_events_hist.c", {{"hist", "synthetic", "sqlhist", "trigger"}, {"trigger"}}},
      {"tracing_map.c", {{"hist", "sqlhist"}, {"trigger"}}},
      // modules: synth_event_gen_test.ko, the in-kernel API's one caller.
      {"trace_events_synth.c", {{"synthetic", "sqlhist", "hist", "modules"}, {"trigger", "dynevent"}}},
      {"trace_events_user.c", {{"user_events"}, {}, true}},
      // modules: kprobes on a module's functions, and on any function while
      // modules are loaded (number_of_same_symbols counts theirs too).
      {"trace_kprobe.c", {{"kprobe", "bpf", "modules"}, {"kprobe", "dynevent"}}},
      {"trace_probe.c", {{"kprobe", "uprobe", "eprobe", "fprobe"}, {"kprobe", "dynevent"}}},
      // fprobe: truncating dynamic_events asks every kind whether it is busy.
      {"trace_uprobe.c", {{"uprobe", "fprobe"}, {"kprobe", "dynevent"}}},
      {"trace_eprobe.c", {{"eprobe", "fprobe"}, {"dynevent"}}},
      // modules: tprobes on a module's tracepoints.
      {"trace_fprobe.c", {{"fprobe", "modules"}, {"dynevent"}}},
      {"trace_dynevent.c", {{"kprobe", "uprobe", "eprobe", "fprobe", "synthetic"}, {"dynevent", "kprobe"}}},
      // modules: without BPF_JIT and LIVEPATCH the sample modules are the only
      // users of direct calls (ftrace-direct*.ko) and IPMODIFY ops (the
      // kprobe_example's post handler) in ftrace.c.
      {"ftrace.c", {{"function", "function_graph", "modules"}, {"ftrace"}}},
      {"trace_functions.c", {{"function"}, {"ftrace"}}},
      {"trace_functions_graph.c", {{"function_graph"}, {"ftrace"}}},
      {"trace_stack.c", {{"function", "basics"}, {"ftrace"}}},
  };
  auto it = kTable.find(std::filesystem::path(file).filename().string());
  if (it != kTable.end()) return it->second;
  return {{}, {}, false};  // empty: every suite, every area
}

std::string kselftest_filter(const Owners& owners) {
  if (owners.ftracetest_areas.empty() && !owners.user_events_selftests) return "";
  std::string f;
  for (const auto& area : owners.ftracetest_areas) f += (f.empty() ? "" : ":") + ("Ftracetest." + area + "/*");
  if (owners.user_events_selftests) f += (f.empty() ? "" : ":") + std::string("UserEventsSelftest.*");
  return f;
}

}  // namespace tracebed::mutate
