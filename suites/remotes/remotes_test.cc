// The test trace remote (kernel/trace/remote_test.c): each write of a
// number to remotes/test/write_event records one selftest event with that
// id in the remote's own ring buffer. The tests write ids and read them
// back through `trace` (non-consuming) and `trace_pipe` (consuming), as
// ftracetest's remotes/ cases do: the ids written are the expected values.
#include <regex>

#include <fmt/format.h>

#include "framework/tracefs/tracefs_text.h"
#include "framework/testing/tracefs_fixture.h"

namespace tracebed::suites {
namespace {

const Feature kRemoteTest = Feature::file("the test trace remote", "remotes/test/write_event");

class Remotes : public TracefsTest {
 public:
  Remotes() : TracefsTest({kRemoteTest}) {}

 protected:
  // remotes/functions setup_remote: stopped, emptied, 7 KiB, only selftest on.
  void SetUpTest() override {
    for (auto [rel, value] : {std::pair{"tracing_on", "0"}, {"trace", ""}, {"buffer_size_kb", "7"},
                              {"events/enable", "0"}, {"events/test/selftest/enable", "1"}, {"tracing_on", "1"}})
      ASSERT_OK(write(rel, value));
  }
  void TearDown() override {
    if (fs().ops().exists(path("tracing_on"))) {
      (void)write("tracing_on", "0");
      (void)write("trace", "");
    }
    TracefsTest::TearDown();
  }
  std::string path(std::string_view rel) { return fmt::format("{}/remotes/test/{}", fs().root(), rel); }
  Status write(std::string_view rel, std::string_view value) {
    auto r = fs().ops().write(path(rel), value, false);
    if (!r) return r.error();
    if (*r != 0) return Error{fmt::format("writing '{}' to {}: errno {}", value, path(rel), *r)};
    return {};
  }
  std::string read(std::string_view rel) {
    auto r = fs().ops().read(path(rel));
    SCOPED_TRACE(std::string(rel));
    EXPECT_OK(r);
    return r ? *r : "";
  }
  void write_ids(uint64_t first, uint64_t last) {
    for (uint64_t id = first; id <= last; ++id) ASSERT_OK(write("write_event", std::to_string(id)));
  }
  // "[cpu] ts: selftest id=N" lines: their ids, checking the stamps increase.
  std::vector<uint64_t> ids(const std::string& text) {
    static const std::regex line(R"(\[\d+\]\s*(\d+\.\d+): \w+ id=(\d+))");
    std::vector<uint64_t> out;
    double prev = -1;
    for (auto l : tracefs::split_lines(text)) {
      std::string s(l);
      std::smatch m;
      if (!std::regex_search(s, m, line)) continue;
      double ts = std::stod(m[1]);
      EXPECT_GT(ts, prev) << "time stamps do not increase at " << s;
      prev = ts;
      out.push_back(std::stoull(m[2]));
    }
    return out;
  }
  static std::vector<uint64_t> range(uint64_t first, uint64_t last) {
    std::vector<uint64_t> v;
    for (uint64_t i = first; i <= last; ++i) v.push_back(i);
    return v;
  }
};

// The buffer is allocated ("loaded") while tracing is on and freed when it
// is off; its size can be changed while unloaded.
TEST_F(Remotes, BufferIsLoadedOnlyWhileTracing) {
  TRACEBED_COVERS("ftracetest: remotes/buffer_size.tc");
  ASSERT_OK(write("tracing_on", "0"));
  EXPECT_THAT(read("buffer_size_kb"), HasSubstr("(unloaded)"));
  ASSERT_OK(write("buffer_size_kb", "4096"));
  ASSERT_OK(write("tracing_on", "1"));
  EXPECT_THAT(read("buffer_size_kb"), HasSubstr("(loaded)"));
  EXPECT_THAT(read("buffer_size_kb"), HasSubstr("4096"));
  ASSERT_OK(write("tracing_on", "0"));
  ASSERT_OK(write("buffer_size_kb", "7"));
}

// `trace` reads without consuming; trace_pipe consumes; writing `trace`
// empties it. Every id written is read back once, in order.
TEST_F(Remotes, TraceShowsEveryIdAndTracePipeConsumesThem) {
  TRACEBED_COVERS("ftracetest: remotes/trace.tc");
  write_ids(1, 8);
  EXPECT_EQ(ids(read("trace")), range(1, 8));
  EXPECT_EQ(ids(read("trace")), range(1, 8)) << "a second read of trace lost records";
  sh(fmt::format("timeout 1 cat {} > /dev/null || true", path("trace_pipe")));
  EXPECT_THAT(ids(read("trace")), IsEmpty()) << "trace_pipe did not consume";
  write_ids(16, 32);
  EXPECT_EQ(ids(read("trace")), range(16, 32));
  ASSERT_OK(write("trace", ""));
  EXPECT_THAT(ids(read("trace")), IsEmpty());
  write_ids(1, 8);
  EXPECT_EQ(ids(read("trace")), range(1, 8));
}

// trace_pipe gives each id once and then nothing.
TEST_F(Remotes, TracePipeGivesEachIdOnce) {
  TRACEBED_COVERS("ftracetest: remotes/trace_pipe.tc");
  write_ids(1, 200);
  std::string piped = sh(fmt::format("timeout 2 cat {} || true", path("trace_pipe")));
  EXPECT_EQ(ids(piped), range(1, 200));
  std::string again = sh(fmt::format("timeout 1 cat {} || true", path("trace_pipe")));
  EXPECT_THAT(ids(again), IsEmpty());
}

// Writing `trace` resets the buffer, also after it overflowed; a new
// event is then the only one.
TEST_F(Remotes, ResetEmptiesTheBufferAndKeepsItWritable) {
  TRACEBED_COVERS("ftracetest: remotes/reset.tc");
  ASSERT_OK(write("write_event", "123456"));
  EXPECT_EQ(ids(read("trace")), std::vector<uint64_t>{123456});
  for (int round = 0; round < 2; ++round) {
    SCOPED_TRACE(round ? "after an overflow" : "after one event");
    if (round) sh(fmt::format("i=0; while [ $i -lt 3000 ]; do echo 1 > {}; i=$((i+1)); done", path("write_event")));
    ASSERT_OK(write("trace", ""));
    EXPECT_THAT(ids(read("trace")), IsEmpty());
    ASSERT_OK(write("write_event", "7890"));
    EXPECT_EQ(ids(read("trace")), std::vector<uint64_t>{7890});
  }
}

// remotes/unloading.tc: the remote's buffer stays allocated while anything
// needs it (tracing on, a trace_pipe reader, unread events) and is freed as
// soon as nothing does. Each step reads buffer_size_kb's "(loaded)" /
// "(unloaded)" suffix, the kernel's own word for it.
TEST_F(Remotes, BufferIsFreedOnceNoWriterReaderOrEventNeedsIt) {
  TRACEBED_COVERS("ftracetest: remotes/unloading.tc");
  auto state = [&] {
    std::string size = read("buffer_size_kb");
    if (size.find("(unloaded)") != std::string::npos) return std::string("unloaded");
    return size.find("(loaded)") != std::string::npos ? std::string("loaded") : size;
  };
  EXPECT_EQ(state(), "loaded") << "tracing on, no reader";
  ASSERT_OK(write("tracing_on", "0"));
  EXPECT_EQ(state(), "unloaded") << "tracing off, no reader, no events";

  // A trace_pipe reader loads it; once the reader is gone (waited for, so
  // its file is released) nothing holds it. The loop waits for the reader's
  // open, at most 5 s; a buffer that never loads prints "(unloaded)".
  std::string both = sh(fmt::format(
      "cat {pipe} > /dev/null & p=$!; i=0; "
      "while ! grep -q '(loaded)' {size} && [ $i -lt 50 ]; do sleep 0.1; i=$((i+1)); done; "
      "cat {size}; kill $p; wait $p 2>/dev/null; cat {size}",
      fmt::arg("pipe", path("trace_pipe")), fmt::arg("size", path("buffer_size_kb"))));
  auto lines = tracefs::split_lines(both);
  ASSERT_THAT(lines, SizeIs(2)) << both;
  EXPECT_THAT(std::string(lines[0]), HasSubstr("(loaded)")) << "while a reader has trace_pipe open";
  EXPECT_THAT(std::string(lines[1]), HasSubstr("(unloaded)")) << "after the reader exited";

  // An event written while tracing keeps it loaded after tracing stops,
  // and the event is there to read; clearing frees it.
  ASSERT_OK(write("tracing_on", "1"));
  ASSERT_OK(write("write_event", "4242"));
  ASSERT_OK(write("tracing_on", "0"));
  EXPECT_EQ(state(), "loaded") << "tracing off with an unread event";
  EXPECT_EQ(ids(read("trace")), std::vector<uint64_t>{4242});
  ASSERT_OK(write("trace", ""));
  EXPECT_EQ(state(), "unloaded") << "after clearing the last event";
}

// A CPU taken offline for a test, put back online when it ends, pass or fail.
class OfflineCpu {
 public:
  OfflineCpu(TracefsTest& test, int cpu) : test_(test), cpu_(cpu) {}
  OfflineCpu(const OfflineCpu&) = delete;
  OfflineCpu& operator=(const OfflineCpu&) = delete;
  ~OfflineCpu() { online(); }
  void online() {
    if (offline_) test_.sh(fmt::format("echo 1 > /sys/devices/system/cpu/cpu{}/online", cpu_));
    offline_ = false;
  }
  // False when the kernel refuses (no CPU hotplug, the last CPU).
  bool offline() {
    offline_ = test_.sh(fmt::format("echo 0 > /sys/devices/system/cpu/cpu{}/online 2>/dev/null && echo off || true",
                                    cpu_)) == "off\n";
    return offline_;
  }

