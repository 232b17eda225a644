#include "framework/decode/report.h"

#include <algorithm>
#include <condition_variable>
#include <cstring>
#include <mutex>
#include <system_error>
#include <thread>

#include <fmt/format.h>

#include "framework/base/cpus.h"
#include "framework/decode/plugins.h"
#include "framework/decode/print_fmt.h"
#include "framework/decode/text.h"
#include "framework/decode/trace_dat.h"

namespace tracebed {
namespace {

// libtraceevent find_cmdline: pid 0 is the idle task, unknown pids "<...>".
std::string_view comm_of(TraceContext& ctx, int pid) {
  if (pid == 0) return "<idle>";
  if (auto comm = ctx.comm(pid)) return *comm;
  return "<...>";
}

// Buffered output: one fwrite per 256 KiB instead of one per line. With a
// second CPU the fwrite runs on a writer thread while the next buffer fills
// (writing into a pipe costs about a fifth of report's time).
class Output {
 public:
  explicit Output(std::FILE* file) : file_(file) {
    text_.reserve(kFlushAt + 4096);
    if (usable_cpus() > 1) {
      try {
        writer_ = std::thread([this] { write_loop(); });
        spare_.reserve(kFlushAt + 4096);
      } catch (const std::system_error&) {
        // No thread to be had: fwrite here.
      }
    }
  }
  ~Output() {
    flush();
    if (writer_.joinable()) {
      {
        std::lock_guard lock(mu_);
        stop_ = true;
      }
      wake_.notify_all();
      writer_.join();
    }
  }
  Output(const Output&) = delete;
  Output& operator=(const Output&) = delete;

  std::string& text() { return text_; }
  void maybe_flush() {
    if (text_.size() >= kFlushAt) hand_off();
  }
  // Writes everything so far; false if any write failed.
  bool flush() {
    hand_off();
    if (writer_.joinable()) {
      std::unique_lock lock(mu_);
      idle_.wait(lock, [&] { return !busy_; });
    }
    return ok_;
  }

 private:
  void hand_off() {
    if (!writer_.joinable()) {
      ok_ = std::fwrite(text_.data(), 1, text_.size(), file_) == text_.size() && ok_;
      text_.clear();
      return;
    }
    std::unique_lock lock(mu_);
    idle_.wait(lock, [&] { return !busy_; });  // the spare is written
    spare_.swap(text_);
    text_.clear();
    busy_ = true;
    lock.unlock();
    wake_.notify_all();
  }
  void write_loop() {
    std::unique_lock lock(mu_);
    for (;;) {
      wake_.wait(lock, [&] { return stop_ || busy_; });
      if (busy_) {
        lock.unlock();
        const bool ok = std::fwrite(spare_.data(), 1, spare_.size(), file_) == spare_.size();
        lock.lock();
        ok_ = ok_ && ok;
        busy_ = false;
        idle_.notify_all();
        continue;
      }
      return;  // stop_, nothing left
    }
  }

