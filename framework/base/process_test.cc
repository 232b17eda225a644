#include "framework/base/process.h"

#include <sys/wait.h>
#include <unistd.h>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "framework/base/files.h"

namespace tracebed::base {
namespace {

namespace fs = std::filesystem;
using namespace std::chrono_literals;
using ::testing::HasSubstr;
using ::testing::StartsWith;

// Both ways of starting a child behave the same.
class RunProcess : public ::testing::TestWithParam<bool> {
 protected:
  ProcessOptions options(Output output = Output::capture) {
    ProcessOptions o;
    o.output = output;
    o.die_with_parent = GetParam();
    o.timeout = 30s;
    return o;
  }
};

TEST_P(RunProcess, CapturesStdoutAndStderrAndTheExitCode) {
  auto r = run_process({"sh", "-c", "echo out; echo err >&2; exit 3"}, options());
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_EQ(r->status, 3);
  EXPECT_FALSE(r->timed_out);
  EXPECT_EQ(r->output, "out\nerr\n");
  EXPECT_GT(r->pid, 0);
}

TEST_P(RunProcess, CapturesStdoutAloneOnRequest) {
  auto r = run_process({"sh", "-c", "echo out; echo err >&2"}, options(Output::capture_stdout));
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_EQ(r->output, "out\n");
}

TEST_P(RunProcess, ASignalIs128PlusItsNumber) {
  auto r = run_process({"sh", "-c", "kill -TERM $$"}, options());
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_EQ(r->status, 128 + SIGTERM);
}

TEST_P(RunProcess, AProgramThatCannotStartIsAnErrorNamingIt) {
  auto r = run_process({"tracebed-no-such-program"}, options());
  ASSERT_FALSE(r.ok());
  EXPECT_THAT(r.error().message, HasSubstr("cannot run tracebed-no-such-program"));
  auto o = options();
  o.cwd = "/tracebed-no-such-dir";
  r = run_process({"true"}, o);
  ASSERT_FALSE(r.ok());
  EXPECT_THAT(r.error().message, HasSubstr("No such file or directory"));
}

TEST_P(RunProcess, RunsInCwdWithStdinFromDevNull) {
  auto o = options();
  o.cwd = "/proc";
  auto r = run_process({"sh", "-c", "pwd; cat; echo end"}, o);
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_EQ(r->output, "/proc\nend\n");
}

// Output larger than the pipe and the read buffer arrives whole, in order,
// also through on_output; stream keeps nothing and drops stderr.
TEST_P(RunProcess, StreamsEveryByteOfALargeOutput) {
  const std::string script = "i=0; while [ $i -lt 20000 ]; do echo line-$i-xxxxxxxxxxxxxxxx; i=$((i+1)); done; echo gone >&2";
  std::string expected;
  for (int i = 0; i < 20000; ++i) expected += fmt::format("line-{}-xxxxxxxxxxxxxxxx\n", i);
  std::string seen;
  auto o = options(Output::stream);
  o.on_output = [&](std::string_view chunk) { seen += chunk; };
  auto r = run_process({"sh", "-c", script}, o);
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_EQ(r->output, "");
  EXPECT_EQ(seen.size(), expected.size());
  EXPECT_TRUE(seen == expected);
  seen.clear();
  o.output = Output::capture;
  r = run_process({"sh", "-c", script}, o);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->output, expected + "gone\n");
  EXPECT_EQ(seen, r->output);
}

TEST_P(RunProcess, LogsIntoAFile) {
  fs::path log = fs::path(::testing::TempDir()) / fmt::format("tracebed-process-test-{}.log", getpid());
  auto o = options(Output::to_file);
  o.log = log;
  auto r = run_process({"sh", "-c", "echo out; echo err >&2"}, o);
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_EQ(r->output, "");
  EXPECT_EQ(read_file(log).value(), "out\nerr\n");
  fs::remove(log);
}

TEST_P(RunProcess, KillsAtTheDeadlineEvenWithoutOutput) {
  for (Output out : {Output::capture, Output::to_stderr}) {
    auto o = options(out);
    o.timeout = 200ms;
    auto t0 = std::chrono::steady_clock::now();
    auto r = run_process({"sleep", "30"}, o);
    ASSERT_TRUE(r.ok()) << r.error().message;
    EXPECT_TRUE(r->timed_out);
    EXPECT_EQ(r->status, 128 + SIGKILL);
    EXPECT_LT(std::chrono::steady_clock::now() - t0, 10s);
  }
}

// A grandchild holding the pipe open does not hold us past the deadline.
TEST_P(RunProcess, AChildLeftHoldingTheOutputDoesNotHang) {
  auto o = options();
  o.timeout = 3s;  // long enough for a loaded machine to start sh
  auto t0 = std::chrono::steady_clock::now();
  auto r = run_process({"sh", "-c", "sleep 30 & echo started"}, o);
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_TRUE(r->timed_out);
  EXPECT_LT(std::chrono::steady_clock::now() - t0, 20s);
  EXPECT_THAT(r->output, StartsWith("started"));
}

TEST_P(RunProcess, MeasuresWhatTheChildCost) {
  auto r = run_process({"sh", "-c", "i=0; while [ $i -lt 20000 ]; do i=$((i+1)); done"}, options());
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_GT(r->wall.count(), 0);
  EXPECT_GT(r->cpu_seconds, 0);
  EXPECT_GT(r->max_rss_kib, 0);
}

TEST_P(RunProcess, OneCpuPinsTheChildOnly) {
  cpu_set_t before, after;
  ASSERT_EQ(sched_getaffinity(0, sizeof before, &before), 0);
  auto o = options();
  o.one_cpu = true;
  auto r = run_process({"sh", "-c", "grep Cpus_allowed_list /proc/self/status"}, o);
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_THAT(r->output, ::testing::MatchesRegex("Cpus_allowed_list:\\s+[0-9]+\n"));
  ASSERT_EQ(sched_getaffinity(0, sizeof after, &after), 0);
  EXPECT_TRUE(CPU_EQUAL(&before, &after));
}

INSTANTIATE_TEST_SUITE_P(Start, RunProcess, ::testing::Bool(),
                         [](const auto& info) { return info.param ? "fork" : "posix_spawn"; });

TEST(RunProcessWithTimeout, ATimeoutIsAnError) {
  auto r = run_process({"sleep", "30"}, 1s);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().message, "sleep did not finish within 1 s");
}

