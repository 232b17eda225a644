// Guest costs: a cold boot to agent-ready, saving a booted guest as a
// snapshot and restoring one to agent-ready (framework/vm/guests/snapshot.h), an
// agent round trip for a small read, and guest -> host throughput of
// ring-buffer pages.
//
// Kernels come from $TRACEBED_BENCH_KERNELS (comma-separated, default
// debian-6.12), so CTest's smoke run boots one kernel; boot medians per kernel:
//   TRACEBED_BENCH_KERNELS=debian-5.10,debian-6.1 tracebed_vm_benchmarks
//     --benchmark_filter=Boot --benchmark_repetitions=5
// Restore medians over 20 restores:
//   tracebed_vm_benchmarks --benchmark_filter=Restore --benchmark_repetitions=20
#include <cstdlib>
#include <filesystem>
#include <map>
#include <memory>
#include <sstream>

#include <benchmark/benchmark.h>

#include "framework/vm/guests/guest.h"
#include "framework/vm/guests/snapshot.h"

namespace tracebed::vm {
namespace {

GuestOptions options_for(const std::string& kernel, bool snapshot = true) {
  GuestOptions o;
  o.kernel = kernel;
  o.snapshot = snapshot;
  return o;
}

// A command line of the benchmark's own (an unused kernel argument), so its
// snapshot is the benchmark's: "save" ones are removed after each save, the
// "restore" one is kept for the next run (one file per kernel).
GuestOptions own_snapshot_options(const std::string& kernel, const char* purpose) {
  GuestOptions o = options_for(kernel);
  o.cmdline_extra = fmt::format("tracebed.bench={}", purpose);
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
    auto g = Guest::boot(options_for(kernel, false));
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

// Each iteration boots cold and saves: the save's own time.
void BM_SnapshotSave(benchmark::State& state, std::string kernel) {
  GuestOptions o = own_snapshot_options(kernel, "save");
  for (auto _ : state) {
    auto g = Guest::boot(o);
    if (!g) {
      state.SkipWithError(g.error().message.c_str());
      return;
    }
    if ((*g)->save_seconds() <= 0) {
      state.SkipWithError("the guest was not saved (snapshots turned off?)");
      return;
    }
    state.SetIterationTime((*g)->save_seconds());
    state.counters["MiB"] = static_cast<double>(std::filesystem::file_size((*g)->snapshot_path())) / 1048576.0;
    state.PauseTiming();
    discard_snapshot(snapshot_files((*g)->snapshot_path().parent_path().filename().string()));
    (void)(*g)->stop();
    state.ResumeTiming();
  }
}

// QEMU start, state loaded, agent answering, clock and seed refreshed.
void BM_RestoreToAgentReady(benchmark::State& state, std::string kernel) {
  GuestOptions o = own_snapshot_options(kernel, "restore");
  for (auto _ : state) {
    auto g = Guest::boot(o);
    // The first guest of a fresh cache boots and saves: not a restore, and
    // not timed; the next one is.
    if (g && (*g)->boot_kind() == "boot") {
      state.PauseTiming();
      (void)(*g)->stop();
      g = Guest::boot(o);
      state.ResumeTiming();
    }
    if (!g || (*g)->boot_kind() != "restore") {
      state.SkipWithError(g ? "the guest booted cold instead of restoring" : g.error().message.c_str());
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
    benchmark::RegisterBenchmark(("SnapshotSave/" + k).c_str(), BM_SnapshotSave, k)
        ->UseManualTime()
        ->Unit(benchmark::kMillisecond)
        ->Iterations(1);
    benchmark::RegisterBenchmark(("RestoreToAgentReady/" + k).c_str(), BM_RestoreToAgentReady, k)
        ->UseManualTime()
        ->Unit(benchmark::kMillisecond)
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
