// Feature detection: what this kernel's tracefs can do, asked of tracefs
// itself (README strings, available_tracers, trace_clock, files present),
// as ftracetest's "# requires:" lines do. Features, not versions: distro
// backports make a version check lie. A kernel release is the last resort,
// for behaviour that leaves no trace in tracefs.
//
//   TRACEBED_REQUIRE(features::eprobes);
//   -> skipped: needs eprobes: no "e[:[<group>/][<event>]]" in README
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "framework/base/result.h"
#include "framework/tracefs/tracefs.h"

namespace tracebed::tracefs {

struct Feature {
  enum class Kind { file, readme, tracer, clock, release, module };
  std::string name;    // "eprobes", "function_graph tracer"
  Kind kind = Kind::file;
  std::string needle;  // the path, README string, tracer or clock
  int major = 0, minor = 0;  // Kind::release

  // A path relative to the tracefs root must exist.
  static Feature file(std::string name, std::string path) { return {std::move(name), Kind::file, std::move(path)}; }
  // README must contain this exact string.
  static Feature readme(std::string name, std::string text) {
    return {std::move(name), Kind::readme, std::move(text)};
  }
  static Feature tracer(std::string tracer) { return {tracer + " tracer", Kind::tracer, tracer}; }
  static Feature clock(std::string clock) { return {clock + " trace_clock", Kind::clock, clock}; }
  static Feature option(std::string option) { return {"option " + option, Kind::file, "options/" + option}; }
  static Feature event(std::string system, std::string event) {
    return {system + ":" + event + " event", Kind::file, "events/" + system + "/" + event};
  }
  // A kernel module the guest can load: /lib/modules/RELEASE/modules.dep
  // lists NAME.ko (file name as built: "trace-events-sample").
  static Feature module(std::string module) { return {"module " + module, Kind::module, std::move(module)}; }
  // Only for what tracefs does not show; say why in the name.
  static Feature since_release(std::string name, int major, int minor) {
    return {std::move(name), Kind::release, "", major, minor};
  }
};

// The features the suites ask for, each with the probe ftracetest uses
// where it has one.
namespace features {
inline const Feature instances = Feature::file("instances", "instances");
inline const Feature error_log = Feature::file("error_log", "error_log");
inline const Feature snapshot = Feature::file("snapshot", "snapshot");
inline const Feature trace_marker_raw = Feature::file("trace_marker_raw", "trace_marker_raw");
inline const Feature subbuf_size = Feature::file("buffer_subbuf_size_kb", "buffer_subbuf_size_kb");
// mmap of per_cpu/cpuN/trace_pipe_raw (Documentation/trace/ring-buffer-map.rst):
// no file says so, the release does.
inline const Feature mapped_buffer =
    Feature::since_release("memory-mapped trace_pipe_raw (ring-buffer-map.rst, 6.10)", 6, 10);
inline const Feature buffer_percent = Feature::file("buffer_percent", "buffer_percent");
inline const Feature tracing_cpumask = Feature::file("tracing_cpumask", "tracing_cpumask");
inline const Feature saved_cmdlines = Feature::file("saved_cmdlines", "saved_cmdlines");
inline const Feature function_tracer = Feature::tracer("function");
inline const Feature function_graph_tracer = Feature::tracer("function_graph");
inline const Feature dynamic_ftrace = Feature::file("set_ftrace_filter", "set_ftrace_filter");
inline const Feature set_ftrace_pid = Feature::file("set_ftrace_pid", "set_ftrace_pid");
inline const Feature set_ftrace_notrace_pid = Feature::file("set_ftrace_notrace_pid", "set_ftrace_notrace_pid");
inline const Feature function_fork = Feature::option("function-fork");
inline const Feature set_graph_function = Feature::file("set_graph_function", "set_graph_function");
inline const Feature max_graph_depth = Feature::file("max_graph_depth", "max_graph_depth");
inline const Feature funcgraph_retval = Feature::option("funcgraph-retval");
inline const Feature stack_tracer = Feature::file("stack tracer", "stack_trace_filter");
inline const Feature set_event_pid = Feature::file("set_event_pid", "set_event_pid");
inline const Feature set_event_notrace_pid = Feature::file("set_event_notrace_pid", "set_event_notrace_pid");
inline const Feature event_fork = Feature::option("event-fork");
inline const Feature pause_on_trace = Feature::option("pause-on-trace");
inline const Feature sched_events = Feature::event("sched", "sched_switch");
// The syscall events the probe target's getpid and write commands drive
// (FTRACE_SYSCALLS): counts and sizes a test chose.
inline const Feature sys_enter_getpid = Feature::event("syscalls", "sys_enter_getpid");
inline const Feature sys_enter_write = Feature::event("syscalls", "sys_enter_write");
// Triggers on the trace_marker event (kernel/trace/trace.c tracing_mark_write).
inline const Feature marker_triggers = Feature::file("ftrace:print triggers", "events/ftrace/print/trigger");
// README strings, as kernel/trace/trace.c readme_msg prints them.
inline const Feature event_triggers = Feature::readme("event triggers", "trigger\t\t- If set, a command to perform when event is hit");
inline const Feature function_triggers = Feature::readme("function triggers", "<function>:<trigger>[:count]");
inline const Feature snapshot_trigger = Feature::readme("snapshot trigger", "\t\t    snapshot\n");
inline const Feature hist_triggers = Feature::readme("hist triggers", "hist:keys=<field1[,field2,...]>");
// Hist modifiers and actions, each named in README once the kernel has it.
inline const Feature hist_buckets = Feature::readme("hist .buckets", ".buckets=size");
inline const Feature hist_percent = Feature::readme("hist .percent", ".percent ");
inline const Feature hist_graph = Feature::readme("hist .graph", ".graph ");
inline const Feature hist_nohitcount = Feature::readme("hist nohitcount", "[:nohitcount]");
inline const Feature hist_onchange = Feature::readme("hist onchange()", "onchange(var)");
inline const Feature hist_trace_action = Feature::readme("hist trace() action", "trace(<synthetic_event>,param list)");
inline const Feature hist_dynamic_strings = Feature::readme("synthetic dynamic strings", "char name[]");
inline const Feature module_events = Feature::readme(":mod: events", ":mod:<module>");
// Modules of tracebed-7.2 (vmimages/kernels/tracebed-7.2, vmimages/modules):
// Debian's kernels ship none of the samples, and their guest images carry
// only the virtio modules the agent needs.
inline const Feature tracebed_events_module = Feature::module("tracebed_events");
inline const Feature trace_events_sample_module = Feature::module("trace-events-sample");
inline const Feature trace_printk_sample_module = Feature::module("trace-printk");
inline const Feature trace_array_sample_module = Feature::module("sample-trace-array");
inline const Feature ftrace_direct_module = Feature::module("ftrace-direct");
inline const Feature preemptirq_delay_module = Feature::module("preemptirq_delay_test");
inline const Feature kprobes = Feature::file("kprobes", "kprobe_events");
inline const Feature uprobes = Feature::file("uprobes", "uprobe_events");
inline const Feature dynamic_events = Feature::file("dynamic_events", "dynamic_events");
// Several probe points under one event name: README says the probe files
// "append" once the kernel has them (kernel/trace/trace.c readme_msg).
inline const Feature probe_append =
    Feature::readme("probe append", "Create/append/remove/show the kernel dynamic events");
inline const Feature synthetic_events = Feature::file("synthetic events", "synthetic_events");
// CONFIG_USER_EVENTS: the producer's file (kernel/trace/trace_events_user.c).
inline const Feature user_events = Feature::file("user_events", "user_events_data");
inline const Feature eprobes = Feature::readme("eprobes", "e[:[<group>/][<event>]]");
inline const Feature fprobes = Feature::readme("fprobes", "f[:[<group>/][<event>]] <func-name>");
inline const Feature tprobes = Feature::readme("tprobes", "t[:[<group>/][<event>]] <tracepoint>");
// Probe definitions and fetch arguments, from README's event-definitions
// text (kernel/trace/trace.c readme_msg), as ftracetest's kprobe tests ask.
// README prints the format lines on kernels with uprobes only, too: ask
// for kprobes as well where it matters. "$arg<N>" is for kprobes and
// fprobes; uprobes refused $argN on every kernel checked (5.10 to 7.3).
inline const Feature kretprobe_maxactive = Feature::readme("kretprobe maxactive", "r[maxactive][:[<group>/]");
inline const Feature kprobe_percent_return =
    Feature::readme("kprobe %return", "place (kretprobe): [<module>:]<symbol>[+<offset>]%return");
inline const Feature uprobe_percent_return = Feature::readme("uprobe %return", "<path>:<offset>[%return]");
inline const Feature uprobe_ref_ctr = Feature::readme("uprobe ref_ctr_offset", "[(ref_ctr_offset)]");
inline const Feature fprobe_exit = Feature::readme("fprobe exit", "<func-name>[%return]");
inline const Feature fetcharg_argn = Feature::readme("$argN fetcharg", "$arg<N>");
inline const Feature fetcharg_comm = Feature::readme("$comm fetcharg", "$comm");
inline const Feature fetcharg_immediate = Feature::readme("immediate fetcharg", "\\imm-value");
inline const Feature fetcharg_immediate_string = Feature::readme("immediate string fetcharg", "\\\"imm-string\"");
inline const Feature fetcharg_user_deref = Feature::readme("user-space dereference", "+|-[u]<offset>(<fetcharg>)");
inline const Feature kretprobe_argn =
    Feature::readme("$argN in return probes", "kernel return probes support: $retval, $arg<N>");
inline const Feature btf_args = Feature::readme("BTF args", "<argname>");
inline const Feature btf_fields = Feature::readme("BTF fields", "<argname>[->field[->field|.field...]]");
// 7.3: typecasts of BTF arguments ("(task_struct)file->comm"), and
// $current; with them, nesting is limited to 8 typecasts/dereferences.
inline const Feature probe_typecast = Feature::readme("probe typecasts", "[(structname");
inline const Feature fetcharg_current = Feature::readme("$current fetcharg", "$current");
inline const Feature type_ustring = Feature::readme("ustring type", "ustring");
inline const Feature type_symbol = Feature::readme("symbol type", "string, symbol");
inline const Feature type_symstr = Feature::readme("symstr type", "symstr");
inline const Feature type_char = Feature::readme("char type", "char, string");
inline const Feature type_bitfield = Feature::readme("bitfield type", "b<bit-width>@<bit-offset>/<container-size>");
inline const Feature type_array = Feature::readme("array type", "<type>\\[<array-size>\\]");
}  // namespace features

// What one tracefs offers, probed once (README, available_tracers,
// trace_clock, release), files looked up as asked.
class Features {
 public:
  static Result<Features> probe(const Tracefs& fs);

