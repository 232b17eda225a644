#include "framework/decode/report_line.h"

#include <fmt/format.h>

#include "framework/decode/line_head.h"
#include "framework/decode/plugins.h"
#include "framework/decode/report_text.h"

namespace tracebed::decode {

using namespace std::string_view_literals;

void ReportHead::write(TextOut& text, TraceContext& ctx, const EventFormat& event, const Record& record, int pid) {
  if (style_.latency_format) {
    // "%8.8s-%-5d %3d": the comm cut to 8 bytes.
    append_right(text, task_comm(ctx, pid).substr(0, 8), 8);
    text += '-';
    append_int_left(text, pid, 5);
    text += ' ';
    text += fmt::format("{:3}", record.cpu);
    latency_columns(text, ctx, record);
  } else {
    // "%16s-%-5d [%03d]"
    append_right(text, task_comm(ctx, pid), 16);
    text += '-';
    append_int_left(text, pid, 5);
    text += " ["sv;
    if (record.cpu >= 0)
      append_uint(text, static_cast<uint32_t>(record.cpu), 3, '0');
    else
      text += fmt::format("{:03}", record.cpu);
    text += ']';
  }
  // " %9.1d:" (-t), " %6.1000d:", or "%12d:" for raw counters.
  if (!style_.in_ns) {
    append_uint(text, record.ts, 12);
  } else {
    text += ' ';
    if (style_.raw_timestamps)
      append_event_time(record.ts, 9, 1, text);
    else
      append_event_time(record.ts, 6, 1000, text);
  }
  text += ':';
  if (style_.ts_diff) time_diff(text, record.ts);
  text += ' ';
  text += event.name;
  text += ": "sv;
  if (event.name.size() < 20) text.append(20 - event.name.size(), ' ');
}

// tep_print_event prints "[UNKNOWN EVENT]" for each of trace-cmd's calls on
// such a record (task, latency columns, time stamp); -l -R's flags and
// --ts-diff still come, and print_event_name shows the missing name as
// (NULL).
void ReportHead::write_unknown(TextOut& text, TraceContext& ctx, const Record& record) {
  text += "[UNKNOWN EVENT]"sv;
  if (style_.latency_format) {
    if (style_.raw_fields)
      latency_columns(text, ctx, record);
    else
      text += "[UNKNOWN EVENT]"sv;
  }
  text += "[UNKNOWN EVENT]"sv;
  if (style_.ts_diff) time_diff(text, record.ts);
  text += " (NULL): "sv;
  text.append(20 - 6, ' ');
}

// libtraceevent's latency columns: irqs off, need-resched, hard/soft irq,
// then the preempt count's low nibble and its high one (the migrate-disable
// depth kernels keep there), '.' for zero. With -R, trace-cmd prints the
// flags' value instead.
void ReportHead::latency_columns(TextOut& text, TraceContext& ctx, const Record& record) {
  const Field* flags_field = ctx.common_flags();
  const Field* pc_field = ctx.common_preempt_count();
  const uint32_t flags = flags_field ? static_cast<uint32_t>(flags_field->read_uint(record.data, ctx.endian)) : 0;
  if (style_.raw_fields) {
    text += fmt::format("-0x{:x}", flags);
    return;
  }
  // include/linux/trace_events.h TRACE_FLAG_*.
  constexpr uint32_t kIrqsOff = 0x01, kNoSupport = 0x02, kNeedResched = 0x04, kHardirq = 0x08, kSoftirq = 0x10;
  const uint32_t pc = pc_field ? static_cast<uint32_t>(pc_field->read_uint(record.data, ctx.endian)) : 0;
  const bool hard = flags & kHardirq, soft = flags & kSoftirq;
  text += (flags & kIrqsOff) ? 'd' : (flags & kNoSupport) ? 'X' : '.';
  text += (flags & kNeedResched) ? 'N' : '.';
  text += hard && soft ? 'H' : hard ? 'h' : soft ? 's' : '.';
  text += (pc & 0xf) ? fmt::format("{:x}", pc & 0xf) : std::string(".");
  text += (pc >> 4) ? fmt::format("{:x}", pc >> 4) : std::string(".");
}

// " %-8s" of "(+N)" since the previous line, in µs for the file's trace
// clock without -t; nothing on the first line (or after a stamp of 0).
void ReportHead::time_diff(TextOut& text, uint64_t ts) {
  if (style_.ts_diff_in_us) ts = (ts + 500) / 1000;
  std::string diff;
  if (last_ts_) diff = fmt::format("(+{})", static_cast<int64_t>(ts - last_ts_));
  last_ts_ = ts;
  text += fmt::format(" {:<8}", diff);
}

std::optional<WakeupLatency> WakeupLatency::make(TraceContext& ctx) {
  // trace-read.c init_wakeup: sched_wakeup with pid, sched_switch with
  // next_pid and next_prio; sched_wakeup_new if there is one.
  WakeupLatency w;
  w.ctx_ = &ctx;
  w.wakeup_ = ctx.event_by_name("sched", "sched_wakeup");
  w.sched_ = ctx.event_by_name("sched", "sched_switch");
  if (!w.wakeup_ || !w.sched_) return std::nullopt;
  w.wakeup_pid_ = w.wakeup_->field("pid");
  w.wakeup_success_ = w.wakeup_->field("success");
  w.next_pid_ = w.sched_->field("next_pid");
  w.next_prio_ = w.sched_->field("next_prio");
  if (!w.wakeup_pid_ || !w.next_pid_ || !w.next_prio_) return std::nullopt;
  w.wakeup_new_ = ctx.event_by_name("sched", "sched_wakeup_new");
  if (w.wakeup_new_) {
    w.new_pid_ = w.wakeup_new_->field("pid");
    w.new_success_ = w.wakeup_new_->field("success");
    if (!w.new_pid_) return std::nullopt;
  }
  return w;
}

void WakeupLatency::on_record(const Record& record, const EventFormat& event, TextOut& text) {
  const Endian e = ctx_->endian;
  // The ids decide, as tep_data_type does: a second format with the same
  // name is another event.
  if (event.id == wakeup_->id || (wakeup_new_ && event.id == wakeup_new_->id)) {
    const bool is_new = event.id != wakeup_->id;
    const Field* success = is_new ? new_success_ : wakeup_success_;
    if (success && success->read_uint(record.data, e) == 0) return;
    const auto pid = static_cast<uint32_t>((is_new ? new_pid_ : wakeup_pid_)->read_uint(record.data, e));
    woken_[pid] = record.ts;  // a second wakeup restarts the clock
    return;
  }
  if (event.id != sched_->id) return;
  const bool rt = next_prio_->read_uint(record.data, e) <= 99;
  auto it = woken_.find(static_cast<uint32_t>(next_pid_->read_uint(record.data, e)));
  if (it == woken_.end()) return;
  const uint64_t lat = record.ts - it->second;
  woken_.erase(it);
  all_.add(lat, record.ts);
  if (rt) rt_.add(lat, record.ts);
  text += fmt::format(" Latency: {}.{:03} usecs", lat / 1000, lat % 1000);
}

void WakeupLatency::Stats::add(uint64_t lat, uint64_t at) {
  if (lat > max) max = lat, max_time = at;
  if (lat < min) min = lat, min_time = at;
  total += lat;
  ++count;
}

void WakeupLatency::Stats::print(TextOut& text) const {
  const uint64_t avg = total / count;
  // trace-read.c show_wakeup_timings, its rounding included.
  auto stamp = [](uint64_t t) { return fmt::format("{}.{:06}", t / 1000000000, ((t + 500) % 1000000000) / 1000); };
  text += fmt::format("\nAverage wakeup latency: {}.{:03} usecs\n", avg / 1000, avg % 1000);
  text += fmt::format("Maximum Latency: {}.{:03} usecs at timestamp: {}\n", max / 1000, max % 1000, stamp(max_time));
  text += fmt::format("Minimum Latency: {}.{:03} usecs at timestamp: {}\n\n", min / 1000, min % 1000, stamp(min_time));
}

void WakeupLatency::finish(TextOut& text) const {
  if (!all_.count) return;
  all_.print(text);
  if (rt_.count) {
    text += "RT task timings:\n"sv;
    rt_.print(text);
  }
}

}  // namespace tracebed::decode
