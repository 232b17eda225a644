// The head of a `trace-cmd report` line (trace-read.c and libtraceevent's
// tep_print_event): "%16s-%-5d [%03d] %5llu.%06llu: %s: %*s", or with -t
// nine digits of nanoseconds. It is written for every record, so the parts
// that repeat are kept ready: a CPU runs one task for many records in a
// row, the seconds change once a second, and an event's name with its
// padding is the same on every line.
#pragma once

#include <cstdint>
#include <string_view>
#include <vector>

#include "framework/decode/event_format.h"
#include "framework/decode/trace_context.h"

namespace tracebed::decode {

// libtraceevent find_cmdline: pid 0 is the idle task, unknown pids "<...>".
std::string_view task_comm(TraceContext& ctx, int pid);

class LineHead {
 public:
  // Bytes past p that write() may store to (the head and the tail of
  // fixed-size copies); the head itself is at most kMaxHead.
  static constexpr size_t kRoom = 224;
  static constexpr size_t kMaxHead = 160;

  explicit LineHead(bool raw_timestamps) : raw_timestamps_(raw_timestamps) {}

  // Whether write() takes this head: a comm of at most 16 bytes (all a
  // kernel has), a CPU of 0 ... 999, an event id below 2^16 and a name of
  // at most 60 bytes. The caller writes other heads the general way.
  static bool usual(std::string_view comm, const EventFormat& event, int cpu) {
    return comm.size() <= 16 && usual(event, cpu);
  }
  static bool usual(const EventFormat& event, int cpu) {
    return cpu >= 0 && cpu <= 999 && event.id < 65536 && event.name.size() <= kLongestName;
  }

  // Writes the head of a line for `event` at p, which has kRoom bytes; the
  // task's name comes from ctx. Returns the head's end, or null (nothing
  // meant written) when the head is not usual().
  char* write(char* p, TraceContext& ctx, const EventFormat& event, int pid, int cpu, uint64_t ts);
  // The same with the comm given, for a usual() head, keeping nothing of the
  // task (the report's writer thread has the parts, not the comm store).
  char* write(char* p, std::string_view comm, const EventFormat& event, int pid, int cpu, uint64_t ts);

 private:
  static constexpr size_t kTaskBytes = 48;   // "%16s-%-5d [%03d] ": at most 35
  static constexpr size_t kLongestName = 60;
  static constexpr size_t kLabelBytes = 64;  // ": %s: %*s" for names up to 60
  static constexpr size_t kSecondsBytes = 32;
  struct Task {
    int pid = 0;
    int cpu = -1;
    uint64_t generation = 0;  // of the comm store; 0: nothing kept
    uint8_t size = 0;
    char text[kTaskBytes];
  };
  struct Label {
    uint8_t size = 0;
    char text[kLabelBytes];
  };

  static char* write_task(char* p, std::string_view comm, int pid, int cpu);
  // Inline: every line asks. The label is made the first time.
  const Label& label(const EventFormat& event) {
    if (event.id < label_by_id_.size())
      if (const uint32_t slot = label_by_id_[event.id]) return labels_[slot - 1];
    return make_label(event);
  }
  const Label& make_label(const EventFormat& event);
  char* write_time_and_label(char* p, const EventFormat& event, uint64_t ts);

  bool raw_timestamps_;
  // Tasks by (pid, CPU), direct-mapped: a CPU may switch between a few
  // tasks record by record (an interrupt's and a thread's, timerlat's).
  static constexpr size_t kTasks = 256;
  std::vector<Task> tasks_ = std::vector<Task>(kTasks);
  std::vector<uint32_t> label_by_id_;   // event id -> labels_ index + 1
  std::vector<Label> labels_;
  uint64_t seconds_ = UINT64_MAX;       // whose "%5llu." is in seconds_text_
  uint8_t seconds_size_ = 0;
  char seconds_text_[kSecondsBytes];
};

}  // namespace tracebed::decode
