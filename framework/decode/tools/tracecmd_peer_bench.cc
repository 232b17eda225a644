// Our iteration against libtracecmd's, in one process: for each recorded
// fixture, open the file and walk every record with its event looked up,
// once through TraceDat::trace_cmd_events() and for_each, and once through
// Debian's tracecmd_iterate_events (tracecmd_peer.h), both visiting each
// record with a callback. The two are registered in turn per fixture, so
// they run alternately (items/s = records/s). `tracebed bench` does the same across processes,
// for peak RSS.
#include <benchmark/benchmark.h>

#include <string>

#include "framework/decode/tools/tracecmd_peer.h"

#include "framework/decode/recorded_for_benchmarks.h"

namespace tracebed::decode {
namespace {

void BM_IterateTracebed(benchmark::State& state, const std::string& name) {
  const std::string path = kRecorded + name + ".dat";
  int64_t records = 0;
  uint64_t ids = 0;
  for (auto _ : state) {
    auto file = TraceDat::open(path);
    if (!file.ok()) {
      state.SkipWithError(file.error().message.c_str());
      return;
    }
    auto stream = (*file)->trace_cmd_events();
    if (!stream.ok()) {
      state.SkipWithError(stream.error().message.c_str());
      return;
    }
    Status st = (*stream)->for_each([&](const Record& r) {
      if (const EventFormat* ev = r.event) ids += ev->id;  // looked up by the stream
      ++records;
      return true;
    });
    if (!st.ok()) {
      state.SkipWithError(st.error().message.c_str());
      return;
    }
  }
  benchmark::DoNotOptimize(ids);
  state.SetItemsProcessed(records);
}

void BM_IterateLibtracecmd(benchmark::State& state, const std::string& name) {
  const std::string path = kRecorded + name + ".dat";
  tracecmd_peer_count c{};
  int64_t records = 0;
  for (auto _ : state) {
    if (tracecmd_peer_iterate(path.c_str(), &c) != 0) {
      state.SkipWithError("libtracecmd cannot open the fixture");
      return;
    }
    records += static_cast<int64_t>(c.events);
  }
  benchmark::DoNotOptimize(c.ids);
  state.SetItemsProcessed(records);
}

// The largest recorded fixtures: sched/irq/timer/syscalls (v7 zstd), the
// function tracer with sched and kmem (v6), and `-e all` (v7 zstd).
#define PEER_PAIR(label, file)                                                 \
  BENCHMARK_CAPTURE(BM_IterateTracebed, label, std::string(file))->Unit(benchmark::kMillisecond); \
  BENCHMARK_CAPTURE(BM_IterateLibtracecmd, label, std::string(file))->Unit(benchmark::kMillisecond)

PEER_PAIR(s1_v7zstd, "s1-k6.12-v7zstd-sched-irq-timer-syscalls");
PEER_PAIR(s2_v6, "s2-k6.1-v6-function-sched-kmem");
PEER_PAIR(s11_v7zstd_all, "s11-k6.12-v7zstd-all");

}  // namespace
}  // namespace tracebed::decode
