#include "framework/decode/line_head.h"

#include <cstring>

#include "framework/decode/report_text.h"

namespace tracebed::decode {

std::string_view task_comm(TraceContext& ctx, int pid) {
  if (pid == 0) return "<idle>";
  if (auto comm = ctx.comm(pid)) return *comm;
  return "<...>";
}

namespace {

constexpr char kSpaces[] = "                                ";  // 32

// "000" ... "999", each padded to four bytes.
struct ThreeDigits {
  char text[1000][4];
  constexpr ThreeDigits() : text() {
    for (int i = 0; i < 1000; ++i) {
      text[i][0] = static_cast<char>('0' + i / 100);
      text[i][1] = static_cast<char>('0' + i / 10 % 10);
      text[i][2] = static_cast<char>('0' + i % 10);
      text[i][3] = 0;
    }
  }
};
constexpr ThreeDigits kThreeDigitTable;
constexpr auto& kThreeDigits = kThreeDigitTable.text;

}  // namespace

// "%16s-%-5d [%03d] " for a comm of at most 16 bytes and a CPU of 0 ... 999;
// stores up to kTaskBytes past p.
char* LineHead::write_task(char* p, std::string_view comm, int pid, int cpu) {
  std::memcpy(p, kSpaces, 16);
  copy_upto16(p + 16 - comm.size(), comm.data(), comm.size());
  p += 16;
  *p++ = '-';
  char buf[24];
  char* const end = buf + sizeof buf;
  const uint64_t mag = pid < 0 ? 0 - static_cast<uint64_t>(pid) : static_cast<uint64_t>(pid);
  char* q = format_decimal(mag, end);
  if (pid < 0) *--q = '-';
  const size_t n = static_cast<size_t>(end - q);
  copy_upto16(p, q, n);
  if (n < 5) std::memcpy(p + n, kSpaces, 8);
  p += n < 5 ? 5 : n;
  std::memcpy(p, " [", 2);
  std::memcpy(p + 2, kThreeDigits[cpu], 4);
  std::memcpy(p + 5, "] ", 2);
  return p + 7;
}

// For a usual() event (an id below 2^16).
const LineHead::Label& LineHead::make_label(const EventFormat& event) {
  if (event.id >= label_by_id_.size()) label_by_id_.resize(event.id + 1, 0);
  uint32_t& slot = label_by_id_[event.id];
  // ": %s: %*s": the name, then padding to 20 (trace-read.c's
  // print_event_name).
  Label& made = labels_.emplace_back();
  const std::string_view name = event.name;
  char* p = made.text;
  std::memcpy(p, ": ", 2);
  std::memcpy(p + 2, name.data(), name.size());
  std::memcpy(p + 2 + name.size(), ": ", 2);
  size_t size = 4 + name.size();
  if (name.size() < 20) {
    std::memset(made.text + size, ' ', 20 - name.size());
    size += 20 - name.size();
  }
  made.size = static_cast<uint8_t>(size);
  slot = static_cast<uint32_t>(labels_.size());
  return made;
}

// "%5llu.%06llu" of microseconds, rounded (append_event_time(ts, 6, 1000)),
// or "%5llu.%09llu" with -t, then the event's label.
[[gnu::always_inline]] inline char* LineHead::write_time_and_label(char* p, const EventFormat& event, uint64_t ts) {
  const Label& l = label(event);
  uint64_t seconds, fraction;
  unsigned digits;
  if (raw_timestamps_) {
    seconds = ts / 1000000000;
    fraction = ts % 1000000000;
    digits = 9;
  } else {
    const uint64_t us = (ts + 500) / 1000;
    seconds = us / 1000000;
    fraction = us % 1000000;
    digits = 6;
  }
  if (seconds != seconds_) {
    char buf[24];
    char* const end = buf + sizeof buf;
    const char* q = format_decimal(seconds, end);
    const size_t n = static_cast<size_t>(end - q);
    std::memcpy(seconds_text_, kSpaces, sizeof seconds_text_);
    const size_t pad = n < 5 ? 5 - n : 0;
    std::memcpy(seconds_text_ + pad, q, n);
    seconds_text_[pad + n] = '.';
    seconds_size_ = static_cast<uint8_t>(pad + n + 1);
    seconds_ = seconds;
  }
  std::memcpy(p, seconds_text_, kSecondsBytes);
  p += seconds_size_;
  // Three digits at a time from a table (stores four bytes, keeps three).
  if (digits == 9) {
    std::memcpy(p, kThreeDigits[fraction / 1000000], 4);
    fraction %= 1000000;
    p += 3;
  }
  std::memcpy(p, kThreeDigits[fraction / 1000], 4);
  std::memcpy(p + 3, kThreeDigits[fraction % 1000], 4);
  p += 6;
  std::memcpy(p, l.text, kLabelBytes);
  return p + l.size;
}

char* LineHead::write(char* p, TraceContext& ctx, const EventFormat& event, int pid, int cpu, uint64_t ts) {
  if (!usual(event, cpu)) return nullptr;
  const uint32_t key = static_cast<uint32_t>(pid) * 0x9E3779B1u + static_cast<uint32_t>(cpu) * 0x85EBCA6Bu;
  Task& task = tasks_[key >> 24];
  static_assert(kTasks == 256);
  const uint64_t generation = ctx.comm_generation();
  if (task.generation != generation || task.pid != pid || task.cpu != cpu) {
    const std::string_view comm = task_comm(ctx, pid);
    if (comm.size() > 16) return nullptr;
    task.size = static_cast<uint8_t>(write_task(task.text, comm, pid, cpu) - task.text);
    task.pid = pid;
    task.cpu = cpu;
    task.generation = generation;
  }
  std::memcpy(p, task.text, kTaskBytes);
  return write_time_and_label(p + task.size, event, ts);
}

char* LineHead::write(char* p, std::string_view comm, const EventFormat& event, int pid, int cpu, uint64_t ts) {
  return write_time_and_label(write_task(p, comm, pid, cpu), event, ts);
}

}  // namespace tracebed::decode
