// Tracing's kernel command line parameters
// (Documentation/admin-guide/kernel-parameters.txt,
// Documentation/trace/debugging.rst), as the kernel applied them: the
// guest boots with kParameters, and each test checks what one of them did,
// against the parameter's own words.
#include <algorithm>
#include <numeric>
#include <regex>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "framework/testing/tracefs_fixture.h"

namespace tracebed::suites {
namespace {

// 4 MiB of memory kept by name at boot, a trace instance mapped onto it
// (the persistent ring buffer), and a second instance that is a copy of
// the first as the boot found it (a backup: read-only, freed once read).
// Then small regions around the smallest a boot-mapped instance takes
// (BootMappedInstanceHasAtLeastTwoSubBuffersAndAReader).
constexpr const char* kParameters =
    "traceoff_on_warning=1 reserve_mem=4M:4096:tbmem trace_instance=tbboot@tbmem trace_instance=tbbackup=tbboot "
    "reserve_mem=24K:4096:tbe24 trace_instance=tbe24@tbe24 reserve_mem=32K:4096:tbe32 trace_instance=tbe32@tbe32 "
    "reserve_mem=36K:4096:tbe36 trace_instance=tbe36@tbe36 reserve_mem=40K:4096:tbe40 trace_instance=tbe40@tbe40 "
    "reserve_mem=128K:4096:tbe128 trace_instance=tbe128@tbe128 "
    "trace_options=sym-addr,noannotate trace_event=sched:sched_process_exec,signal:signal_deliver,sched:sched_process_free";
// Declared before main(): GuestEnvironment boots with it.
const bool booted_with_parameters_ = testlib::boot_with_cmdline(kParameters);

class BootParams : public TracefsTest {
 protected:
  void SetUpTest() override { ASSERT_TRUE(booted_with_parameters_); }

  // An instance the command line made, or a skip naming what the kernel
  // lacks (reserve_mem and boot-mapped instances are 6.12's).
  std::optional<tracefs::Instance> boot_instance(const std::string& name) {
    if (!fs().ops().exists(fs().root() + "/instances/" + name)) return std::nullopt;
    auto i = fs().open_instance(name);
    EXPECT_OK(i);
    if (!i.ok()) return std::nullopt;
    return std::move(*i);
  }

