// Field access: every field of every record of a recorded fixture read the
// way printers read them (scalars with sign, strings, __data_loc payloads),
// plus the event lookup that comes first (items/s = records/s).
#include <benchmark/benchmark.h>

#include <memory>
#include <string>
#include <vector>

#include "framework/decode/recorded_for_benchmarks.h"
#include "framework/decode/trace_dat.h"

namespace tracebed::decode {
namespace {

void BM_FieldAccess(benchmark::State& state, const std::string& name) {
  Loaded l = load_recorded(name + ".dat");
  if (l.records.empty()) {
    state.SkipWithError("fixture missing or unreadable");
    return;
  }
  const TraceContext& ctx = l.file->context();
  uint64_t sink = 0;
  for (auto _ : state) {
    for (const auto& bytes : l.records) {
      const Bytes data(bytes.data(), bytes.size());
      const EventFormat* ev = ctx.event_of(data);
      if (!ev) continue;
      for (const Field& f : ev->fields) {
        if (f.has(kFieldString))
          sink += f.read_string(data, ctx.endian).size();
        else if (f.has(kFieldDataLoc) || f.has(kFieldArray))
          sink += f.payload(data, ctx.endian).size();
        else
          sink += static_cast<uint64_t>(f.read_int(data, ctx.endian));
      }
    }
  }
  benchmark::DoNotOptimize(sink);
  state.SetItemsProcessed(static_cast<int64_t>(state.iterations() * l.records.size()));
}
BENCHMARK_CAPTURE(BM_FieldAccess, sched_irq_timer_syscalls, std::string("s1-k6.12-v7zstd-sched-irq-timer-syscalls"));
BENCHMARK_CAPTURE(BM_FieldAccess, all_events, std::string("s11-k6.12-v7zstd-all"));

// Looking a field up by name, as plugins do for each record they print.
void BM_FieldByName(benchmark::State& state) {
  Loaded l = load_recorded("s1-k6.12-v7zstd-sched-irq-timer-syscalls.dat");
  const EventFormat* ev = l.file ? l.file->context().event_by_name("sched", "sched_switch") : nullptr;
  if (!ev) {
    state.SkipWithError("fixture missing");
    return;
  }
  static const char* const kNames[] = {"prev_comm", "prev_pid", "prev_prio", "prev_state", "next_comm", "next_pid",
                                       "next_prio"};
  uint64_t sink = 0;
  for (auto _ : state)
    for (const char* n : kNames) sink += reinterpret_cast<uintptr_t>(ev->field(n));
  benchmark::DoNotOptimize(sink);
  state.SetItemsProcessed(static_cast<int64_t>(state.iterations()) * 7);
}
BENCHMARK(BM_FieldByName);

}  // namespace
}  // namespace tracebed::decode
