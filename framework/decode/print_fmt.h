// The `print fmt` of an event, parsed once into a tree and evaluated per
// record the way libtraceevent's tep_print_event does, so output matches
// trace-cmd report byte for byte.
#pragma once

#include <memory>
#include <string>
#include <string_view>

#include "framework/base/result.h"
#include "framework/decode/event_format.h"
#include "framework/decode/record.h"
#include "framework/decode/text_out.h"

namespace tracebed::decode {

class TraceContext;

class PrintFmt {
 public:
  virtual ~PrintFmt() = default;
  // Parses `"fmt", args...` as written after "print fmt: " for `event`.
  static Result<std::unique_ptr<PrintFmt>> parse(std::string_view text, const EventFormat& event);
  // Appends the formatted fields of `record` (no trailing newline).
  virtual void format(const Record& record, const EventFormat& event, const TraceContext& ctx,
                      TextOut& out) const = 0;
  void format(const Record& record, const EventFormat& event, const TraceContext& ctx, std::string& out) const {
    TextOut text(out);
    format(record, event, ctx, text);
  }
  // Whether records must be formatted in order, on one thread: ftrace's
  // bprint caches formats and, after a conversion without an argument,
  // prints every later record as "[FAILED TO PARSE]".
  virtual bool keeps_state() const { return false; }
};

// What `trace-cmd report -R` prints (libtraceevent's print_selected_fields
// with raw output): " name=value" for every non-common field, each value
// printed with the conversion the event's print fmt uses for that field when
// it has one, else by type (numbers, 0x-hex for pointers/longs, strings,
// ARRAY[..] bytes). Works also when the print fmt did not parse.
void format_raw_fields(const Record& record, const EventFormat& event, const TraceContext& ctx, TextOut& out);
inline void format_raw_fields(const Record& record, const EventFormat& event, const TraceContext& ctx,
                              std::string& out) {
  TextOut text(out);
  format_raw_fields(record, event, ctx, text);
}

// ftrace's bprint (trace_printk with a constant format): "%ps: " plus the
// printk format the record's `fmt` field points to, with the arguments the
// kernel's vbin_printf packed into `buf` (libtraceevent get_bprint_format +
// make_bprint_args). The PrintFmt of ftrace:bprint calls this itself.
// libtraceevent prints "[FAILED TO PARSE]" and then format_raw_fields for an
// event whose print fmt did not parse (EventFormat::printer is null).
void format_bprint(const Record& record, const EventFormat& event, const TraceContext& ctx, TextOut& out);
inline void format_bprint(const Record& record, const EventFormat& event, const TraceContext& ctx,
                          std::string& out) {
  TextOut text(out);
  format_bprint(record, event, ctx, text);
}

}  // namespace tracebed::decode