  // The kernel's log since boot.
  std::string kernel_log() { return sh("dmesg"); }
};

#define TRACEBED_BOOT_INSTANCE(var, name)                                                              \
  auto var = boot_instance(name);                                                                      \
  if (!var)                                                                                            \
  GTEST_SKIP() << "needs boot-mapped trace instances (reserve_mem=, trace_instance=NAME@MEM, 6.12+): " \
                  "the command line's instance "                                                       \
               << name << " is not in tracefs"

// traceoff_on_warning=1 (trace.c stop_trace_on_warning: any value but 0
// and off) turns it on, as the sysctl shows.
TEST_F(BootParams, TraceoffOnWarningOneTurnsItOn) {
  EXPECT_EQ(sh("cat /proc/sys/kernel/traceoff_on_warning"), "1\n");
}

// trace_options=sym-addr,noannotate (trace.c apply_trace_boot_options,
// run once the top level's buffers exist): the top level's options then
// have sym-addr set, which is off by default, and annotate cleared, which
// is on; an option the command line did not name (print-parent) keeps
// its default. Read through fs().top(): the fixture's top() would put the
// defaults back afterwards, and then the next test would see them.
TEST_F(BootParams, TraceOptionsSetsAndClearsTheOptionsItNames) {
  const tracefs::Instance top = fs().top();
  EXPECT_EQ(top.files().read("options/sym-addr").value(), "1\n");
  EXPECT_EQ(top.files().read("options/annotate").value(), "0\n");
  EXPECT_EQ(top.files().read("options/print-parent").value(), "1\n");
  const std::vector<std::string> listed = trace_lines(top.files().read("trace_options").value());
  EXPECT_THAT(listed, ::testing::IsSupersetOf({"sym-addr", "noannotate", "print-parent"}));
}

// trace_event= with three events (trace_events.c __early_set_events,
// which walks the list once early and once more when the events'
// directories exist, putting back each comma it cut): all three are
// enabled at the top level, and the rest of their systems is not.
TEST_F(BootParams, TraceEventEnablesEveryEventItNames) {
  const tracefs::Instance top = fs().top();
  for (const char* event : {"sched/sched_process_exec", "signal/signal_deliver", "sched/sched_process_free"}) {
    EXPECT_EQ(top.files().read(fmt::format("events/{}/enable", event)).value(), "1\n") << event;
  }
  EXPECT_EQ(top.files().read("events/sched/sched_switch/enable").value(), "0\n");
  EXPECT_EQ(top.files().read("events/signal/signal_generate/enable").value(), "0\n");
}

// A backup instance is read-only (trace_array_is_readonly): its systems
// have no enable or filter file (trace_events.c event_subsystem_dir),
// where the instance it copies has both.
TEST_F(BootParams, ReadOnlyBackupHasNoSystemEnableOrFilter) {
  TRACEBED_BOOT_INSTANCE(boot, "tbboot");
  TRACEBED_BOOT_INSTANCE(backup, "tbbackup");
  EXPECT_TRUE(boot->files().has("events/sched/enable"));
  EXPECT_TRUE(boot->files().has("events/sched/filter"));
  EXPECT_TRUE(backup->files().has("events/sched/sched_switch/format"));
  EXPECT_FALSE(backup->files().has("events/sched/enable"));
  EXPECT_FALSE(backup->files().has("events/sched/filter"));
  EXPECT_FALSE(backup->files().has("events/sched/sched_switch/enable"));
}

// A boot-mapped instance's per-CPU buffer_meta (ring_buffer.c rbm_show):
// a head of four lines, then one line per sub-buffer, "buffer[i]: N
// (commit: C)", the N a permutation of 0..nr_subbufs-1 (the order of the
// sub-buffers in the ring), the head and commit sub-buffers among them,
// and (where the kernel shows them) the bytes committed at least what 300
// markers pinned to that CPU wrote.
TEST_F(BootParams, BootMappedBufferMetaListsEverySubBufferOnce) {
  TRACEBED_BOOT_INSTANCE(boot, "tbboot");
  const int cpu = boot->cpus().value().front();
  sh(fmt::format("taskset {:x} sh -c 'i=0; while [ $i -lt 300 ]; do echo tbmeta-$i > {}; i=$((i+1)); done'",
                 1u << cpu, boot->path("trace_marker")));
  auto meta = boot->files().read(fmt::format("per_cpu/cpu{}/buffer_meta", cpu));
  ASSERT_OK(meta);
  std::vector<std::string> lines = trace_lines(*meta);
  ASSERT_GE(lines.size(), 4u) << *meta;
  const std::regex head("(head_buffer|commit_buffer|subbuf_size|nr_subbufs):\\s+(-?[0-9]+)");
  std::map<std::string, long> h;
  for (size_t i = 0; i < 4; ++i) {
    std::smatch m;
    ASSERT_TRUE(std::regex_match(lines[i], m, head)) << "line " << i << ": " << lines[i];
    h[m[1]] = std::stol(m[2]);
  }
  ASSERT_EQ(h.size(), 4u) << *meta;
  const long n = h["nr_subbufs"];
  ASSERT_GT(n, 2);
  ASSERT_EQ(lines.size(), static_cast<size_t>(4 + n)) << "a line per sub-buffer after the head\n" << *meta;
  EXPECT_GE(h["subbuf_size"], 4096);
  EXPECT_EQ(h["subbuf_size"] % 4096, 0);
  // Newer kernels add "(commit: C)"; 6.12 prints the index alone.
  const std::regex entry("buffer\\[([0-9]+)\\]:\\s+([0-9]+)(?: \\(commit: (-?[0-9]+)\\))?");
  bool commits_shown = false;
  std::vector<long> order;
  long committed = 0;
  for (long i = 0; i < n; ++i) {
    std::smatch m;
    const std::string& l = lines[static_cast<size_t>(4 + i)];
    ASSERT_TRUE(std::regex_match(l, m, entry)) << l;
    EXPECT_EQ(std::stol(m[1]), i) << l;
    order.push_back(std::stol(m[2]));
    if (m[3].matched) {
      commits_shown = true;
      committed += std::stol(m[3]);
    }
  }
  std::vector<long> sorted = order, all(static_cast<size_t>(n));
  std::sort(sorted.begin(), sorted.end());
  std::iota(all.begin(), all.end(), 0L);
  EXPECT_EQ(sorted, all) << "the sub-buffers' order is not a permutation of 0.." << n - 1;
  for (const char* which : {"head_buffer", "commit_buffer"}) {
    EXPECT_GE(h[which], 0) << which;
    EXPECT_LT(h[which], n) << which;
  }
  // Each marker is at least its text, "tbmeta-N\n" (8 bytes and more), and
  // an event header: the commits cover them unless they wrapped.
  if (commits_shown) {
    EXPECT_GE(committed, 300 * 8) << *meta;
  }
}

// A boot-mapped ring buffer needs two sub-buffers and the reader's on
// every CPU, laid out page-aligned after the meta data and the module
// scratch area (ring_buffer.c alloc_buffer: the count from the region's
// size, then one fewer while the aligned layout overflows it, refused
// below three). Of regions of 24, 32, 36, 40 and 128 KiB, each instance
// the kernel made has at least three sub-buffers on each CPU in its
// buffer_meta, each was mapped (the log says so), and there are some of
// each, made and not. (Two CPUs: the scratch area takes 8 KiB, so 36
// KiB counts three sub-buffers that do not fit aligned, and is refused.)
TEST_F(BootParams, BootMappedInstanceHasAtLeastTwoSubBuffersAndAReader) {
  TRACEBED_BOOT_INSTANCE(boot, "tbboot");
  const std::string log = kernel_log();
  std::vector<std::string> made, refused;
  for (const char* name : {"tbe24", "tbe32", "tbe36", "tbe40", "tbe128"}) {
    SCOPED_TRACE(name);
    // The region was reserved and mapped; the ring buffer decides the rest.
    EXPECT_TRUE(std::regex_search(log, std::regex(fmt::format("mapped boot instance {} at physical memory", name))))
        << "the log's lines naming it:\n" << sh(fmt::format("dmesg | grep -e {} -e 'boot instance' || true", name));
    auto in = boot_instance(name);
    if (!in) {
      refused.push_back(name);
      continue;
    }
    made.push_back(name);
    for (int cpu : in->cpus().value()) {
      auto meta = in->files().read(fmt::format("per_cpu/cpu{}/buffer_meta", cpu));
      ASSERT_OK(meta);
      std::smatch m;
      ASSERT_TRUE(std::regex_search(*meta, m, std::regex("nr_subbufs:\\s+([0-9]+)"))) << *meta;
      EXPECT_GE(std::stol(m[1]), 3) << "CPU " << cpu << ":\n" << *meta;
    }
  }
  EXPECT_THAT(made, Not(IsEmpty())) << "no region was large enough";
  EXPECT_THAT(refused, Not(IsEmpty())) << "no region was too small: made " << ::testing::PrintToString(made);
}

// The backup instance is a copy of tbboot's memory as the boot found it:
// the ring buffer's checks of a previous boot's meta data ran on it
// (rb_cpu_meta_valid, then rb_meta_validate_events). CPU 0's part, which
// tbboot had set up by then, is found whole ("is from previous boot!"),
// with no sub-buffer, head page or array called invalid. (A CPU brought
// up after the boot instances were made had no buffer in tbboot yet: its
// copied head is "out of range", and that part starts empty.)
TEST_F(BootParams, BackupOfABootMappedInstanceIsValidatedWhole) {
  TRACEBED_BOOT_INSTANCE(backup, "tbbackup");
  const std::string log = kernel_log();
  std::set<int> whole;
  const std::regex from_previous("Ring buffer meta \\[([0-9]+)\\] is from previous boot!");
  for (auto it = std::sregex_iterator(log.begin(), log.end(), from_previous); it != std::sregex_iterator(); ++it)
    whole.insert(std::stoi((*it)[1]));
  EXPECT_THAT(whole, Contains(0)) << "CPUs whose copied meta data the ring buffer took as a previous boot's\n" << log;
  for (const char* bad : {"invalid head page", "invalid buffer page", "array out of range", "array has duplicates",
                          "commit page not found"})
    EXPECT_THAT(log, Not(HasSubstr(bad)));
}

// A backup instance read to its end goes away by itself (trace.c: the
// last reader's close queues its autoremove work, which destroys it): a
// read of its empty trace_pipe returns at once, and within seconds the
// instance is no longer in tracefs.
TEST_F(BootParams, BackupInstanceGoesAwayOnceReadOut) {
  TRACEBED_BOOT_INSTANCE(backup, "tbbackup");
  const std::string dir = backup->path("");
  sh("timeout 20 cat " + backup->path("trace_pipe") + " > /dev/null");
  EXPECT_EQ(sh(fmt::format("i=0; while [ -d {0} ] && [ $i -lt 50 ]; do sleep 0.2; i=$((i+1)); done; "
                           "[ -d {0} ] && echo there || echo gone",
                           dir)),
            "gone\n")
      << "the read-out backup instance is still in tracefs after 10 s";
}

}  // namespace
}  // namespace tracebed::suites
