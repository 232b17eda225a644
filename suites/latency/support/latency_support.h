// What the latency-tracer suite and the rtla suite share: the osnoise and
// timerlat tracers' samples, both as the kernel prints them in `trace` and
// as our decoder reads them from the raw pages (ftrace:osnoise and
// ftrace:timerlat entries, kernel/trace/trace_entries.h), and tracefs
// knobs put back after a test (the fixture's reset leaves osnoise/,
// hwlat_detector/ and tracing_thresh alone).
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "framework/base/result.h"
#include "framework/tracefs/tracefs.h"
#include "framework/testing/tracefs_fixture.h"

namespace tracebed::suites {

// The head every `trace` line has: "<task>-<pid> [<cpu>] <flags> <secs>.<usecs>: <body>".
struct TraceHead {
  std::string task;
  int pid = 0;
  int cpu = 0;
  std::string flags;
  uint64_t ts_us = 0;
  std::string body;
};
std::optional<TraceHead> parse_trace_head(std::string_view line);

// One osnoise period of one CPU (struct osnoise_entry). Times in us.
struct OsnoiseSample {
  int cpu = 0;
  uint64_t ts_us = 0;  // the line's time stamp (decoded: the raw ns rounded as trace prints)
  uint64_t runtime = 0, noise = 0, max_sample = 0;
  uint64_t hw = 0, nmi = 0, irq = 0, softirq = 0, thread = 0;
  std::string available;  // "% OF CPU AVAILABLE" as printed ("99.98100"); empty when decoded
  bool operator==(const OsnoiseSample&) const = default;
};

// One timerlat activation in one context (struct timerlat_entry).
struct TimerlatSample {
  int cpu = 0;
  uint64_t ts_us = 0;
  uint64_t seq = 0;
  int context = 0;  // 0 irq, 1 thread, 2 user-ret (kernel/trace/trace_osnoise.c)
  uint64_t latency_ns = 0;
  bool operator==(const TimerlatSample&) const = default;
};

std::string timerlat_context_name(int context);

// The body of an osnoise tracer line: "RUNTIME NOISE %AVAIL MAX HW NMI IRQ SIRQ THREAD".
std::optional<OsnoiseSample> parse_osnoise_line(const TraceHead& head);
// "#<seq> context <irq|thread|user-ret> timer_latency <N> ns".
std::optional<TimerlatSample> parse_timerlat_line(const TraceHead& head);

// The tracer lines of a `trace` text; a line that has the head but not the
// body is an error naming it (other lines, such as printk, are skipped
// only when their body starts with a word followed by ':').
Result<std::vector<OsnoiseSample>> osnoise_lines(std::string_view trace);
Result<std::vector<TimerlatSample>> timerlat_lines(std::string_view trace);

// The same samples from decoded ftrace:osnoise / ftrace:timerlat entries
// (other events are passed over), in the order given.
std::vector<OsnoiseSample> osnoise_samples(const std::vector<DecodedEvent>& events);
std::vector<TimerlatSample> timerlat_samples(const std::vector<DecodedEvent>& events);

// Samples (or anything with a `cpu`) grouped by CPU, each CPU's in the
// order given.
template <typename Sample>
std::map<int, std::vector<Sample>> by_cpu(const std::vector<Sample>& samples) {
  std::map<int, std::vector<Sample>> out;
  for (const Sample& s : samples) out[s.cpu].push_back(s);
  return out;
}

// "% OF CPU AVAILABLE" as kernel/trace/trace_output.c computes it:
// (runtime - noise) / runtime with five decimals, truncated.
std::string osnoise_available(uint64_t runtime, uint64_t noise);

// Nanoseconds to the microseconds `trace` prints (rounded, as ns2usecs does).
inline uint64_t trace_us(uint64_t ns) { return (ns + 500) / 1000; }

// Tracefs files read before a test and written back after it, last saved
// first (so runtime_us/period_us and width/window, which bound each other,
// go back in an order the kernel accepts).
class SavedFiles {
 public:
  explicit SavedFiles(const tracefs::Files& files) : files_(files) {}
  // Saves the value (if the file exists) and writes the new one.
  Status set(const std::string& rel, std::string_view value);
  Status save(const std::string& rel);
  Status restore();

 private:
  tracefs::Files files_;
  std::vector<std::pair<std::string, std::string>> saved_;
};

}  // namespace tracebed::suites
