// Boot-time tracing (Documentation/trace/boottime-trace.rst,
// kernel/trace/trace_boot.c): the guest boots with
// fixtures/bootconfig/boottime.bconf appended to its initramfs, and tracefs
// must be as it said once userspace runs. The tests only read the boot
// state (the top level is never reset here); each compares with the
// bootconfig's own words or with what the kernel answers to the same
// request made at run time.
#include <algorithm>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "framework/base/install_layout.h"
#include "framework/tracefs/dynevent.h"
#include "framework/tracefs/tracefs_text.h"
#include "framework/vm/kernels/catalogue.h"
#include "framework/vm/kernels/kernel_build.h"
#include "framework/vm/cache/cache.h"
#include "framework/testing/tracefs_fixture.h"

namespace tracebed::suites {
namespace {

const std::filesystem::path kFixtures =
    base::shared_data("fixtures/bootconfig", TRACEBED_SOURCE_DIR, "fixtures/bootconfig");

std::string fixture(const char* name) {
  auto text = vm::read_text_file(kFixtures / name);
  return text ? *text : std::string();
}

// Declared before main(): GuestEnvironment boots with it.
const bool booted_with_bootconfig_ = testlib::boot_with_bootconfig(fixture("boottime.bconf"));

// What boottime.bconf sets up.
constexpr std::string_view kInstance = "tracebed_boot";
constexpr std::string_view kKprobe = "tracebed_vfs_read";

class Boottime : public TracefsTest {
 protected:
  void SetUpTest() override {
    ASSERT_TRUE(booted_with_bootconfig_);
    ASSERT_FALSE(fixture("boottime.bconf").empty()) << "cannot read " << (kFixtures / "boottime.bconf").string();
    auto proc = fs().ops().read("/proc/bootconfig");
    if (!proc.ok()) GTEST_SKIP() << "needs boot-time tracing: no /proc/bootconfig (CONFIG_BOOT_CONFIG)";
    proc_bootconfig_ = *proc;
    // BOOT_CONFIG without BOOTTIME_TRACING reads the file but applies no
    // ftrace.* key: ask the kernel's config, where the host has it.
    if (auto option = kernel_option("CONFIG_BOOTTIME_TRACING"); option && *option != "y")
      GTEST_SKIP() << "needs boot-time tracing: CONFIG_BOOTTIME_TRACING is " << *option << " in the kernel's config";
  }

  // A kernel config option's value ("n" when unset), or nothing when the
  // kernel came without a config.
  static std::optional<std::string> kernel_option(const std::string& name) {
    auto catalogue = vm::Catalogue::load();
    if (!catalogue) return std::nullopt;
    auto spec = catalogue->resolve(testlib::environment().options().kernel);
    if (!spec) return std::nullopt;
    auto files = vm::fetch_kernel(*catalogue, *spec);
    if (!files) return std::nullopt;
    auto text = vm::read_text_file(files->config);
    if (!text) return std::nullopt;
    auto values = vm::parse_kconfig_values(*text, files->config.string());
    if (!values) return std::nullopt;
    auto it = values->find(name);
    return it == values->end() ? "n" : it->second;
  }

  tracefs::Instance boot_instance() {
    auto i = fs().open_instance(kInstance);
    EXPECT_TRUE(i.ok()) << "the bootconfig's instance: " << i.error().message;
    return i.ok() ? std::move(*i) : fs().top();
  }

