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
  sample();
  std::string func = most_frequent_caller(sample());
  ASSERT_FALSE(func.empty()) << "no kmem_cache_free with a call_site in the sample";
  auto refused = frees().files().try_write("filter", "call_site.function == " + func);
  ASSERT_OK(refused);
  if (*refused == EINVAL) GTEST_SKIP() << "needs .function in event filters: the kernel refused call_site.function";
  ExpectOnlyFrom("call_site.function == " + func, func);
  std::string address = sh("grep ' " + func + "$' /proc/kallsyms | head -1 | cut -d' ' -f1");
  ASSERT_FALSE(address.empty());
  ExpectOnlyFrom("call_site.function == 0x" + std::string(base::trim(address)), func);
  // A function that frees no slab object itself: no record at all.
  ASSERT_OK(frees().set_filter("call_site.function == schedule"));
  EXPECT_THAT(sample(), IsEmpty());
}

TEST_F(FilterFunction, UstringGlobMatchesTheUserPathOnly) {
  TRACEBED_COVERS("ftracetest: filter/event-filter-function.tc");
  TRACEBED_REQUIRE(kOpenat);
  const std::string dir = "/tmp/" + unique("tbfilter");
  sh("mkdir -p " + dir);
  Event open = inst().event("syscalls", "sys_enter_openat");
  auto refused = open.files().try_write("filter", "filename.ustring ~ \"*" + dir.substr(5) + "*\"");
  ASSERT_OK(refused);
  if (*refused == EINVAL) GTEST_SKIP() << "needs .ustring in event filters: the kernel refused filename.ustring";
  ASSERT_OK(open.enable());
  sh("ls /bin/sh > /dev/null");
  EXPECT_THAT(trace_lines(inst()), IsEmpty()) << "an open of /bin/sh passed";
  sh("ls " + dir + " > /dev/null");
  ASSERT_OK(inst().set_tracing_on(false));
  EXPECT_THAT(decoded(open), Not(IsEmpty())) << "the open of " << dir;
  sh("rmdir " + dir);
}

}  // namespace
}  // namespace tracebed::suites
