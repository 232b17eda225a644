// Print-fmt speed: every record of a recorded fixture through its event's
// print fmt (items/s = records/s), and parsing all of a kernel's formats.
#include <benchmark/benchmark.h>

#include <memory>
#include <string>
#include <vector>

#include "framework/decode/print_fmt.h"
#include "framework/decode/recorded_for_benchmarks.h"
#include "framework/decode/trace_dat.h"
#include "framework/decode/trace_dat_writer.h"

namespace tracebed::decode {
namespace {

void BM_PrintFmtRecords(benchmark::State& state, const char* fixture) {
  Loaded l = load_recorded(fixture);
  if (l.records.empty()) {
    state.SkipWithError("fixture missing or unreadable");
    return;
  }
  TraceContext& ctx = l.file->context();
  std::string out;
  out.reserve(4096);
  for (auto _ : state) {
    for (const auto& bytes : l.records) {
      Record r;
      r.data = Bytes(bytes.data(), bytes.size());
      const EventFormat* ev = ctx.event_of(r.data);
      if (!ev || !ev->printer()) continue;
      out.clear();
      ev->printer()->format(r, *ev, ctx, out);
      benchmark::DoNotOptimize(out.data());
    }
  }
  state.SetItemsProcessed(state.iterations() * static_cast<int64_t>(l.records.size()));
}
BENCHMARK_CAPTURE(BM_PrintFmtRecords, s1_sched_irq_timer_syscalls, "s1-k6.12-v7zstd-sched-irq-timer-syscalls.dat");
BENCHMARK_CAPTURE(BM_PrintFmtRecords, s2_function_sched_kmem, "s2-k6.1-v6-function-sched-kmem.dat");

void BM_ParseAllFormats(benchmark::State& state) {
  auto contents = read_trace_dat_contents_file(kRecorded + "s4-k7.2-v7zstd-function_graph.dat");
  if (!contents.ok()) {
    state.SkipWithError(contents.error().message.c_str());
    return;
  }
  int64_t formats = 0;
  for (auto _ : state) {
    TraceContext ctx;
    for (const auto& sys : contents->systems)
      for (const auto& text : sys.formats) (void)ctx.add_event_format(sys.name, text, sys.name);
    formats += static_cast<int64_t>(ctx.events().size());
    benchmark::DoNotOptimize(ctx.events().data());
  }
  state.SetItemsProcessed(formats);
}
BENCHMARK(BM_ParseAllFormats);

}  // namespace
}  // namespace tracebed::decode
