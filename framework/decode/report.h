// `tracebed report`: trace.dat to text exactly as Debian 12's
// `trace-cmd report` (3.1.6 with libtraceevent 1.7.1's default plugins)
// prints it.
#pragma once

#include <cstdio>
#include <memory>
#include <optional>
#include <set>
#include <string>

#include "framework/base/result.h"
#include "framework/decode/record.h"
#include "framework/decode/text_out.h"
#include "framework/decode/trace_context.h"

namespace tracebed::decode {

class TraceDat;
class EventStream;
class RecordFilter;

struct ReportOptions {
  bool raw_timestamps = false;   // -t: nanoseconds
  bool raw_fields = false;       // -R: "name=value" of every field, no print fmt
  std::optional<std::set<int>> cpus;  // --cpu LIST
  bool no_hardirqs = false;      // -I: leave out records with the HARDIRQ flag
  bool no_softirqs = false;      // -S: leave out records with the SOFTIRQ flag
  bool latency_format = false;   // -l: "%8.8s-%-5d %3d" and the latency columns
  bool ts_diff = false;          // --ts-diff: "(+N)" since the line before
  bool wakeup = false;           // -w: wakeup latencies of sched_switch
  // -F / -v: which records are printed (null: all).
  std::shared_ptr<RecordFilter> filter;
  // A second thread that writes the text while the next lines are made:
  // unset, only with a CPU to spare beside one for the reader (report.cc).
  std::optional<bool> writer_thread;
};

// Formats single records; keeps the per-CPU state plugins need
// (function_graph leaf merging looks one record ahead).
class RecordPrinter {
 public:
  RecordPrinter(TraceContext& ctx, const ReportOptions& options);
  ~RecordPrinter();
  // The event's own text: plugin output, print fmt, or -R field list.
  // `stream` is where `record` came from (for look-ahead).
  void format_fields(const Record& record, EventStream& stream, TextOut& out);
  void format_fields(const Record& record, EventStream& stream, std::string& out) {
    TextOut text(out);
    format_fields(record, stream, text);
  }
  // The same but for the last step, given the record's event (null if
  // unknown): returns the event whose print fmt is still to be applied to
  // `record` after `out`, or null when none is.
  const EventFormat* format_fields_but_print_fmt(const Record& record, const EventFormat* event,
                                                 EventStream& stream, TextOut& out);

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

// Writes the whole report of `file` to `out`.
Status write_report(TraceDat& file, const ReportOptions& options, std::FILE* out);

}  // namespace tracebed::decode
