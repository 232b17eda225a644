// The parts of a `trace-cmd report` line that its options change, written
// the general way (LineHead writes the usual head fast): -l's latency
// columns, --ts-diff's "(+N)", -w's wakeup latencies.
#pragma once

#include <cstdint>
#include <optional>
#include <unordered_map>

#include "framework/decode/event_format.h"
#include "framework/decode/record.h"
#include "framework/decode/text_out.h"
#include "framework/decode/trace_context.h"

namespace tracebed::decode {

struct HeadStyle {
  bool in_ns = true;           // stamps in ns (else raw counters, "%12d:")
  bool raw_timestamps = false; // -t
  bool latency_format = false; // -l
  bool raw_fields = false;     // -R (with -l: "-0x%x" flags instead of the columns)
  bool ts_diff = false;        // --ts-diff
  bool ts_diff_in_us = false;  // --ts-diff counts µs (the file's trace clock, without -t)
};

// trace-read.c trace_show_data up to the event's text: comm-pid and CPU,
// the latency columns, the time stamp, "(+diff)" and the event's name.
class ReportHead {
 public:
  explicit ReportHead(HeadStyle style) : style_(style) {}
  void write(TextOut& text, TraceContext& ctx, const EventFormat& event, const Record& record, int pid);
  // The same for a record whose event id has no format.
  void write_unknown(TextOut& text, TraceContext& ctx, const Record& record);

 private:
  void latency_columns(TextOut& text, TraceContext& ctx, const Record& record);
  void time_diff(TextOut& text, uint64_t ts);
  HeadStyle style_;
  uint64_t last_ts_ = 0;  // trace-read.c's static last_ts
};

// -w: trace-read.c process_wakeup / finish_wakeup. The time from a task's
// sched_wakeup (or sched_wakeup_new) to the sched_switch onto it, appended
// to that sched_switch's line, and the averages at the end.
class WakeupLatency {
 public:
  // Null when the file lacks the events or fields trace-cmd needs (it then
  // prints nothing extra).
  static std::optional<WakeupLatency> make(TraceContext& ctx);
  // After a printed record's text, before its newline.
  void on_record(const Record& record, const EventFormat& event, TextOut& text);
  // After the last line.
  void finish(TextOut& text) const;

 private:
  struct Stats {
    uint64_t total = 0, count = 0;
    uint64_t max = 0, max_time = 0, min = ~uint64_t{0}, min_time = 0;
    void add(uint64_t lat, uint64_t at);
    void print(TextOut& text) const;
  };
  TraceContext* ctx_ = nullptr;
  const EventFormat* wakeup_ = nullptr;
  const EventFormat* wakeup_new_ = nullptr;
  const EventFormat* sched_ = nullptr;
  const Field* wakeup_pid_ = nullptr;
  const Field* wakeup_success_ = nullptr;
  const Field* new_pid_ = nullptr;
  const Field* new_success_ = nullptr;
  const Field* next_pid_ = nullptr;
  const Field* next_prio_ = nullptr;
  std::unordered_map<uint32_t, uint64_t> woken_;  // pid -> wakeup time
  Stats all_, rt_;
};

}  // namespace tracebed::decode
