// The function_graph tracer, with a graph function set first so only its
// calls are recorded (function_graph_fixture.h).
#include <set>
#include <string>

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
// The same read traced first without it shows the subtree (rw_verify_area
// and the LSM hook under it), so its absence is the notrace's doing; the
// rest of vfs_read's graph (the /proc reader) is still there.
TEST_F(FunctionGraph, GraphNotraceHidesASubtree) {
  if (traceable({"rw_verify_area"}).empty()) GTEST_SKIP() << "needs rw_verify_area in available_filter_functions";
  // Without an LSM, security_file_permission is an inline stub.
  const bool hook = !traceable({"security_file_permission"}).empty();
  auto whole = trace_vfs_read();
  ASSERT_THAT(whole, Contains(HasSubstr("rw_verify_area"))) << "the subtree without graph_notrace";
  if (hook) {
    ASSERT_THAT(whole, Contains(HasSubstr("security_file_permission")));
  }
  ASSERT_OK(graph().set_graph_notrace(std::vector<std::string>{"rw_verify_area*"}));
  auto lines = trace_vfs_read();
  ASSERT_OK(graph().set_graph_notrace({}));
  EXPECT_THAT(lines, Contains(HasSubstr("vfs_read() {")));
  // The rest of vfs_read's graph: a callee outside the subtree that the
  // first run showed (the readers of /proc or of the agent's port).
  std::set<std::string> outside;
  for (const std::string& l : whole) {
    std::string call = call_part(l);
    size_t name_at = call.find_first_not_of(' ');
    if (name_at == std::string::npos || depth_of(call) != 1) continue;
    std::string name = call.substr(name_at, call.find('(', name_at) - name_at);
    if (!name.starts_with("rw_verify_area")) outside.insert(name);
  }
  ASSERT_THAT(outside, Not(IsEmpty())) << "vfs_read called nothing traced beside rw_verify_area";
  size_t kept = 0;
  for (const std::string& l : lines)
    for (const std::string& name : outside) kept += call_part(l).find(name + "(") != std::string::npos;
  EXPECT_GT(kept, 0u) << "none of vfs_read's other callees is left: " << ::testing::PrintToString(outside);
  EXPECT_THAT(lines, Not(Contains(HasSubstr("rw_verify_area"))));
  EXPECT_THAT(lines, Not(Contains(HasSubstr("security_file_permission")))) << "a call under the notrace function";
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
