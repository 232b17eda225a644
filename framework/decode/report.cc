#include "framework/decode/report.h"

#include <fcntl.h>
#include <sys/stat.h>

#include <algorithm>
#include <condition_variable>
#include <cstring>
#include <memory>
#include <mutex>
#include <optional>
#include <system_error>
#include <thread>
#include <vector>

#include <fmt/format.h>

#include "framework/base/cpus.h"
#include "framework/decode/line_head.h"
#include "framework/decode/plugins.h"
#include "framework/decode/print_fmt.h"
#include "framework/decode/record_filter.h"
#include "framework/decode/report_line.h"
#include "framework/decode/report_text.h"
#include "framework/decode/trace_dat.h"

namespace tracebed::decode {

// Literals as string_views: appending one per record then costs no strlen.
using namespace std::string_view_literals;
namespace {

// Work the formatting thread leaves for the writer thread, which has a CPU
// of its own: a line's head from its parts (LineHead), or an event's print
// fmt, with a copy of the record's bytes. Plugins keep state from record to
// record and stay on the formatting thread; a print fmt depends on its
// record alone.
struct Deferred {
  // Filled field by field where it is made; not zeroed first (a few
  // thousand per batch).
  Deferred() {}
  enum class Kind : uint8_t { head, print_fmt };
  Kind kind;
  size_t at;                  // where in the text its output goes
  const EventFormat* event;
  // head:
  uint64_t ts;
  int32_t pid;
  int32_t cpu;
  uint8_t comm_size;
  char comm[16];
  // print_fmt: where the record's bytes are in Pending::records.
  size_t record_at;
  size_t record_size;
};

// Text with what is still to be written into it, and where.
struct Pending {
  // Written through a TextOut, which keeps the string longer than the
  // text: text_size says how much of it is text once the batch is handed on.
  std::string text;
  size_t text_size = 0;
  std::vector<Deferred> deferred;
  std::vector<uint8_t> records;
  // Hand a buffer on when any part is this full (a batch of a few
  // thousand lines stays in the CPUs' caches).
  static constexpr size_t kFullText = 256 * 1024;
  static constexpr size_t kFullDeferred = 4096;
  static constexpr size_t kFullRecords = 64 * 1024;
  // `written`: the text so far (its TextOut's size).
  bool full(size_t written) const {
    return written >= kFullText || deferred.size() >= kFullDeferred || records.size() >= kFullRecords;
  }
  void reserve() {
    deferred.reserve(kFullDeferred + 2);
    records.reserve(kFullRecords + 4096);
  }
  // The string keeps its length: the next TextOut writes over it without
  // zero-filling it again.
  void clear() {
    text_size = 0;
    deferred.clear();
    records.clear();
  }
  std::string_view text_view() const { return std::string_view(text).substr(0, text_size); }
};

// A pipe holds 64 KiB unless told otherwise: a batch then goes through in
// several blocking writes, each waiting for the reader to be scheduled.
// Room for a whole batch (the unprivileged limit is 1 MiB; a failure
// leaves the pipe as it was) lets the writer go on with the next one.
void grow_pipe(std::FILE* file) {
  const int fd = fileno(file);
  struct stat st;
  if (fd >= 0 && fstat(fd, &st) == 0 && S_ISFIFO(st.st_mode)) fcntl(fd, F_SETPIPE_SZ, 1 << 20);
}

// Buffered output: one fwrite per batch of lines instead of one per line.
// With a CPU to spare, a writer thread finishes and writes each batch while
// the next one fills: it writes the line heads, formats the print fmts and
// does the fwrite (into a pipe, about a fifth of report's time).
class Output {
 public:
  Output(std::FILE* file, const TraceContext& ctx, bool raw_timestamps, std::optional<bool> writer_thread)
      : file_(file), ctx_(ctx), head_(raw_timestamps), writer_head_(raw_timestamps) {
    filling_.reserve();
    grow_pipe(file);
    // Whatever reads the text (a pager, grep, a test's pipe) needs a CPU as
    // well. On two CPUs a writer thread beside it made things slower, not
    // faster (s2 x20 into a pipe: 157 ms with it, 121 ms without; s1 x20:
    // 332 and 325): keep it for machines with a CPU to spare.
    if (writer_thread.value_or(base::usable_cpus() > 2)) {
      try {
        writer_text_.emplace(out_, 64 * 1024);
        writer_ = std::thread([this] { write_loop(); });
        spare_.reserve();
      } catch (const std::system_error&) {
        // No thread to be had: write here.
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

  TextOut& text() { return text_; }
  // The head of the line that starts here. False if it is not of the
  // usual shape (LineHead::write): then the caller writes it itself.
  bool head_here(TraceContext& ctx, const EventFormat& event, int pid, int cpu, uint64_t ts) {
    if (!writer_.joinable()) {
      char* const p = text_.reserve_tail(LineHead::kRoom);
      char* const end = head_.write(p, ctx, event, pid, cpu, ts);
      if (!end) return false;
      text_.commit(static_cast<size_t>(end - p));
      return true;
    }
    const std::string_view comm = task_comm(ctx, pid);
    if (!LineHead::usual(comm, event, cpu)) return false;
    Deferred& head = filling_.deferred.emplace_back();
    head.kind = Deferred::Kind::head;
    head.at = text_.size();
    head.event = &event;
    head.ts = ts;
    head.pid = pid;
    head.cpu = cpu;
    head.comm_size = static_cast<uint8_t>(comm.size());
    std::memcpy(head.comm, comm.data(), comm.size());
    return true;
  }
  // The event's print fmt of `record` goes here, the end of its line's text,
  // with trace-cmd's dropping of one trailing newline. False when the caller
  // is to format it itself: without a writer thread, for a print fmt that
  // must see its records in order (bprint), or for the share of records
  // that keeps the two threads even (see hand_off).
  bool print_fmt_here(const EventFormat& event, const Record& record) {
    if (!writer_.joinable() || event.printer()->keeps_state()) return false;
    defer_credit_ += defer_share_;
    if (defer_credit_ < 1) return false;
    defer_credit_ -= 1;
    Deferred& d = filling_.deferred.emplace_back();
    d.kind = Deferred::Kind::print_fmt;
    d.at = text_.size();
    d.event = &event;
    d.record_at = filling_.records.size();
    d.record_size = record.data.size();
    filling_.records.insert(filling_.records.end(), record.data.begin(), record.data.end());
    return true;
  }
  void maybe_flush() {
    if (filling_.full(text_.size())) hand_off();
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
    filling_.text_size = text_.size();
    if (!writer_.joinable()) {
      ok_ = write(filling_) && ok_;
      filling_.clear();
      text_.restart(filling_.text);
      return;
    }
    std::unique_lock lock(mu_);
    // Which thread waits says which has too much: plugins make the
    // formatting thread the slow one (function tracing), print fmts the
    // writer (plain events). Hand the writer a smaller share of the print
    // fmts while it is still busy with the last batch, a larger one while
    // it waits for this one.
    defer_share_ = busy_ ? std::max(0.0, defer_share_ - kShareStep) : std::min(1.0, defer_share_ + kShareStep);
    idle_.wait(lock, [&] { return !busy_; });  // the spare is written
    std::swap(spare_, filling_);
    filling_.clear();
    text_.restart(filling_.text);
    busy_ = true;
    lock.unlock();
    wake_.notify_all();
  }
  // The text with what was deferred in place, to the file.
  bool write(const Pending& pending) {
    const std::string_view text = pending.text_view();
    if (pending.deferred.empty()) return std::fwrite(text.data(), 1, text.size(), file_) == text.size();
    TextOut& out = *writer_text_;
    out.truncate(0);
    size_t from = 0;
    for (const Deferred& d : pending.deferred) {
      out += text.substr(from, d.at - from);
      from = d.at;
      if (d.kind == Deferred::Kind::head) {
        char* const p = out.reserve_tail(LineHead::kRoom);
        char* const end = writer_head_.write(p, std::string_view(d.comm, d.comm_size), *d.event, d.pid, d.cpu, d.ts);
        out.commit(static_cast<size_t>(end - p));
      } else {
        Record record;
        record.data = Bytes(pending.records.data() + d.record_at, d.record_size);
        d.event->printer()->format(record, *d.event, ctx_, out);
        // trace-cmd drops one trailing newline of the event's text (the
        // line's head is in out already, so it is not empty).
        if (!out.empty() && out.back() == '\n') out.pop_back();
      }
    }
    out += text.substr(from);
    const std::string_view all = out.view();
    return std::fwrite(all.data(), 1, all.size(), file_) == all.size();
  }
  void write_loop() {
    std::unique_lock lock(mu_);
    for (;;) {
      wake_.wait(lock, [&] { return stop_ || busy_; });
      if (busy_) {
        lock.unlock();
        const bool ok = write(spare_);
        lock.lock();
        ok_ = ok_ && ok;
        busy_ = false;
        idle_.notify_all();
        continue;
      }
      return;  // stop_, nothing left
    }
  }

  std::FILE* file_;
  const TraceContext& ctx_;
  LineHead head_;         // on the formatting thread
  LineHead writer_head_;  // on the writer thread
  Pending filling_;     // being filled
  // Writes filling_.text. Its room grows to a batch's text (and stays, so
  // a small report does not touch a batch's worth of pages).
  TextOut text_{filling_.text, 16 * 1024};
  Pending spare_;       // being written, while busy_
  std::string out_;     // the text with what was deferred, on the writing thread
  std::optional<TextOut> writer_text_;  // on out_, made with the writer thread
  std::mutex mu_;
  std::condition_variable wake_, idle_;
  bool busy_ = false, stop_ = false, ok_ = true;
  // The share of print fmts left to the writer, and how far it moves per
  // batch; the credit spreads that share evenly over the records.
  static constexpr double kShareStep = 0.125;
  double defer_share_ = 1, defer_credit_ = 0;
  std::thread writer_;
};

// trace-cmd's "%*s: " (an instance's name) or "%*s  " (the top buffer),
// by hand: fmt's set-up per record was a third of the report.
void write_buffer_name(TextOut& text, bool top, std::string_view name, size_t width) {
  if (top) {
    text.append(width + 2, ' ');
    return;
  }
  append_right(text, name, width);
  text += ": "sv;
}

// libtraceevent's kbuffer reports lost events only for an event at the very
// start of the sub-buffer's data, so trace-cmd 3.1.6 says nothing when a
// time extend or padding comes first (Record keeps the truth).
[[gnu::cold, gnu::noinline]] void write_dropped_line(TextOut& text, const Record& record) {
  if (record.missed_events == kMissedUnknown)
    text += fmt::format("CPU:{} [EVENTS DROPPED]\n", record.cpu);
  else if (record.missed_events > 0)
    text += fmt::format("CPU:{} [{} EVENTS DROPPED]\n", record.cpu, static_cast<int64_t>(record.missed_events));
}

// Per record, inline: the line is rare.
void write_dropped(TextOut& text, const Record& record) {
  if (record.missed_events && !record.missed_not_at_data_start) write_dropped_line(text, record);
}

// -I, -S: common_flags bits (include/linux/trace_events.h TRACE_FLAG_HARDIRQ,
// TRACE_FLAG_SOFTIRQ) whose records are left out.
uint64_t irq_skip_flags(const Field* flags_field, const ReportOptions& options) {
  if (!flags_field) return 0;
  return (options.no_hardirqs ? 0x08 : 0) | (options.no_softirqs ? 0x10 : 0);
}

// A latency-format file holds text, printed as it is.
Status write_latency_text(TraceDat& file, Output& out) {
  auto latency = file.latency_text();
  if (!latency) return latency.error();
  out.text() += *latency;
  out.flush();
  return {};
}

HeadStyle head_style(TraceDat& file, const ReportOptions& options) {
  HeadStyle style;
  style.in_ns = file.stamps_in_ns();
  style.raw_timestamps = options.raw_timestamps;
  style.latency_format = options.latency_format;
  style.raw_fields = options.raw_fields;
  style.ts_diff = options.ts_diff;
  style.ts_diff_in_us = file.uses_trace_clock() && !options.raw_timestamps;
  return style;
}

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

void RecordPrinter::format_fields(const Record& record, EventStream& stream, TextOut& out) {
  const EventFormat* looked_up = record.event ? record.event : impl_->ctx.event_of(record.data);
  if (const EventFormat* event = format_fields_but_print_fmt(record, looked_up, stream, out))
    event->printer()->format(record, *event, impl_->ctx, out);
}

const EventFormat* RecordPrinter::format_fields_but_print_fmt(const Record& record, const EventFormat* event,
                                                              EventStream& stream, TextOut& out) {
  if (!event) {
    out += "[UNKNOWN EVENT]"sv;
    return nullptr;
  }
  if (impl_->options.raw_fields) {
    format_raw_fields(record, *event, impl_->ctx, out);
    return nullptr;
  }
  switch (impl_->plugins.print(record, *event, stream, out)) {
    case Plugins::Outcome::printed:
      return nullptr;
    case Plugins::Outcome::not_handled:
    case Plugins::Outcome::print_fmt_next:
      break;
  }
  if (event->printer()) return event;
  // libtraceevent pretty_print on an event whose print fmt did not parse.
  out += "[FAILED TO PARSE]"sv;
  format_raw_fields(record, *event, impl_->ctx, out);
  return nullptr;
}

namespace {

// The records of a report, one line each, after the "cpus=" line.
struct RecordLines {
  RecordLines(TraceDat& file, const ReportOptions& options, Output& out, EventStream& stream)
      : ctx(file.context()),
        options(options),
        out(out),
        text(out.text()),
        stream(stream),
        buffers(file.buffers()),
        printer(ctx, options),
        pid_field(ctx.common_pid()),
        flags_field(ctx.common_flags()),
        skip_flags(irq_skip_flags(flags_field, options)),
        head(head_style(file, options)),
        usual_head(file.stamps_in_ns() && !options.latency_format && !options.ts_diff),
        wakeup(options.wakeup ? WakeupLatency::make(ctx) : std::nullopt) {
    // With instances, trace-cmd prefixes every line with the buffer's name
    // (blank for the top level), right-aligned to the longest name.
    prefix_buffers = buffers.size() > 1;
    for (size_t i = 1; i < buffers.size(); ++i) name_width = std::max(name_width, buffers[i].name.size());
  }

  Status write() {
    // Most reports choose no records: their loop leaves out the tests for
    // --cpu, -I/-S, -F and -w, a few per record.
    const bool selective = options.cpus || skip_flags || options.filter || wakeup;
    TRACEBED_TRY(selective ? write_records<true>() : write_records<false>());
    if (wakeup) wakeup->finish(text);
    return {};
  }

  template <bool kSelective>
  Status write_records() {
    Record record;
    for (;;) {
      auto more = stream.next(record);
      if (!more) return more.error();
      if (!*more) return {};
      const EventFormat* event = record.event ? record.event : ctx.event_of(record.data);
      if constexpr (kSelective)
        if (!chosen(record, event)) continue;
      if (prefix_buffers) write_buffer_name(text, record.buffer == 0, buffers[record.buffer].name, name_width);
      write_dropped(text, record);
      write_line<kSelective>(record, event);
      out.maybe_flush();
    }
  }

  bool chosen(const Record& record, const EventFormat* event) {
    // trace-cmd 3.1.6 with --cpu prints only the top-level buffer's events.
    if (options.cpus && record.buffer != 0) return false;
    if (skip_flags && (flags_field->read_int(record.data, ctx.endian) & skip_flags)) return false;
    return !options.filter || options.filter->keep(record, event);
  }

  template <bool kSelective>
  void write_line(const Record& record, const EventFormat* event) {
    const size_t line_start = text.size();
    if (!event) {
      head.write_unknown(text, ctx, record);
    } else if (const int pid = pid_field ? static_cast<int>(pid_field->read_int(record.data, ctx.endian)) : 0;
               usual_head && out.head_here(ctx, *event, pid, record.cpu, record.ts)) {
      // The common case: the head is written when the text is (Output).
    } else {
      head.write(text, ctx, *event, record, pid);
    }
    if (const EventFormat* rest = printer.format_fields_but_print_fmt(record, event, stream, text)) {
      // -w reads the line, so it cannot be left for later.
      if ((!kSelective || !wakeup) && out.print_fmt_here(*rest, record)) {
        text += '\n';
        return;
      }
      rest->printer()->format(record, *rest, ctx, text);
    }
    // trace-cmd drops one trailing newline of the event's text.
    if (text.size() > line_start && text.back() == '\n') text.pop_back();
    if constexpr (kSelective)
      if (wakeup && event) wakeup->on_record(record, *event, text);
    text += '\n';
  }

  TraceContext& ctx;
  const ReportOptions& options;
  Output& out;
  TextOut& text;
  EventStream& stream;
  const std::vector<TraceDatBuffer>& buffers;
  RecordPrinter printer;
  const Field* pid_field;
  const Field* flags_field;
  const uint64_t skip_flags;
  ReportHead head;
  // LineHead writes the usual head; the options that change it take the
  // general way.
  const bool usual_head;
  std::optional<WakeupLatency> wakeup;
  bool prefix_buffers = false;
  size_t name_width = 0;
};

}  // namespace

Status write_report(TraceDat& file, const ReportOptions& options, std::FILE* out_file) {
  TraceContext& ctx = file.context();
  const bool latency_format = !file.buffers().empty() && file.buffers()[0].latency;
  Output out(out_file, ctx, options.raw_timestamps, options.writer_thread);
  TextOut& text = out.text();
  text += "cpus="sv;
  append_uint(text, file.cpu_count());
  text += '\n';
  if (latency_format) return write_latency_text(file, out);

  // trace_cmd_events: what trace-cmd 3.1.6 reads, which for some instance
  // layouts is less than the kernel wrote (see trace_dat.h).
  auto stream = file.trace_cmd_events(options.cpus);
  if (!stream) return stream.error();
  const Status written = RecordLines(file, options, out, **stream).write();
  if (!out.flush()) return Error{"write error on output"};
  if (!written) return written;
  // kallsyms is read on the first lookup; a corrupt one fails the report
  // after what could be printed (addresses stayed numbers).
  if (ctx.kallsyms_error()) return *ctx.kallsyms_error();
  return {};
}

}  // namespace tracebed::decode
