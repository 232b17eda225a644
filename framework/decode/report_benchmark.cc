// End to end: `tracebed report` text of recorded fixtures, open to last line,
// written through stdio as the CLI does, to a stream that only counts (items/s = records/s,
// bytes/s = text bytes/s). docs/performance.md compares these with
// `trace-cmd report` on the same files.
#include <benchmark/benchmark.h>

#include <cstdio>
#include <string>

#include "framework/decode/recorded_for_benchmarks.h"
#include "framework/decode/report.h"

namespace tracebed::decode {
namespace {

// A stdio stream that counts what is written to it and drops it.
ssize_t count_bytes(void* cookie, const char*, size_t n) {
  *static_cast<int64_t*>(cookie) += static_cast<int64_t>(n);
  return static_cast<ssize_t>(n);
}

void BM_Report(benchmark::State& state, const std::string& name, bool raw_fields) {
  int64_t bytes = 0;
  cookie_io_functions_t io{nullptr, count_bytes, nullptr, nullptr};
  std::FILE* null = fopencookie(&bytes, "w", io);
  if (!null) {
    state.SkipWithError("cannot open a counting stream");
    return;
  }
  ReportOptions options;
  options.raw_fields = raw_fields;
  int64_t per_run = 0;
  if (auto file = TraceDat::open(kRecorded + name + ".dat"); file.ok()) {
    if (auto stream = (*file)->trace_cmd_events(); stream.ok()) {
      Record r;
      for (;;) {
        auto more = (*stream)->next(r);
        if (!more.ok() || !*more) break;
      }
      per_run = static_cast<int64_t>((*stream)->stats().events);
    }
  }
  for (auto _ : state) {
    auto file = TraceDat::open(kRecorded + name + ".dat");
    if (!file.ok()) {
      state.SkipWithError(file.error().message.c_str());
      break;
    }
    if (!write_report(**file, options, null).ok()) {
      state.SkipWithError("report failed");
      break;
    }
    std::fflush(null);
  }
  std::fclose(null);
  state.SetItemsProcessed(static_cast<int64_t>(state.iterations()) * per_run);
  state.SetBytesProcessed(bytes);
}
BENCHMARK_CAPTURE(BM_Report, s1_sched_irq_timer_syscalls, std::string("s1-k6.12-v7zstd-sched-irq-timer-syscalls"), false)
    ->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_Report, s2_function_sched_kmem, std::string("s2-k6.1-v6-function-sched-kmem"), false)
    ->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_Report, s11_all_events, std::string("s11-k6.12-v7zstd-all"), false)->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_Report, s4_function_graph, std::string("s4-k7.2-v7zstd-function_graph"), false)
    ->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_Report, s1_raw_fields, std::string("s1-k6.12-v7zstd-sched-irq-timer-syscalls"), true)
    ->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace tracebed::decode
