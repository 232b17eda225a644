// Event printers that take over from an event's print fmt in
// `trace-cmd report`: libtraceevent 1.7.1's default plugins (sched_switch,
// function, kmem, hrtimer) and trace-cmd's own function_graph printer.
// They keep state across records (comm names learnt from sched_switch, the
// function plugin's call-depth guess), so one Plugins object serves one report.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "framework/decode/event_format.h"
#include "framework/decode/record.h"
#include "framework/decode/text_out.h"
#include "framework/decode/trace_context.h"

namespace tracebed::decode {

class EventStream;

class Plugins {
 public:
  enum class Outcome {
    not_handled,     // no plugin: print the event's print fmt
    printed,         // the plugin wrote the whole text
    print_fmt_next,  // the plugin wrote a prefix; the print fmt follows (kmem)
  };

  // `ns_stamps`: -t, so func_repeats prints last_ts as trace-cmd then does ("%9.1d").
  Plugins(TraceContext& ctx, bool ns_stamps);
  ~Plugins();
  Plugins(const Plugins&) = delete;
  Plugins& operator=(const Plugins&) = delete;

  // `stream` lets function_graph look at the next record (leaf detection).
  Outcome print(const Record& record, const EventFormat& event, EventStream& stream, TextOut& out);

 private:
  struct State;
  std::unique_ptr<State> state_;
};

// libtraceevent's print_event_time: "%5llu.%0*llu" of the time stamp divided
// by `divisor` (rounded) with `precision` digits after the dot.
void append_event_time(uint64_t ts, int precision, uint64_t divisor, TextOut& out);

}  // namespace tracebed::decode