 private:
  TracefsTest& test_;
  int cpu_;
  bool offline_ = false;
};

class RemotesHotplug : public Remotes {
 protected:
  // Writes 1..8, reads them from `trace` and `trace_pipe` of `dir`
  // ("" or "per_cpu/cpuN/"): remotes/hotplug.tc check_read.
  void check_read(const std::string& dir = "", const std::string& write_prefix = "") {
    SCOPED_TRACE(dir.empty() ? "all CPUs" : dir);
    if (write_prefix.empty()) {
      write_ids(1, 8);
    } else {
      sh(write_prefix + " sh -c 'i=1; while [ $i -le 8 ]; do echo $i > " + path("write_event") + "; i=$((i+1)); done'");
    }
    EXPECT_EQ(ids(read(dir + "trace")), range(1, 8));
    std::string piped = sh(fmt::format("timeout 1 cat {} || true", path(dir + "trace_pipe")));
    EXPECT_EQ(ids(piped), range(1, 8)) << "trace_pipe";
  }
};

// remotes/hotplug.tc: the remote's buffer with a CPU offline, reloaded
// while it is missing, and with it back: every id written is read once,
// in order; written from the CPU that came back, its own per_cpu files
// hold them.
TEST_F(RemotesHotplug, BufferFollowsACpuGoingAndComingBack) {
  TRACEBED_COVERS("ftracetest: remotes/hotplug.tc");
  // The highest CPU with an online switch (cpu0 often has none).
  std::string last = sh("ls -d /sys/devices/system/cpu/cpu[0-9]*/online 2>/dev/null | "
                        "sed 's|.*/cpu\\([0-9]*\\)/online|\\1|' | sort -n | tail -1");
  if (last.empty()) GTEST_SKIP() << "needs CPU hotplug: no /sys/devices/system/cpu/cpu*/online";
  int cpu = std::stoi(last);
  ASSERT_THAT(read("buffer_size_kb"), HasSubstr("(loaded)"));
  OfflineCpu off(*this, cpu);
  if (!off.offline()) GTEST_SKIP() << "needs CPU hotplug: cpu" << cpu << " refused to go offline";
  {
    SCOPED_TRACE("cpu" + std::to_string(cpu) + " offline");
    check_read();
  }
  {
    SCOPED_TRACE("reloaded without cpu" + std::to_string(cpu));
    ASSERT_OK(write("tracing_on", "0"));
    ASSERT_OK(write("trace", ""));
    EXPECT_THAT(read("buffer_size_kb"), HasSubstr("(unloaded)"));
    ASSERT_OK(write("tracing_on", "1"));
    EXPECT_THAT(read("buffer_size_kb"), HasSubstr("(loaded)"));
    check_read();
  }
  off.online();
  SCOPED_TRACE("cpu" + std::to_string(cpu) + " back");
  EXPECT_THAT(read("buffer_size_kb"), HasSubstr("(loaded)"));
  check_read();
  check_read(fmt::format("per_cpu/cpu{}/", cpu), fmt::format("taskset -c {}", cpu));
}

}  // namespace
}  // namespace tracebed::suites
