// trace.dat reading: one recorded event mix (s1: sched, irq, timer,
// syscalls on 6.12) rewritten by our writer as v6 and as v7 with none, zlib
// and zstd, then opened and streamed whole (items/s = records/s, bytes/s =
// sub-buffer bytes/s), so the formats' costs compare on the same records.
#include <benchmark/benchmark.h>
#include <unistd.h>

#include <string>

#include "framework/decode/recorded_for_benchmarks.h"

namespace tracebed::decode {
namespace {

void BM_ReadTraceDat(benchmark::State& state, int version, TraceDatCompression compression) {
  auto contents = read_trace_dat_contents_file(kRecorded + "s1-k6.12-v7zstd-sched-irq-timer-syscalls.dat");
  if (!contents.ok()) {
    state.SkipWithError(contents.error().message.c_str());
    return;
  }
  int64_t data_bytes = 0;
  for (const auto& b : contents->buffers)
    for (const auto& c : b.cpus) data_bytes += static_cast<int64_t>(c.pages.size());
  TraceDatWriteOptions format;
  format.version = version;
  format.compression = compression;
  const TempTrace trace("tracebed_bench_v" + std::to_string(version) + "_" +
                            std::string(compression_name(compression)) + "_" + std::to_string(::getpid()) + ".dat",
                        *contents, format);
  if (trace.path().empty()) {
    state.SkipWithError("cannot write the trace");
    return;
  }
  int64_t records = 0;
  uint64_t sink = 0;
  for (auto _ : state) {
    auto dat = TraceDat::open(trace.path());
    if (!dat.ok()) {
      state.SkipWithError(dat.error().message.c_str());
      break;
    }
    auto n = stream_records(**dat, [&](const Record& r) { sink += r.ts; });
    if (!n.ok()) {
      state.SkipWithError(n.error().message.c_str());
      break;
    }
    records += *n;
  }
  benchmark::DoNotOptimize(sink);
  state.SetItemsProcessed(records);
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations()) * data_bytes);
}
BENCHMARK_CAPTURE(BM_ReadTraceDat, v6, 6, TraceDatCompression::none)->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_ReadTraceDat, v7_none, 7, TraceDatCompression::none)->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_ReadTraceDat, v7_zlib, 7, TraceDatCompression::zlib)->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_ReadTraceDat, v7_zstd, 7, TraceDatCompression::zstd)->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace tracebed::decode
