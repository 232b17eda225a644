// error_log: the kernel's own words for a rejected command.
//
// Each entry is three lines (kernel/trace/trace.c tracing_err_log_seq_show):
//   [  785.936973] event filter parse error: error: Field not found
//     Command: bogus_field == 1
//                          ^
// The caret sits under the position of the error in the command, counted
// after the "  Command: " prefix. The log keeps the last 8 entries per
// instance; a truncating write clears it.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "framework/base/result.h"

namespace tracebed::tracefs {

struct ErrorLogEntry {
  uint64_t seconds = 0;
  uint32_t microseconds = 0;
  std::string location;  // "event filter parse error", "trace_kprobe", "hist:sched:sched_switch"
  std::string error;     // "Field not found"
  std::string command;   // the command as the kernel saw it
  size_t caret = 0;      // index into command (may equal its length: "at the end")

  // The entry as the kernel printed it, three lines without a final newline.
  std::string str() const;
};

// Parses the whole error_log file; an empty file gives no entries.
Result<std::vector<ErrorLogEntry>> parse_error_log(std::string_view text);

}  // namespace tracebed::tracefs