TEST(StartProcess, RunsWithoutWaitingAndWiresTheDescriptors) {
  int out[2];
  ASSERT_EQ(pipe(out), 0);
  auto pid = start_process({"sh", "-c", "read line; echo got $line; echo oops >&2"},
                           {.stdin_fd = kDevNull, .stdout_fd = out[1], .stderr_fd = kDevNull});
  close(out[1]);
  ASSERT_TRUE(pid.ok()) << pid.error().message;
  std::string text;
  char buf[256];
  for (ssize_t n; (n = read(out[0], buf, sizeof buf)) > 0;) text.append(buf, static_cast<size_t>(n));
  close(out[0]);
  int status = 0;
  ASSERT_EQ(waitpid(*pid, &status, 0), *pid);
  // stdin was /dev/null (read fails, line stays empty); stderr went nowhere.
  EXPECT_EQ(text, "got\n");
}

TEST(StartProcess, AProgramThatCannotStartIsAnErrorNamingIt) {
  auto pid = start_process({"tracebed-no-such-program"});
  ASSERT_FALSE(pid.ok());
  EXPECT_EQ(pid.error().message, "cannot start tracebed-no-such-program: No such file or directory");
}

TEST(FindProgram, SearchesPathAndTakesPathsAsTheyAre) {
  auto sh = find_program("sh");
  ASSERT_TRUE(sh.ok()) << sh.error().message;
  EXPECT_TRUE(sh->is_absolute());
  EXPECT_EQ(access(sh->c_str(), X_OK), 0);
  EXPECT_EQ(find_program("/usr/bin/env").value(), fs::path("/usr/bin/env"));
  auto missing = find_program("tracebed-no-such-program");
  ASSERT_FALSE(missing.ok());
  EXPECT_THAT(missing.error().message, HasSubstr("tracebed-no-such-program not found on PATH"));
}

}  // namespace
}  // namespace tracebed::base
