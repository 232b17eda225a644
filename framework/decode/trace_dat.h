// trace-cmd's trace.dat, versions 6 and 7 (trace-cmd's trace-cmd.dat.v6.5
// and trace-cmd.dat.v7.5 man pages), read as a stream: per-CPU data is
// decompressed chunk by chunk and pages are decoded as they are needed, so
// memory does not grow with the file.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "framework/base/result.h"
#include "framework/decode/record.h"
#include "framework/decode/trace_context.h"

namespace tracebed::decode {

struct TraceDatCpu {
  int cpu = 0;                // the CPU id (may be sparse in v7)
  uint64_t offset = 0;        // file offset of this CPU's data (section or raw)
  uint64_t size = 0;          // bytes of data (uncompressed size for compressed files)
  // Bytes of it trace-cmd 3.1.6 reads: less than `size` where it loses data.
  // It places each CPU's data at offsets of its own (compressed data: packed
  // one CPU after another, each rounded up to the buffer's sub-buffer size,
  // an instance starting where the top-level buffer ended) and refuses every
  // sub-buffer after the first when that offset is not a multiple of the
  // sub-buffer size - an instance with larger sub-buffers (fixture s22).
  uint64_t trace_cmd_size = 0;
  // Where trace-cmd 3.1.6 says the data is (`report --stat`): `offset` for
  // data stored as it is, the offset it unpacks compressed data to.
  uint64_t trace_cmd_offset = 0;
};

struct TraceDatBuffer {
  std::string name;           // "" for the top-level buffer
  std::string clock;          // trace clock, if the file says
  std::vector<TraceDatCpu> cpus;
  bool latency = false;       // latency-format text instead of binary pages
};

// Lost-data and unknown-data counts found while reading, reported by the CLI.
struct DecodeStats {
  uint64_t events = 0;
  uint64_t unknown_events = 0;      // ids with no format
  uint64_t missed_events = 0;       // sum of known missed counts
  uint64_t pages_with_missed = 0;   // pages that said events were lost
};

class EventStream {
 public:
  virtual ~EventStream() = default;
  // Fills `out` with the next record in time order across the chosen CPUs
  // (and buffers); false at the end; an Error names the file offset.
  virtual Result<bool> next(Record& out) = 0;
  // Calls `visit` with each next record in the same order until it returns
  // false or the records end, like libtracecmd's tracecmd_iterate_events():
  // no copy and no Result per record (a fifth of iterating). The record is
  // valid during the call; peeking from inside it is an Error.
  virtual Status for_each(const std::function<bool(const Record&)>& visit) = 0;
  virtual const DecodeStats& stats() const = 0;

  // The record that would come next, in time order, among ALL CPUs of the
  // buffer the last record came from, ignoring the `cpus` filter (ties go to
  // the lowest CPU) — what libtracecmd's tracecmd_peek_next_data() returns.
  // trace-cmd's function_graph plugin uses it to merge an entry with its
  // exit into one leaf line; matching that means peeking exactly so.
  // Null at the buffer's end. The peeked record and the last one returned
  // both stay valid until the next call to next() or consume_peeked().
  virtual Result<const Record*> peek_next_in_buffer() = 0;
  // Drops the record peek_next_in_buffer() returned, as if it had been read.
  virtual void consume_peeked() = 0;
};

class TraceDat {
 public:
  virtual ~TraceDat() = default;
  static Result<std::unique_ptr<TraceDat>> open(const std::string& path);

  virtual const std::string& path() const = 0;
  virtual int version() const = 0;            // 6 or 7
  virtual std::string compression() const = 0;  // "none", "zlib", "zstd"
  virtual int cpu_count() const = 0;          // as in the file header ("cpus=N")
  virtual TraceContext& context() = 0;
  virtual const std::vector<TraceDatBuffer>& buffers() const = 0;  // [0] is the top level
  virtual const std::string& uname() const = 0;  // option UNAME, if stored
  virtual int64_t ts_offset() const = 0;        // option OFFSET, added to every stamp
  // Time stamps of streams made from here on: `offset` ns more (trace-cmd
  // report --ts-offset, added to the file's own), and, when `hz` is not 0,
  // counter ticks of that frequency turned into ns (--ts2secs HZ).
  virtual void set_user_time(int64_t offset, uint64_t hz) = 0;
  // trace-cmd's use_trace_clock: the file names its trace clock (a
  // TRACECLOCK option) and no --ts2secs replaced it. `--ts-diff` then
  // counts µs.
  virtual bool uses_trace_clock() const = 0;
  // The CPUSTAT options' text as trace-cmd keeps it: each payload with its
  // last byte turned into a newline, one after another; empty if none.
  virtual const std::string& cpu_stats() const = 0;
  // The event format files as stored, system by system in file order, for
  // a v6 file (trace-cmd 3.1.6's `report --events` prints them and nothing
  // for v7). Re-read from the file, bounds-checked.
  virtual Status for_each_stored_event_format(
      const std::function<void(std::string_view system, std::string_view text)>& visit) = 0;
  // Whether stamps are nanoseconds (trace-cmd's TRACECMD_FL_IN_USECS): true
  // for the ns clocks (local, global, uptime, perf, mono*, boot, tai) and
  // for counter clocks converted by a TSC2NSEC option; false for raw
  // x86-tsc/counter values, which `report` prints as plain numbers.
  virtual bool stamps_in_ns() const = 0;
  // Soft problems: event formats that did not parse (trace-cmd counts them
  // and goes on), options this reader does not apply. Most formats are
  // parsed when first looked up; this parses the rest, and lists their
  // failures after what opening found.
  virtual const std::vector<std::string>& warnings() const = 0;

  // Events of every buffer, merged by time. `cpus` limits to those CPUs.
  virtual Result<std::unique_ptr<EventStream>> events(std::optional<std::set<int>> cpus = {}) = 0;
  // The same, reading each CPU only as far as trace-cmd 3.1.6 does
  // (TraceDatCpu::trace_cmd_size), for output that must match it.
  virtual Result<std::unique_ptr<EventStream>> trace_cmd_events(std::optional<std::set<int>> cpus = {}) = 0;
  // For latency-format files: the stored text.
  virtual Result<std::string> latency_text() = 0;
  // Whether streams made from here on decompress ahead on a thread of
  // their own (StreamSetup::prefetch_chunks; unset: by the CPUs there are).
  virtual void set_decompress_ahead(std::optional<bool> on) = 0;
  // Whether streams made from here on map uncompressed data or read it
  // (StreamSetup::map_data), and whether large compressed sections read from
  // here on (kallsyms, on its first lookup) are mapped or read. On by default.
  virtual void set_map_file(bool on) = 0;
};

}  // namespace tracebed::decode
