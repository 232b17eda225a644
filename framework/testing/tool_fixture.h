// ToolTest: the fixture of the suites that run a userspace tool in the
// guest (trace-cmd, rtla, perf) and check what it says against the kernel's
// own files and our decoder. Every failure names the tool's version, the
// kernel and the command line, so a report from CI says where to look:
//
//   class Rtla : public ToolTest {
//     void SetUpTest() override {
//       use_tool({"/opt/tracebed/bin/rtla"}, host_tool_version(kHostRtla, "rtla version", "rtla"));
//     }
//   };
//   TEST_F(Rtla, ...) {
//     ToolRun r = tool({"osnoise", "top", "-d", "5s"});
//     ASSERT_TRUE(r.ok);
//     EXPECT_EQ(..., ...) << where(r.cmdline);
//   }
#pragma once

#include <chrono>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "framework/testing/tracefs_fixture.h"

namespace tracebed::testlib {

// What a tool printed, and how it is shown: "perf record -e sched:sched_switch ...".
struct ToolRun {
  std::string cmdline;
  std::string out;
  std::string err;
  bool ok = false;       // it ran and exited 0
  bool started = false;  // the guest ran it (else the failure is already reported)
  int status = 0;        // as a shell reports it: the exit code, or 128 + signal
  bool timed_out = false;
};

class ToolTest : public TracefsTest {
 public:
  using TracefsTest::TracefsTest;

 protected:
  // The argv that runs the tool in the guest (its path, or a loader and its
  // arguments) and what the tool says of itself; stamped on the result as
  // the property "tool". Called from SetUpTest.
  void use_tool(std::vector<std::string> command, std::string version);
  const std::string& tool_version() const { return version_; }

  // "trace-cmd version 3.1.6 on debian-6.12 (6.12.…): `trace-cmd record …`"
  std::string where(std::string_view cmdline) const;

  // Runs the tool with `args` in the guest; a failure to run or an exit
  // other than 0 fails the test, naming the command line, the status and
  // both outputs.
  ToolRun tool(const std::vector<std::string>& args, std::chrono::seconds timeout = std::chrono::seconds(240));
  // The same without judging the exit: for a test that first looks at why
  // the tool refused (a kernel that lacks what it needs), then calls
  // expect_ran. A run that cannot start still fails the test.
  ToolRun try_tool(const std::vector<std::string>& args, std::chrono::seconds timeout = std::chrono::seconds(240));
  // tool()'s judgment: exit 0, else a failure with the status and both outputs.
  void expect_ran(const ToolRun& run) const;

 private:
  std::vector<std::string> command_;
  std::string name_;
  std::string version_;
};

// The first line of `path --version` (run on the host) that contains
// `marker`, trimmed; `fallback` when there is none.
std::string host_tool_version(std::string_view path, std::string_view marker, std::string fallback);

// What a tool in the guest says of itself beside where it came from:
// "perf version 6.12.117 from linux-perf 6.12.117-1 (trixie)", the first
// line of `COMMAND --version` (or "NAME (version unknown)"); printed to
// stderr with the kernel it runs on.
std::string guest_tool_version(std::vector<std::string> command, std::string_view name, const std::string& package);

// `s` as one shell word: as it is when plain, else in single quotes.
std::string shell_word(std::string_view s);

// What `actual` lacks and what it has beyond `expected`, the first 20 of each.
std::string set_diff(const std::set<std::string>& expected, const std::set<std::string>& actual);

}  // namespace tracebed::testlib
