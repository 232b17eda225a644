// The function tracer in a fresh instance per test, shared by the suite's
// files. Every test sets a function filter before the tracer: patching
// every call site takes seconds under TCG and records more than a test can
// read back.
#pragma once

#include <algorithm>
#include <string>
#include <vector>

#include "framework/testing/tracefs_fixture.h"

namespace tracebed::suites {

class Function : public TracefsTest {
 public:
  Function() = default;
  // A fixture whose tests need more than the function tracer.
  explicit Function(std::vector<tracefs::Feature> more) : TracefsTest(std::move(more)) {}

 protected:
  void SetUpTest() override {
    TRACEBED_REQUIRE(features::function_tracer);
    TRACEBED_REQUIRE(features::dynamic_ftrace);
    auto tracers = inst().available_tracers();
    ASSERT_OK(tracers);
    if (std::find(tracers->begin(), tracers->end(), "function") == tracers->end())
      GTEST_SKIP() << "needs the function tracer in instances: not in instances/<name>/available_tracers";
  }
  // Functions every `cat` of a file goes through.
  static inline const std::vector<std::string> kRead{"vfs_read"};
};

}  // namespace tracebed::suites
