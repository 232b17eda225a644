// event-filter-function.tc: `.function` compares a pointer field with a
// function (by name or address): kmem_cache_free's call_site then lets
// through only the frees made from that function. And `.ustring` matches
// a string in user memory (openat's filename) against a glob.
#include <map>
#include <regex>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "framework/base/text.h"
#include "framework/testing/tracefs_fixture.h"

namespace tracebed::suites {
namespace {

const Feature kKmemCacheFree = Feature::event("kmem", "kmem_cache_free");
const Feature kOpenat = Feature::event("syscalls", "sys_enter_openat");
// The filter field modifiers of kernel/trace/trace_events_filter.c: no
// README line or file names them, so the release is all there is to ask.
// .ustring ("tracing: Add ustring operation to filtering string pointers")
// is taken to be there from 6.1 and .function from 6.2, with ftracetest's
// event-filter-function.tc; a stable series that carries one earlier
// (5.10 may have .ustring) skips here rather than fail.
const Feature kUstringModifier =
    Feature::since_release("event filter .ustring modifier (6.1 on; tracefs does not list it)", 6, 1);
const Feature kFunctionModifier =
    Feature::since_release("event filter .function modifier (6.2 on; tracefs does not list it)", 6, 2);

class FilterFunction : public TracefsTest {
 public:
  FilterFunction() : TracefsTest({kKmemCacheFree}) {}

 protected:
  Event frees() { return inst().event("kmem", "kmem_cache_free"); }
  // ftracetest's sample_events: the frees of an `ls`.
  std::vector<std::string> sample() {
    EXPECT_OK(inst().clear_trace());
    EXPECT_OK(frees().enable());
    EXPECT_OK(inst().set_tracing_on(true));
    sh("ls / > /dev/null");
    EXPECT_OK(inst().set_tracing_on(false));
    EXPECT_OK(frees().disable());
    return trace_lines(inst());
  }
  // The function `trace` names most often as call_site.
  static std::string most_frequent_caller(const std::vector<std::string>& lines) {
    std::map<std::string, int> by;
    std::regex site(R"(call_site=([^+ ]+)\+)");
    for (const std::string& l : lines) {
      std::smatch m;
      if (std::regex_search(l, m, site)) ++by[m[1]];
    }
    std::string best;
    for (const auto& [f, n] : by)
      if (best.empty() || n > by[best]) best = f;
    return best;
  }
  // With the filter set, a sample has frees, and each is from `func`;
  // the decoded records are as many as the lines.
  void ExpectOnlyFrom(const std::string& filter, const std::string& func) {
    SCOPED_TRACE(filter);
    ASSERT_OK(frees().set_filter(filter));
    std::vector<std::string> lines;
    for (int i = 0; i < 10 && lines.empty(); ++i) lines = sample();
    ASSERT_THAT(lines, Not(IsEmpty())) << "ten samples had no free from " << func;
    EXPECT_THAT(lines, Each(HasSubstr("call_site=" + func + "+")));
    EXPECT_THAT(decoded(frees()), SizeIs(lines.size()));
  }
};

TEST_F(FilterFunction, FunctionModifierMatchesCallSiteByNameAndAddress) {
  TRACEBED_COVERS("ftracetest: filter/event-filter-function.tc");
  TRACEBED_REQUIRE(kFunctionModifier);
  sample();
  std::string func = most_frequent_caller(sample());
  ASSERT_FALSE(func.empty()) << "no kmem_cache_free with a call_site in the sample";
  ExpectOnlyFrom("call_site.function == " + func, func);
  std::string address = sh("grep ' " + func + "$' /proc/kallsyms | head -1 | cut -d' ' -f1");
  ASSERT_FALSE(address.empty());
  ExpectOnlyFrom("call_site.function == 0x" + std::string(base::trim(address)), func);
  // A function that frees no slab object itself: no record at all.
  ASSERT_OK(frees().set_filter("call_site.function == schedule"));
  EXPECT_THAT(sample(), IsEmpty());
}

// .ustring reads openat's filename from the task's memory. The probe
// target opens paths in a directory of the test's (that need not exist:
// the syscall is entered all the same) between opens of another path: a
// middle glob on the directory passes every open of it and a full string
// passes the opens of one path, each as many times as the target says it
// opened them, and nothing of the other path.
TEST_F(FilterFunction, UstringGlobMatchesTheUserPathOnly) {
  TRACEBED_COVERS("ftracetest: filter/event-filter-function.tc");
  TRACEBED_REQUIRE(kOpenat);
  TRACEBED_REQUIRE(kUstringModifier);
  const std::string dir = "/tmp/" + unique("tbfilter");
  Event glob = inst().event("syscalls", "sys_enter_openat");
  ASSERT_OK(glob.set_filter("filename.ustring ~ \"*" + dir.substr(5) + "*\""));
  ASSERT_OK(glob.enable());
  Event full = another_instance().event("syscalls", "sys_enter_openat");
  ASSERT_OK(full.set_filter("filename.ustring == \"" + dir + "/b\""));
  ASSERT_OK(full.enable());
  std::vector<std::string> args{"open"};
  for (int i = 0; i < 7; ++i) {
    args.push_back(dir + "/a");
    args.push_back("/etc/tracebed/release");
    if (i < 4) args.push_back(dir + "/b");
  }
  ProbeRun run = run_target(args);
  size_t in_dir = 0, of_b = 0;
  for (const auto& line : run.lines_of("open")) {
    in_dir += line.at(0).starts_with(dir + "/");
    of_b += line.at(0) == dir + "/b";
  }
  ASSERT_EQ(in_dir, 11u);
  ASSERT_EQ(of_b, 4u);
  auto globbed = decoded(inst(), {{"syscalls", "sys_enter_openat"}});
  EXPECT_THAT(globbed, SizeIs(in_dir)) << "opens of " << dir << "/*";
  EXPECT_THAT(globbed, Each(FromPid(run.pid)));
  auto exact = decoded(another_instance(), {{"syscalls", "sys_enter_openat"}});
  EXPECT_THAT(exact, SizeIs(of_b)) << "opens of " << dir << "/b";
  EXPECT_THAT(exact, Each(FromPid(run.pid)));
}

}  // namespace
}  // namespace tracebed::suites
