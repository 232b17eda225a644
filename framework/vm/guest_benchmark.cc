// Guest costs: boot to agent-ready, an agent round trip for a small read, and
// guest -> host throughput of ring-buffer pages.
//
// Kernels come from $TRACEBED_BENCH_KERNELS (comma-separated, default
// debian-6.12), so CTest's smoke run boots one kernel; boot medians per kernel:
//   TRACEBED_BENCH_KERNELS=debian-5.10,debian-6.1 tracebed_vm_benchmarks
//     --benchmark_filter=Boot --benchmark_repetitions=5
#include <cstdlib>
#include <map>
#include <memory>
#include <sstream>

#include <benchmark/benchmark.h>

#include "framework/vm/guest.h"

namespace tracebed::vm {
namespace {

GuestOptions options_for(const std::string& kernel) {
  GuestOptions o;
  o.kernel = kernel;
  return o;
}

std::vector<std::string> bench_kernels() {
  const char* env = std::getenv("TRACEBED_BENCH_KERNELS");
  std::stringstream ss(env && *env ? env : "debian-6.12");
  std::vector<std::string> out;
  for (std::string k; std::getline(ss, k, ',');)
    if (!k.empty()) out.push_back(k);
  return out;
}

// One long-lived guest per kernel for the round-trip and throughput cases.
Guest* shared_guest(const std::string& kernel, benchmark::State& state) {
  static std::map<std::string, std::unique_ptr<Guest>> guests;
  auto& g = guests[kernel];
  if (!g || !g->alive()) {
    auto booted = Guest::boot(options_for(kernel));
    if (!booted) {
      state.SkipWithError(booted.error().message.c_str());
      return nullptr;
    }
    g = std::move(booted).value();
  }
  return g.get();
}

void BM_BootToAgentReady(benchmark::State& state, std::string kernel) {
  for (auto _ : state) {
    auto g = Guest::boot(options_for(kernel));
    if (!g) {
      state.SkipWithError(g.error().message.c_str());
      return;
    }
    state.SetIterationTime((*g)->boot_seconds());
    state.PauseTiming();
    (void)(*g)->stop();
    state.ResumeTiming();
  }
}

void BM_AgentSmallRead(benchmark::State& state, std::string kernel) {
  Guest* g = shared_guest(kernel, state);
  if (!g) return;
  for (auto _ : state) {
    auto r = g->agent().read_file("/sys/kernel/tracing/tracing_on");
    if (!r) {
      state.SkipWithError(r.error().message.c_str());
      return;
    }
    benchmark::DoNotOptimize(r->data());
  }
}

// Fills every CPU's ring buffer (1 MiB each) with the function tracer, then
// drains every CPU's trace_pipe_raw to the host in large reads.
void BM_PagesGuestToHost(benchmark::State& state, std::string kernel) {
  Guest* g = shared_guest(kernel, state);
  if (!g) return;
  uint64_t bytes = 0;
  for (auto _ : state) {
    state.PauseTiming();
    auto fill = g->sh(
        "cd /sys/kernel/tracing && echo 0 > tracing_on && echo > trace && echo 1024 > buffer_size_kb && "
        "echo function > current_tracer && echo 1 > tracing_on && sleep 1 && echo 0 > tracing_on",
        std::chrono::seconds(300));
    if (!fill || !fill->ok()) {
      state.SkipWithError(fill ? fill->err.c_str() : fill.error().message.c_str());
      return;
    }
    state.ResumeTiming();
    for (uint32_t cpu = 0; cpu < g->ncpus(); ++cpu) {
      for (;;) {
        auto pages = g->agent().read_pages("/sys/kernel/tracing", cpu, 4096, 1024, std::chrono::milliseconds(0));
        if (!pages) {
          state.SkipWithError(pages.error().message.c_str());
          return;
        }
        if (pages->empty()) break;
        bytes += pages->size();
      }
    }
    state.PauseTiming();
    // Switching tracers clears the buffers: only after the pages are out.
    (void)g->sh("echo nop > /sys/kernel/tracing/current_tracer");
    state.ResumeTiming();
  }
  state.SetBytesProcessed(static_cast<int64_t>(bytes));
  state.counters["bytes"] = static_cast<double>(bytes);
}

const bool registered = [] {
  for (const auto& k : bench_kernels()) {
    benchmark::RegisterBenchmark(("BootToAgentReady/" + k).c_str(), BM_BootToAgentReady, k)
        ->UseManualTime()
        ->Unit(benchmark::kSecond)
        ->Iterations(1);
    benchmark::RegisterBenchmark(("AgentSmallRead/" + k).c_str(), BM_AgentSmallRead, k)
        ->UseRealTime()
        ->Unit(benchmark::kMicrosecond);
    benchmark::RegisterBenchmark(("PagesGuestToHost/" + k).c_str(), BM_PagesGuestToHost, k)
        ->UseRealTime()
        ->Unit(benchmark::kMillisecond)
        ->Iterations(1);
  }
  return true;
}();

}  // namespace
}  // namespace tracebed::vm
