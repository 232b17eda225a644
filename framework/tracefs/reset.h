// Clean tracefs state between tests.
//
// reset() does what ftracetest's initialize_system does
// (tools/testing/selftests/ftrace/test.d/functions), in its order, on one
// instance (the top level also gets the global files: dynamic events,
// kprobe/uprobe/synthetic events, stack_trace_filter):
//   tracing_on=0; current_tracer=nop; triggers (hist actions first, synthetic
//   events' first); every event filter not "none" -> 0; set_ftrace_filter
//   and function triggers; events/enable=0; dynamic events (several passes,
//   as they may depend on each other); set_event_pid, set_ftrace_pid,
//   set_ftrace_notrace, set_graph_function/notrace, stack_trace_filter,
//   kprobe_events, uprobe_events, synthetic_events emptied; snapshot=0;
//   options/pause-on-trace=1; trace cleared; tracing_on=1.
// It leaves, as ftracetest does, buffer sizes, clock, cpumask, options and
// instances alone: Knobs saves those before a test and restores them after.
//
// Prefer a fresh Instance per test: removing it resets everything at once.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "framework/base/result.h"
#include "framework/tracefs/tracefs.h"

namespace tracebed::tracefs {

Status reset(const Instance& inst);

// The knobs ftracetest's reset does not touch, as they were.
struct Knobs {
  std::vector<std::pair<int, uint64_t>> cpu_buffer_kb;  // per CPU
  std::optional<uint64_t> subbuf_kb;
  std::string clock;
  std::string cpumask;
  std::map<std::string, bool> options;
  std::vector<std::string> instances;  // top level only: the instances that existed
  std::optional<std::string> thresh;   // top level only: tracing_thresh (a latency tracer's filter)

  static Result<Knobs> save(const Instance& inst, const Tracefs* fs = nullptr);
  // Writes back only what changed, and removes instances made since save()
  // (given fs). Continues past failures and reports them all.
  Status restore(const Instance& inst, const Tracefs* fs = nullptr) const;
};

// Removes every dynamic event (dynamic_events, then kprobe_events,
// uprobe_events, synthetic_events), up to 10 passes for dependencies.
Status clear_dynamic_events(const Instance& top);

// The line that removes one dynamic_events entry: "r10:kprobes/tbret
// vfs_read arg1=$retval" -> "-:kprobes/tbret". Nothing for comments and
// lines without a "<type>:<group>/<name>" head.
std::optional<std::string> dynamic_event_removal(std::string_view line);

}  // namespace tracebed::tracefs
