// The fixture of the tracefs guest suites.
//
// Every test gets a fresh instance of the guest's tracefs (inst()), removed
// after it, pass or fail. A test that needs the top level (function_graph
// on kernels without it in instances, global files) calls top(): the
// fixture then saves the knobs ftracetest leaves alone and, after the test,
// runs ftracetest's reset and puts those knobs back.
//
//   TEST_F(TracefsTest, MarkerIsRecorded) {
//     ASSERT_OK(inst().write_marker("hello"));
//     EXPECT_THAT(trace_lines(inst()), Contains(HasSubstr("hello")));
//   }
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "framework/testing/guest_environment.h"
#include "framework/tracefs/features.h"
#include "framework/tracefs/require.h"
#include "framework/tracefs/reset.h"
#include "framework/tracefs/tracefs.h"

// Asserts a Status/Result is ok, printing the error (the kernel's words).
#define ASSERT_OK(expr)                                            \
  do {                                                             \
    const auto& tracebed_ok_ = (expr);                                  \
    ASSERT_TRUE(tracebed_ok_.ok()) << tracebed_ok_.error().message; \
  } while (0)
#define EXPECT_OK(expr)                                            \
  do {                                                             \
    const auto& tracebed_ok_ = (expr);                                  \
    EXPECT_TRUE(tracebed_ok_.ok()) << tracebed_ok_.error().message; \
  } while (0)

namespace tracebed::suites {

class TracefsTest : public ::testing::Test {
 public:
  // The guest's tracefs and its features, probed once per test binary.
  static tracefs::Tracefs& fs();
  static const tracefs::Features& features();

  // Runs a shell command in the guest; fails the test when it fails.
  std::string sh(const std::string& script);
  // Runs a program in the guest by exec (one sched_process_exec each; the
  // guest's busybox sh runs applets such as sleep without exec).
  std::string run(std::vector<std::string> argv);

 protected:
  void SetUp() override;
  void TearDown() override;

  tracefs::Instance& inst() { return *inst_; }
  // The top level, reset after the test.
  tracefs::Instance& top();
  // A second fresh instance, removed after the test.
  tracefs::Instance& another_instance();

  // The lines of `trace` without the "#" header.
  std::vector<std::string> trace_lines(const tracefs::Instance& inst);
  // The same of a `trace` text already read.
  static std::vector<std::string> trace_lines(std::string_view trace);

 private:
  std::optional<tracefs::Instance> inst_;
  std::optional<tracefs::Instance> other_;
  std::optional<tracefs::Instance> top_;
  std::optional<tracefs::Knobs> top_knobs_;
};

}  // namespace tracebed::suites
