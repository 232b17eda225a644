// Decoding speed: one sub-buffer at a time for several event mixes, whole
// recorded files through the merged stream, and the cross-CPU merge for 2
// to 64 CPUs (items/s = events/s).
#include <benchmark/benchmark.h>

#include <string>
#include <vector>

#include "framework/decode/page_reader.h"
#include "framework/decode/recorded_for_benchmarks.h"

namespace tracebed::decode {
namespace {

// Every sub-buffer of a recorded fixture's top-level buffer, all CPUs.
struct Pages {
  std::vector<uint8_t> bytes;
  uint32_t page_size = 4096;
  PageLayout layout;
};

Pages fixture_pages(const std::string& name) {
  Pages p;
  auto contents = read_trace_dat_contents_file(kRecorded + name + ".dat");
  if (!contents.ok() || contents->buffers.empty()) return p;
  p.page_size = contents->page_size;
  p.layout = PageLayout{contents->endian, 8};
  for (const auto& cpu : contents->buffers[0].cpus) p.bytes.insert(p.bytes.end(), cpu.pages.begin(), cpu.pages.end());
  return p;
}

// Sub-buffer decoding alone, per event mix (items/s = events/s, bytes/s =
// sub-buffer bytes/s).
void BM_PageReader(benchmark::State& state, const std::string& name) {
  const Pages pages = fixture_pages(name);
  if (pages.bytes.empty()) {
    state.SkipWithError("fixture missing");
    return;
  }
  int64_t events = 0;
  uint64_t sink = 0;
  for (auto _ : state) {
    for (size_t off = 0; off + pages.page_size <= pages.bytes.size(); off += pages.page_size) {
      PageReader r;
      if (!r.load(Bytes(pages.bytes).subspan(off, pages.page_size), pages.layout).ok()) continue;
      PageEvent ev;
      while (r.next(ev) == PageStep::event) {
        sink += ev.ts + ev.payload.size();
        ++events;
      }
    }
  }
  benchmark::DoNotOptimize(sink);
  state.SetItemsProcessed(events);
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations()) * static_cast<int64_t>(pages.bytes.size()));
}
BENCHMARK_CAPTURE(BM_PageReader, sched_irq_timer_syscalls, std::string("s1-k6.12-v7zstd-sched-irq-timer-syscalls"));
BENCHMARK_CAPTURE(BM_PageReader, function_sched_kmem, std::string("s2-k6.1-v6-function-sched-kmem"));
BENCHMARK_CAPTURE(BM_PageReader, kprobes_marker, std::string("s3-k5.10-v7none-kprobes-marker"));
BENCHMARK_CAPTURE(BM_PageReader, all_events, std::string("s11-k6.12-v7zstd-all"));
BENCHMARK_CAPTURE(BM_PageReader, function_graph, std::string("s4-k7.2-v7zstd-function_graph"));

// Streams every record of `dat` per iteration; a stream that does not
// start is the benchmark's error.
void stream_each_iteration(benchmark::State& state, TraceDat& dat) {
  int64_t events = 0;
  uint64_t sink = 0;
  for (auto _ : state) {
    auto n = stream_records(dat, [&](const Record& r) { sink += r.ts + r.data.size(); });
    if (!n.ok()) {
      state.SkipWithError(n.error().message.c_str());
      return;
    }
    events += *n;
  }
  benchmark::DoNotOptimize(sink);
  state.SetItemsProcessed(events);
}

void BM_Stream(benchmark::State& state, const std::string& name) {
  auto dat = TraceDat::open(kRecorded + name + ".dat");
  if (!dat.ok()) {
    state.SkipWithError(dat.error().message.c_str());
    return;
  }
  stream_each_iteration(state, **dat);
}
BENCHMARK_CAPTURE(BM_Stream, v6_uncompressed, std::string("s2-k6.1-v6-function-sched-kmem"));
BENCHMARK_CAPTURE(BM_Stream, v7_zstd, std::string("s1-k6.12-v7zstd-sched-irq-timer-syscalls"));

// Many CPUs: s3's CPU 0 pages on every CPU, stamps staggered by 1 ns per
// CPU, written once to a temporary file.
void BM_StreamManyCpus(benchmark::State& state) {
  const int ncpu = static_cast<int>(state.range(0));
  TraceDatWriteOptions format;
  auto contents = read_trace_dat_contents_file(kRecorded + "s3-k5.10-v7none-kprobes-marker.dat", &format);
  if (!contents.ok() || contents->buffers.empty() || contents->buffers[0].cpus.empty()) {
    state.SkipWithError("fixture missing");
    return;
  }
  auto& cpus = contents->buffers[0].cpus;
  const std::vector<uint8_t> pages = cpus[0].pages;
  cpus.clear();
  for (int i = 0; i < ncpu; ++i) {
    TraceDatCpuData c;
    c.cpu = i;
    c.pages = pages;
    for (size_t off = 0; off + 8 <= c.pages.size(); off += contents->page_size) c.pages[off] += static_cast<uint8_t>(i);
    cpus.push_back(std::move(c));
  }
  contents->cpu_count = static_cast<uint32_t>(ncpu);
  const TempTrace trace("tracebed_bench_cpus_" + std::to_string(ncpu) + ".dat", *contents, format);
  if (trace.path().empty()) {
    state.SkipWithError("cannot write the trace");
    return;
  }
  auto dat = TraceDat::open(trace.path());
  if (!dat.ok()) {
    state.SkipWithError(dat.error().message.c_str());
    return;
  }
  stream_each_iteration(state, **dat);
}
BENCHMARK(BM_StreamManyCpus)->Arg(2)->Arg(4)->Arg(8)->Arg(16)->Arg(32)->Arg(64);

}  // namespace
}  // namespace tracebed::decode
