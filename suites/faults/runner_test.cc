// The runner's extras: tool bundles and page streaming.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "framework/testing/assert_ok.h"
#include "framework/testing/guest_environment.h"
#include "framework/vm/guests/guest_stream.h"
#include "framework/vm/cache/cache.h"

namespace tracebed {
namespace {

using ::testing::HasSubstr;

// A dynamically linked host tool runs in the guest with the libraries ldd
// named, from /opt/tracebed.
TEST(Runner, ToolBundleRunsInTheGuest) {
  if (!vm::run_process({"trace-cmd", "--help"}, std::chrono::seconds(10)).ok())
    GTEST_SKIP() << "needs trace-cmd on the host";
  vm::GuestOptions options = testlib::environment().options();
  options.image.tools = {"trace-cmd"};
  auto g = vm::Guest::boot(options);
  ASSERT_OK(g);
  auto r = (*g)->sh("trace-cmd list -t");
  ASSERT_OK(r);
  EXPECT_EQ(r->exit_code, 0) << r->err;
  EXPECT_THAT(r->out, HasSubstr("nop"));
}

// run_streaming passes output on while the command still runs, keeps stdout
// and stderr apart, loses nothing past the agent's 12 MiB run capture, and
// returns the command's own status.
TEST(Runner, StreamedOutputArrivesWhileTheCommandRuns) {
  auto& g = testlib::guest();
  std::string out, err;
  bool first_before_end = false;
  auto started = std::chrono::steady_clock::now();
  auto r = vm::run_streaming(
      g, {"sh", "-c", "echo first; sleep 2; echo oops >&2; head -c 16777216 /dev/zero | tr '\\0' x; exit 7"},
      std::chrono::seconds(60),
      [&](std::string_view d) {
        if (out.empty()) first_before_end = std::chrono::steady_clock::now() - started < std::chrono::milliseconds(1800);
        out += d;
      },
      [&](std::string_view d) { err += d; });
  ASSERT_OK(r);
  EXPECT_EQ(r->exit_code, 7);
  EXPECT_FALSE(r->timed_out);
  EXPECT_TRUE(first_before_end) << "the first line came only after the command's sleep";
  ASSERT_EQ(out.size(), 6u + (16u << 20));
  EXPECT_EQ(out.substr(0, 6), "first\n");
  EXPECT_EQ(out.find_first_not_of('x', 6), std::string::npos);
  EXPECT_EQ(err, "oops\n");
}

TEST(Runner, StreamedCommandIsKilledAtItsTimeout) {
  auto r = vm::run_streaming(testlib::guest(), {"sleep", "30"}, std::chrono::seconds(1), {}, {});
  ASSERT_OK(r);
  EXPECT_TRUE(r->timed_out);
  EXPECT_EQ(r->signal, 9);
  auto missing = vm::run_streaming(testlib::guest(), {"no-such-command"}, std::chrono::seconds(10), {}, {});
  ASSERT_OK(missing);
  EXPECT_EQ(missing->exit_code, 127);
}

// stream_pages sends sub-buffers from every CPU as they fill.
TEST(Runner, PagesStreamWhileTheGuestTraces) {
  auto& g = testlib::guest();
  auto& a = g.agent();
  ASSERT_EQ(*a.write_file("/sys/kernel/tracing/trace", ""), 0);
  ASSERT_EQ(*a.write_file("/sys/kernel/tracing/tracing_on", "1"), 0);
  auto pid = a.spawn({"sh", "-c", "i=0; while [ $i -lt 3000 ]; do echo tracebed-stream-$i > "
                                  "/sys/kernel/tracing/trace_marker; i=$((i+1)); done"});
  ASSERT_OK(pid);
  std::vector<uint32_t> cpus;
  for (uint32_t c = 0; c < g.ncpus(); ++c) cpus.push_back(c);
  uint64_t seen = 0;
  auto total = a.stream_pages("/sys/kernel/tracing", cpus, 4096, std::chrono::seconds(3), 64u << 20,
                              [&](uint32_t cpu, std::string_view pages) {
                                EXPECT_LT(cpu, g.ncpus());
                                EXPECT_EQ(pages.size() % 4096, 0u);
                                seen += pages.size();
                              });
  ASSERT_OK(total);
  EXPECT_EQ(*total, seen);
  EXPECT_GT(seen, 0u);
  (void)a.kill(*pid, SIGKILL, std::chrono::seconds(5));
}

}  // namespace
}  // namespace tracebed

namespace tracebed {
namespace {

// Without virtio-serial the agent runs on the second serial port.
TEST(Runner, SerialPortFallbackCarriesTheAgent) {
  vm::GuestOptions options = testlib::environment().options();
  options.virtio_serial = false;
  auto g = vm::Guest::boot(options);
  ASSERT_OK(g);
  EXPECT_THAT((*g)->console_text(), HasSubstr("using /dev/ttyS1"));
  auto r = (*g)->run({"uname", "-r"});
  ASSERT_OK(r);
  EXPECT_EQ(r->out, (*g)->expected_release() + "\n");
  auto big = (*g)->agent().read_file("/proc/kallsyms", 1u << 20);
  ASSERT_OK(big);
  EXPECT_EQ(big->size(), 1u << 20);
}

}  // namespace
}  // namespace tracebed