  std::string proc_bootconfig_;
};

// The kernel's own key = "value" list of what it parsed; the expected text
// is what the kernel's tools/bootconfig -l printed for the same file.
TEST_F(Boottime, ProcBootconfigReadsBackWhatWasSent) {
  std::string want = fixture("boottime.list");
  ASSERT_FALSE(want.empty());
  EXPECT_EQ(proc_bootconfig_, want);
}

TEST_F(Boottime, TracerAndFunctionFilterAsConfigured) {
  tracefs::Instance top = fs().top();
  auto tracer = top.current_tracer();
  ASSERT_OK(tracer);
  EXPECT_EQ(*tracer, "function");  // ftrace.tracer
  auto filter = top.ftrace_filter();
  ASSERT_OK(filter);
  EXPECT_THAT(filter->functions, ElementsAre("vfs_fsync"));  // ftrace.ftrace.filters
}

TEST_F(Boottime, TracingOnAndBufferSizeAsConfigured) {
  tracefs::Instance top = fs().top();
  auto on = top.tracing_on();
  ASSERT_OK(on);
  EXPECT_FALSE(*on);  // ftrace.tracing_on = 0
  // ftrace.buffer_size = 512K: the kernel rounds to whole sub-buffers, so
  // the expected size is what it makes of 512 KiB asked for at run time.
  ASSERT_OK(inst().set_buffer_size_kb(512));
  auto asked_now = inst().buffer_size();
  ASSERT_OK(asked_now);
  auto at_boot = top.buffer_size();
  ASSERT_OK(at_boot);
  ASSERT_FALSE(at_boot->cpus_differ());
  EXPECT_EQ(at_boot->effective_kb(), asked_now->effective_kb());
  EXPECT_GE(at_boot->effective_kb(), 512u);
}

TEST_F(Boottime, EventsEnabledAndFilteredAsConfigured) {
  tracefs::Instance top = fs().top();
  auto enabled = top.set_event();
  ASSERT_OK(enabled);
  EXPECT_THAT(*enabled, UnorderedElementsAre(tracefs::EventName{"sched", "sched_process_exec"},
                                             tracefs::EventName{"task", "task_newtask"}));
  auto filter = top.event("task", "task_newtask").filter();
  ASSERT_OK(filter);
  EXPECT_EQ(*filter, "pid < 128");
  auto unfiltered = top.event("sched", "sched_process_exec").filter();
  ASSERT_OK(unfiltered);
  EXPECT_EQ(*unfiltered, "none");
}

TEST_F(Boottime, InstanceHasItsKprobeEventAndClock) {
  tracefs::Instance boot = boot_instance();
  ASSERT_FALSE(boot.is_top());
  // The kprobe is defined for every instance but enabled only in its own.
  auto events = tracefs::read_dynamic_events(fs());
  ASSERT_OK(events);
  std::vector<std::string> lines;
  for (const auto& e : *events) lines.push_back(e.line);
  EXPECT_THAT(lines, Contains(HasSubstr(fmt::format("p:kprobes/{} vfs_read", kKprobe))));
  auto in_instance = boot.event("kprobes", kKprobe).enabled();
  ASSERT_OK(in_instance);
  EXPECT_TRUE(*in_instance);
  auto at_top = fs().top().event("kprobes", kKprobe).enabled();
  ASSERT_OK(at_top);
  EXPECT_FALSE(*at_top);
  auto clock = boot.trace_clock();
  ASSERT_OK(clock);
  EXPECT_EQ(clock->current, "global");
  // It has been recording since boot, and records reads made now: emptied
  // first, it holds the reads of a shell whose pid it printed (its `read`
  // takes /proc/version's first line with read(2)s; busybox's cat would
  // use sendfile, which is no vfs_read).
  ASSERT_OK(boot.clear_trace());
  const std::string pid(tracefs::trim(sh("sh -c 'echo $$; read l < /proc/version'")));
  size_t of_reader = 0;
  const std::vector<std::string> recorded = trace_lines(boot);
  for (const std::string& l : recorded)
    of_reader += l.find("-" + pid + " ") != std::string::npos && l.find(std::string(kKprobe) + ":") != std::string::npos;
  EXPECT_GE(of_reader, 2u) << "the shell (pid " << pid << ") read twice at least; the instance holds "
                        << ::testing::PrintToString(std::vector<std::string>(
                               recorded.begin(), recorded.begin() + std::min<size_t>(recorded.size(), 12)));
}

}  // namespace
}  // namespace tracebed::suites