  // Why f is missing ("needs eprobes: no \"e[:[<group>/]...\" in README"),
  // or nothing when it is there.
  std::optional<std::string> missing(const Feature& f) const;
  bool has(const Feature& f) const { return !missing(f).has_value(); }
  // missing(), told apart from a guest that no longer answers: when f was
  // not found, tracefs's own root must still stat, else the probe read
  // nothing and says so as an Error (never as "needs X").
  Result<std::optional<std::string>> check(const Feature& f) const;

  const std::string& readme() const { return readme_; }
  const std::vector<std::string>& tracers() const { return tracers_; }
  const std::vector<std::string>& clocks() const { return clocks_; }
  const std::string& release() const { return release_; }
  // "6.18.44-fc" -> {6, 18}; {0, 0} when unreadable.
  std::pair<int, int> release_version() const;

  // For tests of the detection itself, on captured files.
  static Features from_text(std::string readme, std::string available_tracers, std::string trace_clock,
                            std::string release);

 private:
  std::optional<std::string> missing_module(const Feature& f) const;
  std::optional<Tracefs> fs_;
  std::string readme_;
  std::vector<std::string> tracers_;
  std::vector<std::string> clocks_;
  std::string release_;
};

// "6.18.44-fc-v769" -> {6, 18}.
std::pair<int, int> parse_release(std::string_view release);

}  // namespace tracebed::tracefs