  static constexpr size_t kFlushAt = 256 * 1024;
  std::FILE* file_;
  std::string text_;    // being filled
  std::string spare_;   // being written, while busy_
  std::mutex mu_;
  std::condition_variable wake_, idle_;
  bool busy_ = false, stop_ = false, ok_ = true;
  std::thread writer_;
};

}  // namespace

struct RecordPrinter::Impl {
  Impl(TraceContext& c, const ReportOptions& o) : ctx(c), options(o), plugins(c, o.raw_timestamps) {}
  TraceContext& ctx;
  ReportOptions options;
  Plugins plugins;
};

RecordPrinter::RecordPrinter(TraceContext& ctx, const ReportOptions& options)
    : impl_(std::make_unique<Impl>(ctx, options)) {}
RecordPrinter::~RecordPrinter() = default;

void RecordPrinter::format_fields(const Record& record, EventStream& stream, std::string& out) {
  const EventFormat* event = impl_->ctx.event_of(record.data);
  if (!event) {
    out += "[UNKNOWN EVENT]";
    return;
  }
  if (impl_->options.raw_fields) {
    format_raw_fields(record, *event, impl_->ctx, out);
    return;
  }
  switch (impl_->plugins.print(record, *event, stream, out)) {
    case Plugins::Outcome::printed:
      return;
    case Plugins::Outcome::not_handled:
    case Plugins::Outcome::print_fmt_next:
      break;
  }
  if (event->printer) {
    event->printer->format(record, *event, impl_->ctx, out);
  } else {
    // libtraceevent pretty_print on an event whose print fmt did not parse.
    out += "[FAILED TO PARSE]";
    format_raw_fields(record, *event, impl_->ctx, out);
  }
}

Status write_report(TraceDat& file, const ReportOptions& options, std::FILE* out_file) {
  TraceContext& ctx = file.context();
  Output out(out_file);
  std::string& text = out.text();
  fmt::format_to(std::back_inserter(text), "cpus={}\n", file.cpu_count());

  if (!file.buffers().empty() && file.buffers()[0].latency) {
    auto latency = file.latency_text();
    if (!latency) return latency.error();
    text += *latency;
    out.flush();
    return {};
  }

  // With instances, trace-cmd prefixes every line with the buffer's name
  // (blank for the top level), right-aligned to the longest name.
  const auto& buffers = file.buffers();
  bool prefix_buffers = buffers.size() > 1;
  size_t name_width = 0;
  for (size_t i = 1; i < buffers.size(); ++i) name_width = std::max(name_width, buffers[i].name.size());

  // Symbols are needed soon: let a second core load them meanwhile.
  ctx.start_kallsyms();

  // trace_cmd_events: what trace-cmd 3.1.6 reads, which for some instance
  // layouts is less than the kernel wrote (see trace_dat.h).
  auto stream_result = file.trace_cmd_events(options.cpus);
  if (!stream_result) return stream_result.error();
  EventStream& stream = **stream_result;
  RecordPrinter printer(ctx, options);
  const Field* pid_field = ctx.common_pid();
  const bool in_ns = file.stamps_in_ns();

  Record record;
  for (;;) {
    auto more = stream.next(record);
    if (!more) {
      out.flush();
      return more.error();
    }
    if (!*more) break;

    // trace-cmd 3.1.6 with --cpu prints only the top-level buffer's events.
    if (options.cpus && record.buffer != 0) continue;
    if (prefix_buffers) {
      if (record.buffer == 0)
        fmt::format_to(std::back_inserter(text), "{:>{}}  ", "", name_width);
      else
        fmt::format_to(std::back_inserter(text), "{:>{}}: ", buffers[record.buffer].name, name_width);
    }
    // libtraceevent's kbuffer reports lost events only for an event at the
    // very start of the sub-buffer's data, so trace-cmd 3.1.6 says nothing
    // when a time extend or padding comes first (Record keeps the truth).
    const bool kbuffer_reports_loss = !record.missed_not_at_data_start;
    if (kbuffer_reports_loss && record.missed_events == kMissedUnknown)
      fmt::format_to(std::back_inserter(text), "CPU:{} [EVENTS DROPPED]\n", record.cpu);
    else if (kbuffer_reports_loss && record.missed_events > 0)
      fmt::format_to(std::back_inserter(text), "CPU:{} [{} EVENTS DROPPED]\n", record.cpu,
                     static_cast<int64_t>(record.missed_events));

    const EventFormat* event = ctx.event_of(record.data);
    size_t line_start = text.size();
    if (!event) {
      // tep_print_event prints this for the task and the time stamp calls;
      // trace-cmd's print_event_name then shows the missing name as (NULL).
      text += "[UNKNOWN EVENT][UNKNOWN EVENT] (NULL): ";
      text.append(20 - 6, ' ');
    } else if (const int pid = pid_field ? static_cast<int>(pid_field->read_int(record.data, ctx.endian)) : 0;
               in_ns && record.cpu >= 0 && comm_of(ctx, pid).size() + event->name.size() < 128) {
      // The common case, written into one buffer: "%16s-%-5d [%03d] %5llu.%06llu: %s: %*s"
      // (or %9 digits with -t).
      char head[256];
      CharWriter w(head);
      w.right(comm_of(ctx, pid), 16);
      w.put('-');
      w.int_left(pid, 5);
      w.put(" [");
      if (record.cpu < 1000)
        w.zero_padded(static_cast<uint32_t>(record.cpu), 3);
      else
        w.uint(static_cast<uint32_t>(record.cpu));
      w.put("] ");
      if (options.raw_timestamps) {  // append_event_time(ts, 9, 1)
        w.uint(record.ts / 1000000000, 5);
        w.put('.');
        w.zero_padded(record.ts % 1000000000, 9);
      } else {  // append_event_time(ts, 6, 1000)
        const uint64_t us = (record.ts + 500) / 1000;
        w.uint(us / 1000000, 5);
        w.put('.');
        w.zero_padded(us % 1000000, 6);
      }
      w.put(": ");
      w.put(event->name);
      w.put(": ");
      if (event->name.size() < 20) w.pad(20 - event->name.size());
      text.append(head, w.size());
    } else {
      // "%16s-%-5d [%03d]"
      append_right(text, comm_of(ctx, pid), 16);
      text += '-';
      append_int_left(text, pid, 5);
      text += " [";
      if (record.cpu >= 0)
        append_uint(text, static_cast<uint32_t>(record.cpu), 3, '0');
      else
        fmt::format_to(std::back_inserter(text), "{:03}", record.cpu);
      text += ']';
      // trace-read.c time formats: "%12d:" for raw counters, else
      // " %9.1d:" (-t) or " %6.1000d:".
      if (!in_ns) {
        append_uint(text, record.ts, 12);
      } else {
        text += ' ';
        if (options.raw_timestamps)
          append_event_time(record.ts, 9, 1, text);
        else
          append_event_time(record.ts, 6, 1000, text);
      }
      text += ": ";
      text += event->name;
      text += ": ";
      if (event->name.size() < 20) text.append(20 - event->name.size(), ' ');
    }
    printer.format_fields(record, stream, text);
    // trace-cmd drops one trailing newline of the event's text.
    if (text.size() > line_start && text.back() == '\n') text.pop_back();
    text += '\n';
    out.maybe_flush();
  }
  if (!out.flush()) return Error{"write error on output"};
  // kallsyms is read on the first lookup; a corrupt one fails the report
  // after what could be printed (addresses stayed numbers).
  if (ctx.kallsyms_error()) return *ctx.kallsyms_error();
  return {};
}

}  // namespace tracebed
