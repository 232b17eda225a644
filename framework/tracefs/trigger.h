// Event triggers (events/<sys>/<event>/trigger) and function triggers
// (set_ftrace_filter), as builders that show exactly what they write and as
// parsed entries read back from the kernel.
//
// Written syntax (Documentation/trace/events.rst section 6, ftrace.rst
// "Filter commands"):
//   <trigger>[:count][ if <filter>]            traceoff:3 if prev_pid == 0
//   enable_event:<system>:<event>[:count]      enable_event:kmem:kmalloc:3
//   <function>:<trigger>[:count]               do_trap:traceoff:3
// Read back (kernel/trace/trace_events_trigger.c event_trigger_print):
//   traceoff:count=3 if prev_pid == 0
//   stacktrace:unlimited
//   hist:keys=pid:vals=hitcount:sort=hitcount:size=2048 [active]
// Hist triggers are built by HistTrigger (hist.h), whose trigger() gives
// the Trigger to add.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "framework/base/result.h"

namespace tracebed::tracefs {

// An event trigger to write.
class Trigger {
 public:
  static Trigger traceon() { return Trigger("traceon"); }
  static Trigger traceoff() { return Trigger("traceoff"); }
  static Trigger snapshot() { return Trigger("snapshot"); }
  static Trigger stacktrace() { return Trigger("stacktrace"); }
  static Trigger enable_event(std::string_view system, std::string_view event);
  static Trigger disable_event(std::string_view system, std::string_view event);
  // Start or stop another event's hist triggers (README: "enable_hist and
  // disable_hist ... analogous to the enable_event and disable_event").
  static Trigger enable_hist(std::string_view system, std::string_view event);
  static Trigger disable_hist(std::string_view system, std::string_view event);

  // Fire at most n times (each time it does something).
  Trigger& count(uint64_t n) {
    count_ = n;
    return *this;
  }
  // Fire only for events matching this filter ("prev_pid == 0").
  Trigger& filter(std::string_view expr) {
    filter_ = expr;
    return *this;
  }

  // The line written to the trigger file: "traceoff:3 if prev_pid == 0".
  std::string command() const;
  // The line that removes it: "!traceoff", "!traceoff:0" for a counted
  // one (README: "To remove a trigger with a count"). A hist trigger keeps
  // its filter: the kernel only removes the hist whose filter matches too
  // (kernel/trace/trace_events_hist.c hist_unregister_trigger).
  std::string remove_command() const;
  const std::string& spec() const { return spec_; }
  bool is_hist() const { return spec_.starts_with("hist:"); }

 private:
  friend class HistTrigger;
  explicit Trigger(std::string spec) : spec_(std::move(spec)) {}
  std::string spec_;  // "traceoff", "enable_event:sched:sched_switch", "hist:keys=pid"
  std::optional<uint64_t> count_;
  std::string filter_;
  std::string remove_spec_;  // hist: the spec without pause/cont/clear
};

// A function trigger for set_ftrace_filter ("function probe" in
// kernel/trace/ftrace.c).
class FunctionTrigger {
 public:
  static FunctionTrigger traceon(std::string_view function) { return {function, "traceon"}; }
  static FunctionTrigger traceoff(std::string_view function) { return {function, "traceoff"}; }
  static FunctionTrigger snapshot(std::string_view function) { return {function, "snapshot"}; }
  static FunctionTrigger stacktrace(std::string_view function) { return {function, "stacktrace"}; }
  static FunctionTrigger dump(std::string_view function) { return {function, "dump"}; }
  static FunctionTrigger cpudump(std::string_view function) { return {function, "cpudump"}; }
  static FunctionTrigger enable_event(std::string_view function, std::string_view system, std::string_view event);
  static FunctionTrigger disable_event(std::string_view function, std::string_view system, std::string_view event);

  FunctionTrigger& count(uint64_t n) {
    count_ = n;
    return *this;
  }

  // "do_trap:traceoff:3", "ksys_read:enable_event:sched:sched_switch:2".
  std::string command() const;
  // "!do_trap:traceoff", or "!do_trap:traceoff:0" for a counted one: the
  // kernel picks the counted or uncounted probe by whether a count is
  // there (kernel/trace/ftrace.c ftrace_trace_onoff_callback), and only
  // removes the matching kind. README: "To remove trigger with a count".
  std::string remove_command() const;

 private:
  FunctionTrigger(std::string_view function, std::string_view spec) : function_(function), spec_(spec) {}
  std::string function_;
  std::string spec_;
  std::optional<uint64_t> count_;
};

// One line of a trigger file (or a function trigger in set_ftrace_filter).
struct TriggerEntry {
  std::string line;    // as read, without the newline
  std::string name;    // "traceoff", "enable_event", "hist", ...
  std::string spec;    // the command without count and filter: "enable_event:sched:sched_wakeup"
  std::optional<uint64_t> count;  // remaining count; empty = unlimited (or none, for hist)
  std::string filter;  // after " if ", without " [active]"
  std::string function;  // function triggers only

  // A hist trigger with an action (onmatch/onmax/onchange): ftracetest
  // removes these first, because other triggers' variables depend on them.
  bool is_action() const;
  // A hist trigger: HistTrigger::parse(spec) reads its keys, values, ...
  bool is_hist() const { return name == "hist"; }
  // The line that removes it, as ftracetest's reset writes it:
  // "!traceoff:count=3 if prev_pid == 0", "!do_trap:traceoff".
  std::string remove_command() const;
};

// An events/<sys>/<event>/trigger file. Comment lines ("# Available
// triggers: ...") are skipped.
Result<std::vector<TriggerEntry>> parse_trigger_file(std::string_view text);

// set_ftrace_filter / set_ftrace_notrace: the filtered functions and the
// function triggers.
struct FunctionFilter {
  std::vector<std::string> functions;  // "vfs_read", or "ext4_foo [ext4]" as the kernel lists them
  std::vector<TriggerEntry> triggers;
  bool all_functions = false;  // "#### all functions enabled ####"
};
Result<FunctionFilter> parse_function_filter(std::string_view text, std::string_view file);

}  // namespace tracebed::tracefs
