// The function_graph tracer, with a graph function set first so only its
// calls are recorded (function_graph_fixture.h).
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "framework/tracefs/tracefs_text.h"
#include "suites/function_graph/function_graph_fixture.h"

namespace tracebed::suites {
namespace {

// The text after "|": the call with its indentation (two spaces per level).
std::string call_part(const std::string& line) {
  size_t bar = line.find("|  ");
  return bar == std::string::npos ? "" : line.substr(bar + 3);
}

size_t depth_of(const std::string& call) { return call.find_first_not_of(' ') / 2; }

TEST_F(FunctionGraph, GraphFunctionIsTheRootOfEveryCall) {
  auto lines = trace_vfs_read();
  ASSERT_THAT(lines, Not(IsEmpty()));
  EXPECT_THAT(lines, Contains(HasSubstr("vfs_read() {")));
  for (const std::string& l : lines) {
    std::string call = call_part(l);
    if (call.empty() || call.starts_with("}")) continue;  // a return, not a call
    if (depth_of(call) == 0) {
      EXPECT_THAT(call, HasSubstr("vfs_read")) << l;
    }
  }
}

// max_graph_depth bounds the depth.
TEST_F(FunctionGraph, MaxGraphDepthBoundsTheDepth) {
  TRACEBED_REQUIRE(features::max_graph_depth);
  if (!graph().files().has("max_graph_depth")) GTEST_SKIP() << "needs max_graph_depth in this instance";
  ASSERT_OK(graph().set_max_graph_depth(2));
  EXPECT_EQ(graph().max_graph_depth().value(), 2u);
  auto lines = trace_vfs_read();
  ASSERT_OK(graph().set_max_graph_depth(0));
  ASSERT_THAT(lines, Not(IsEmpty()));
  size_t deepest = 0;
  for (const std::string& l : lines) {
    std::string call = call_part(l);
    if (!call.empty()) deepest = std::max(deepest, depth_of(call));
  }
  EXPECT_EQ(deepest, 1u);  // depth 2: vfs_read and its direct callees
}

// A glob, so the compiler's clones (rw_verify_area.constprop.0, .part.0,
// .isra.0, which vfs_read calls on some builds) are left out too.
TEST_F(FunctionGraph, GraphNotraceHidesASubtree) {
  ASSERT_OK(graph().set_graph_notrace(std::vector<std::string>{"rw_verify_area*"}));
  auto lines = trace_vfs_read();
  ASSERT_OK(graph().set_graph_notrace({}));
  ASSERT_THAT(lines, Not(IsEmpty()));
  EXPECT_THAT(lines, Not(Contains(HasSubstr("rw_verify_area"))));
}

TEST_F(FunctionGraph, GraphFunctionReadsBack) {
  ASSERT_OK(graph().set_graph_function(std::vector<std::string>{"vfs_read", "vfs_write"}));
  auto fns = graph().graph_functions();
  ASSERT_OK(fns);
  EXPECT_THAT(*fns, Contains("vfs_read"));
  EXPECT_THAT(*fns, Contains("vfs_write"));
  ASSERT_OK(graph().set_graph_function({}));
}

}  // namespace
}  // namespace tracebed::suites
