// func_hotplug.tc: the function tracer keeps working while a CPU goes
// offline and comes back, and records on that CPU again afterwards. Only
// vfs_read is traced (the case traces everything: tens of seconds under
// TCG); the kernel's `trace` text is the count the decoded pages must match.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "suites/function/function_fixture.h"

namespace tracebed::suites {
namespace {

constexpr const char* kCpu1Online = "/sys/devices/system/cpu/cpu1/online";

TEST_F(Function, TracingSurvivesCpuHotplug) {
  TRACEBED_COVERS("ftracetest: ftrace/func_hotplug.tc");
  if (sh(std::string("test -w ") + kCpu1Online + " && cat " + kCpu1Online + " || echo none") != "1\n")
    GTEST_SKIP() << "needs CPU hotplug: no writable " << kCpu1Online << " with CPU 1 online (HOTPLUG_CPU)";
  ASSERT_OK(inst().set_ftrace_filter(kRead));
  ASSERT_OK(inst().set_tracer("function"));
  // Whatever fails below, CPU 1 comes back.
  struct Online {
    TracefsTest* t;
    ~Online() { (void)t->sh(std::string("echo 1 > ") + kCpu1Online); }
  } online{this};
  sh(std::string("echo 0 > ") + kCpu1Online);
  EXPECT_EQ(sh(std::string("cat ") + kCpu1Online), "0\n");
  sh("cat /proc/version > /dev/null; (echo forked; sleep 0.2) > /dev/null");
  sh(std::string("echo 1 > ") + kCpu1Online);
  EXPECT_EQ(sh(std::string("cat ") + kCpu1Online), "1\n");
  // The shell's read builtin calls read(2); cat into /dev/null may sendfile.
  for (int i = 0; i < 3; ++i) sh("taskset 2 sh -c 'read -r l < /proc/version'");
  ASSERT_OK(inst().set_tracing_on(false));
  size_t text = trace_lines(inst()).size();
  auto events = decoded_only({"ftrace", "function"});
  EXPECT_EQ(events.size(), text);
  size_t on_cpu1 = std::count_if(events.begin(), events.end(), [](const DecodedEvent& e) { return e.cpu == 1; });
  EXPECT_GE(on_cpu1, 3u) << "three reads pinned to CPU 1 after it came back";
  ASSERT_OK(inst().set_tracer("nop"));
}

}  // namespace
}  // namespace tracebed::suites
