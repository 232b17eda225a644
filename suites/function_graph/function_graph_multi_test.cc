// function_graph in several instances at once, each with its own filters
// (fgraph-multi.tc, fgraph-multi-filter.tc). What each traces is checked
// in its `trace`; what the kernel patched, in the top level's
// enabled_functions, against the functions available_filter_functions
// says each instance's globs select.
#include <algorithm>
#include <iterator>
#include <regex>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include <fmt/format.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "framework/base/text.h"
#include "suites/function_graph/function_graph_fixture.h"

namespace tracebed::suites {
namespace {

// Seen on debian-6.12: with function_graph in two instances (fgraph
// sub-ops, 6.9 on), stopping one leaves its functions in enabled_functions
// (the manager ops keeps the union) while the other still traces; what the
// other records is still only its own (checked apart). tracebed-7.2 does not
// do it; the upstream fix between the two was not identified, so the
// declaration stops at 7.2.
const KnownKernelBug kStaleGraphUnion{
    "stopping function_graph in one of two instances leaves its functions patched (enabled_functions keeps the "
    "union)",
    {"enabled_functions kept the stopped instance's functions"}, {7, 2}, "not seen on tracebed-7.2"};

class GraphInstances : public FunctionGraph {
 protected:
  void SetUpTest() override {
    TRACEBED_REQUIRE(features::dynamic_ftrace);
    auto tracers = inst().available_tracers();
    ASSERT_OK(tracers);
    if (std::find(tracers->begin(), tracers->end(), "function_graph") == tracers->end())
      GTEST_SKIP() << "needs function_graph in instances: not in instances/<name>/available_tracers";
  }
  // enabled_functions: the patched functions, "vfs_read (1) ..." each.
  // The count in parentheses is not compared: since fgraph sub-ops
  // (6.9), every instance's function_graph is one ftrace_ops.
  std::set<std::string> enabled() {
    std::set<std::string> out;
    auto text = fs().top().files().read("enabled_functions");  // read only: no reset needed
    EXPECT_OK(text);
    if (!text) return out;
    for (std::string_view line : base::split_lines(*text)) {
      auto words = base::split_words(line);
      if (words.size() >= 2 && words[1].starts_with("(")) out.emplace(words[0]);
    }
    return out;
  }
  // What this test added to enabled_functions.
  std::set<std::string> added() {
    std::set<std::string> out;
    for (const std::string& f : enabled())
      if (!baseline_.contains(f)) out.insert(f);
    return out;
  }
  // added() is `want`; a failure names the functions that differ.
  void ExpectAdded(const std::set<std::string>& want) {
    std::set<std::string> got = added(), extra, missing;
    std::set_difference(got.begin(), got.end(), want.begin(), want.end(), std::inserter(extra, extra.end()));
    std::set_difference(want.begin(), want.end(), got.begin(), got.end(), std::inserter(missing, missing.end()));
    EXPECT_THAT(extra, IsEmpty()) << "patched, not selected";
    EXPECT_THAT(missing, IsEmpty()) << "selected, not patched";
  }
  // After one of two instances stopped: `want` (the other's). Where the
  // stopped one's functions all stay patched (enabled_functions is still
  // `before`: kStaleGraphUnion), that is noted for the end of the test, which
  // fails with it unless the kernel is one the bug is declared for.
  void ExpectAddedAfterStop(const std::set<std::string>& want, const std::set<std::string>& before) {
    if (want != before && added() == before) {
      stale_ += fmt::format("{}: {} functions left patched\n", kStaleGraphUnion.signs.front(),
                            before.size() - want.size());
      return;
    }
    ExpectAdded(want);
  }
  // `in` alone runs function_graph on its filter: a read and a write in the
  // shell are recorded, each call line is a function `selects` holds, and
  // `called` (what the shell called that the filter keeps) is among them.
  void ExpectRecordsOnlyItsOwn(const Instance& in, const std::set<std::string>& selects, const std::string& called) {
    ASSERT_OK(in.clear_trace());
    ASSERT_OK(in.set_tracing_on(true));
    sh("read l < /proc/version; echo x > /dev/null");
    ASSERT_OK(in.set_tracing_on(false));
    std::vector<std::string> calls;
    for (const std::string& l : trace_lines(in)) {
      size_t bar = l.find('|');
      if (bar == std::string::npos || (l.find('{') == std::string::npos && l.find(';') == std::string::npos)) continue;
      std::string_view call = base::trim(std::string_view(l).substr(bar + 1));
      calls.emplace_back(call.substr(0, call.find('(')));
    }
    EXPECT_THAT(calls, Contains(called));
    for (const std::string& c : calls) EXPECT_TRUE(selects.contains(c)) << c << " is outside the instance's filter";
  }
  std::set<std::string> fresh(std::set<std::string> functions) {
    std::erase_if(functions, [&](const std::string& f) { return baseline_.contains(f); });
    return functions;
  }
  // function_graph on `in` with a filter and a notrace glob, not recording.
  void set_graph(const Instance& in, const std::string& filter, const std::string& notrace) {
    ASSERT_OK(in.set_tracing_on(false));
    ASSERT_OK(in.files().write("set_ftrace_filter", filter));
    ASSERT_OK(in.files().write("set_ftrace_notrace", notrace));
    ASSERT_OK(in.set_tracer("function_graph"));
  }
  std::set<std::string> baseline_;
  std::string stale_;  // kStaleGraphUnion's sign, when it showed
};

// The functions filter/notrace pairs select in available_filter_functions.
std::set<std::string> selected(const std::vector<std::string>& all,
                               const std::vector<std::pair<std::string, std::string>>& pairs) {
  std::set<std::string> out;
  for (const auto& [keep, drop] : pairs) {
    std::regex k(keep), d(drop);
    for (const std::string& f : all)
      if (std::regex_search(f, k) && !std::regex_search(f, d)) out.insert(f);
  }
  return out;
}

TEST_F(GraphInstances, EachInstanceTracesOnlyItsOwnFilter) {
  TRACEBED_COVERS("ftracetest: ftrace/fgraph-multi.tc");
  auto third = fs().create_instance(tracefs::unique_instance_name("tracebed-graph"));
  ASSERT_OK(third);
  struct Case {
    const Instance* in;
    const char* filter;
    const char* match;
  };
  const Case cases[] = {{&inst(), "vfs_*", "vfs_"}, {&another_instance(), "schedule*", "schedule"},
                        {&*third, "*sys_read*", "sys_read"}};
  for (const Case& c : cases) {
    ASSERT_OK(c.in->files().write("set_ftrace_filter", c.filter));
    ASSERT_OK(c.in->set_tracer("function_graph"));
  }
  sh("cat /proc/version > /dev/null; sleep 0.05");
  for (const Case& c : cases) {
    SCOPED_TRACE(c.filter);
    ASSERT_OK(c.in->set_tracing_on(false));
    std::vector<std::string> calls;
    for (const std::string& l : trace_lines(*c.in))
      if (l.find('{') != std::string::npos || l.find(';') != std::string::npos) calls.push_back(l);
    EXPECT_THAT(calls, Not(IsEmpty()));
    EXPECT_THAT(calls, Each(HasSubstr(c.match)));
    ASSERT_OK(c.in->set_tracer("nop"));
  }
}

// Two instances' filters patch their union, and turning one instance off
// leaves exactly the other's, which goes on recording its own functions
// and no others.
TEST_F(GraphInstances, EnabledFunctionsAreTheUnionOfTheInstancesFilters) {
  TRACEBED_COVERS("ftracetest: ftrace/fgraph-multi-filter.tc");
  auto all = fs().available_filter_functions();
  ASSERT_OK(all);
  baseline_ = enabled();
  const Instance& a = inst();
  const Instance& b = another_instance();
  const std::pair<std::string, std::string> a_sel{"^vfs_", "read"}, b_sel{"^vfs_", "write"};
  const auto selects_a = selected(*all, {a_sel}), selects_b = selected(*all, {b_sel});
  // Functions something else had patched already are left out.
  const auto only_a = fresh(selects_a), only_b = fresh(selects_b);
  const auto both = fresh(selected(*all, {a_sel, b_sel}));
  ASSERT_THAT(only_a, Not(IsEmpty()));

  // Either instance first: the same sets.
  struct Side {
    const Instance* in;
    const char* notrace;
    const std::set<std::string>* alone;
    const std::set<std::string>* selects;
    const char* called;  // by the shell's read and write, kept by the filter
  };
  const Side sides[2] = {{&a, "*read*", &only_a, &selects_a, "vfs_write"},
                         {&b, "*write*", &only_b, &selects_b, "vfs_read"}};
  for (int first : {0, 1}) {
    const Side &x = sides[first], &y = sides[1 - first];
    SCOPED_TRACE(::testing::Message() << "first " << x.notrace);
    set_graph(*x.in, "vfs_*", x.notrace);
    ExpectAdded(*x.alone);
    set_graph(*y.in, "vfs_*", y.notrace);
    ExpectAdded(both);
    ASSERT_OK(x.in->set_tracer("nop"));
    ExpectAddedAfterStop(*y.alone, both);
    // With the union left stale the other instance records the stopped
    // one's functions too (seen on 6.12): part of the same bug.
    if (stale_.empty()) ExpectRecordsOnlyItsOwn(*y.in, *y.selects, y.called);
    ASSERT_OK(y.in->set_tracer("nop"));
    EXPECT_THAT(added(), IsEmpty());
  }
  if (!stale_.empty()) {
    TRACEBED_SKIP_IF_KNOWN_BUG(kStaleGraphUnion, stale_);
    ADD_FAILURE() << stale_;
  }
}

// Two instances that trace every function but their own notrace lists:
// the ftrace_ops managing both leaves unpatched only what both exclude
// (ftrace.c ftrace_startup_subops: with no filter on either, the notrace
// hashes are intersected). A excludes vfs_read and do_sys_openat2, B
// do_sys_openat2 and vfs_write: enabled_functions has vfs_read and
// vfs_write and not do_sys_openat2, and a shell's read and write are in
// the instance that keeps each (vfs_write in A, vfs_read in B), never in
// the one that excludes it. Each instance patches every function: tens of
// seconds under TCG.
TEST_F(GraphInstances, NotraceOfTwoInstancesTracingEverythingLeavesOnlyTheCommonPart) {
  auto all = fs().available_filter_functions();
  ASSERT_OK(all);
  for (const char* f : {"vfs_read", "vfs_write", "do_sys_openat2"})
    ASSERT_THAT(*all, Contains(f)) << "available_filter_functions lacks " << f;
  const Instance& a = inst();
  const Instance& b = another_instance();
  struct Side {
    const Instance* in;
    std::vector<std::string> notrace;
    const char* kept;     // called by the shell, traced here
    const char* dropped;  // called by the shell, in this instance's notrace
  };
  const Side sides[2] = {{&a, {"vfs_read", "do_sys_openat2"}, "vfs_write", "vfs_read"},
                         {&b, {"do_sys_openat2", "vfs_write"}, "vfs_read", "vfs_write"}};
  for (const Side& side : sides) {
    ASSERT_OK(side.in->set_tracing_on(false));
    ASSERT_OK(side.in->set_buffer_size_kb(4096));
    ASSERT_OK(side.in->set_ftrace_notrace(side.notrace));
    ASSERT_OK(side.in->set_tracer("function_graph"));
  }
  const std::set<std::string> patched = enabled();
  EXPECT_TRUE(patched.contains("vfs_read")) << "A alone excludes it";
  EXPECT_TRUE(patched.contains("vfs_write")) << "B alone excludes it";
  EXPECT_FALSE(patched.contains("do_sys_openat2")) << "both exclude it";
  for (const Side& side : sides) ASSERT_OK(side.in->set_tracing_on(true));
  sh("read l < /proc/version; echo x > /dev/null");
  for (const Side& side : sides) ASSERT_OK(side.in->set_tracing_on(false));
  auto calls_of = [&](const Instance& in) {
    std::set<std::string> out;
    for (const std::string& l : trace_lines(in)) {
      size_t bar = l.find('|');
      if (bar == std::string::npos || (l.find('{') == std::string::npos && l.find(';') == std::string::npos)) continue;
      std::string_view call = base::trim(std::string_view(l).substr(bar + 1));
      out.emplace(call.substr(0, call.find('(')));
    }
    return out;
  };
  for (const Side& side : sides) {
    SCOPED_TRACE(side.kept);
    const std::set<std::string> calls = calls_of(*side.in);
    EXPECT_TRUE(calls.contains(side.kept)) << calls.size() << " functions called";
    EXPECT_FALSE(calls.contains(side.dropped));
    EXPECT_FALSE(calls.contains("do_sys_openat2"));
  }
  for (const Side& side : sides) ASSERT_OK(side.in->set_tracer("nop"));
}

}  // namespace
}  // namespace tracebed::suites
