// set_ftrace_filter as a list (func-filter-glob.tc, func_set_ftrace_file.tc)
// and as function probes (func-filter-stacktrace.tc, func_event_triggers.tc).
// Expected lists come from the kernel's available_filter_functions,
// filtered here with a regex that says what each glob means.
#include <algorithm>
#include <cstdint>
#include <map>
#include <regex>
#include <set>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "framework/base/text.h"
#include "suites/function/function_fixture.h"

namespace tracebed::suites {
namespace {

const Feature kFullGlob = Feature::readme("full glob matching", "glob-matching-pattern");

// The names of available_filter_functions a regex matches, in its order.
std::vector<std::string> matching(const std::vector<std::string>& names, const std::string& re) {
  std::regex r(re);
  std::vector<std::string> out;
  for (const std::string& n : names)
    if (std::regex_search(n, r)) out.push_back(n);
  return out;
}

// The function names a set_ftrace_filter text lists (first word of each
// line, up to a ':'), sorted and unique; comment lines left out.
std::vector<std::string> listed_names(std::string_view text) {
  std::set<std::string> names;
  for (std::string_view line : base::split_lines(text)) {
    if (line.empty() || line.find('#') != std::string_view::npos) continue;
    std::string_view first = base::split_words(line).at(0);
    names.emplace(first.substr(0, first.find(':')));
  }
  return {names.begin(), names.end()};
}

std::vector<std::string> sorted_unique(std::vector<std::string> v) {
  std::sort(v.begin(), v.end());
  v.erase(std::unique(v.begin(), v.end()), v.end());
  return v;
}

struct GlobCase {
  const char* glob;
  const char* regex;  // ftracetest's grep over the first column
  bool full_glob;     // needs "glob-matching-pattern" in README
};
constexpr GlobCase kGlobs[] = {
    {"*schedule", "^.*schedule$", false},   {"*schedule*", "^.*schedule.*$", false},
    {"schedule*", "^schedule.*$", false},   {"*pin*lock", "^.*pin.*lock$", false},
    {"mutex*unl*", "^mutex.*unl.*", false}, {"sch*ule", "^sch.*ule$", true},
    {"[Ss]y[Ss]_*", "^[Ss]y[Ss]_.*$", true}, {"sch?dule", "^sch.dule$", true},
};

const Feature kFilterFunctionsAddrs =
    Feature::file("available_filter_functions_addrs", "available_filter_functions_addrs");

// available_filter_functions_addrs (6.5+, ftrace.c ftrace_avail_addrs_open)
// lists the functions of available_filter_functions, in the same order,
// each with the address of its ftrace call site: where /proc/kallsyms puts
// a function of that name, or a few bytes past it (an ENDBR first).
TEST_F(Function, FilterFunctionsAddrsListsEachFunctionAtItsCallSite) {
  TRACEBED_REQUIRE(kFilterFunctionsAddrs);
  auto names = fs().available_filter_functions();
  ASSERT_OK(names);
  auto text = fs().ops().read(fs().root() + "/available_filter_functions_addrs");
  ASSERT_OK(text);
  auto kallsyms = fs().ops().read("/proc/kallsyms");
  ASSERT_OK(kallsyms);
  std::multimap<std::string, uint64_t> symbols;
  for (std::string_view line : base::split_lines(*kallsyms)) {
    auto w = base::split_words(line);
    if (w.size() >= 3) symbols.emplace(std::string(w[2]), std::stoull(std::string(w[0]), nullptr, 16));
  }
  std::vector<std::string> listed;
  size_t placed = 0, checked = 0;
  for (std::string_view line : base::split_lines(*text)) {
    auto w = base::split_words(line);
    if (w.size() < 2) continue;
    listed.emplace_back(w[1]);
    const uint64_t addr = std::stoull(std::string(w[0]), nullptr, 16);
    auto [from, to] = symbols.equal_range(std::string(w[1]));
    if (from == to) continue;  // a name kallsyms keeps only with a suffix
    ++checked;
    placed += std::any_of(from, to, [&](const auto& s) { return addr >= s.second && addr < s.second + 16; });
  }
  EXPECT_EQ(listed, *names) << "the same functions as available_filter_functions, in its order";
  ASSERT_GT(checked, names->size() / 2) << "kallsyms names most of them";
  EXPECT_EQ(placed, checked) << "addresses away from their function's symbol";
}

// Every glob form selects exactly the functions the regex finds, in the
// order the kernel lists them.
TEST_F(Function, EveryGlobFormSelectsExactlyItsFunctions) {
  TRACEBED_COVERS("ftracetest: ftrace/func-filter-glob.tc");
  auto all = fs().available_filter_functions();
  ASSERT_OK(all);
  bool full = features().has(kFullGlob);
  for (const GlobCase& c : kGlobs) {
    SCOPED_TRACE(c.glob);
    if (c.full_glob && !full) continue;
    std::vector<std::string> expected = matching(*all, c.regex);
    ASSERT_THAT(expected, Not(IsEmpty()));
    ASSERT_OK(inst().files().write("set_ftrace_filter", c.glob));
    auto filter = inst().ftrace_filter();
    ASSERT_OK(filter);
    std::vector<std::string> names;
    for (const std::string& f : filter->functions) names.emplace_back(base::split_words(f).at(0));
    EXPECT_THAT(names, ElementsAreArray(expected));
  }
  ASSERT_OK(inst().clear_ftrace_filter());
  EXPECT_TRUE(inst().ftrace_filter().value().all_functions);
  if (!full) GTEST_SKIP() << "needs full glob matching: no \"glob-matching-pattern\" in README (front/middle/end globs passed)";
}


class SetFtraceFilterFile : public Function {
 protected:
  // set_ftrace_filter read whole, a byte per read(2) and 100 bytes per
  // read(2) (its seq_file has broken at such boundaries before): the
  // three are the same text, and its lines are `expected` in any order.
  void ExpectReadsAs(std::vector<std::string> expected) {
    std::string path = inst().path("set_ftrace_filter");
    auto read = inst().files().read("set_ftrace_filter");
    ASSERT_OK(read);
    const std::string& whole = *read;
    EXPECT_EQ(sh("dd if=" + path + " bs=1 2>/dev/null"), whole) << "read a byte at a time";
    EXPECT_EQ(sh("dd if=" + path + " bs=100 2>/dev/null"), whole) << "read 100 bytes at a time";
    std::vector<std::string> lines;
    for (std::string_view l : base::split_lines(whole))
      if (!l.empty()) lines.emplace_back(l);
    EXPECT_THAT(lines, UnorderedElementsAreArray(expected)) << whole;
  }
  Status write(std::string_view line, bool append = false) {
    return append ? inst().files().append("set_ftrace_filter", line) : inst().files().write("set_ftrace_filter", line);
  }
  static constexpr const char* kAll = "#### all functions enabled ####";
};

TEST_F(SetFtraceFilterFile, FunctionsAndProbesReadBackAnyWay) {
  TRACEBED_COVERS("ftracetest: ftrace/func_set_ftrace_file.tc");
  TRACEBED_REQUIRE(features::function_triggers);
  auto all = fs().available_filter_functions();
  ASSERT_OK(all);
  const std::string f1 = "schedule";
  std::string f2 = std::find(all->begin(), all->end(), "sched_tick") != all->end() ? "sched_tick" : "scheduler_tick";
  ASSERT_THAT(*all, Contains(f2));
  const std::string off1 = f1 + ":traceoff:unlimited", off2 = f2 + ":traceoff:unlimited";

  ExpectReadsAs({kAll});
  ASSERT_OK(write(f1 + ":traceoff"));
  ExpectReadsAs({kAll, off1});
  ASSERT_OK(write(f1));
  ExpectReadsAs({f1, off1});
  ASSERT_OK(write(f2, true));
  ExpectReadsAs({f1, f2, off1});
  ASSERT_OK(write(f2 + ":traceoff", true));
  ExpectReadsAs({f1, f2, off1, off2});
  ASSERT_OK(write(f1));
  ExpectReadsAs({f1, off1, off2});
  ASSERT_OK(write(""));
  ExpectReadsAs({kAll, off1, off2});
  ASSERT_OK(write("!" + f1 + ":traceoff", true));
  ASSERT_OK(write("!" + f2 + ":traceoff", true));
  ExpectReadsAs({kAll});
  ASSERT_OK(write(f1));
  ExpectReadsAs({f1});
  ASSERT_OK(write(f2, true));
  ExpectReadsAs({f1, f2});
}

// A probe on every function with "lock" in its name, then removals by
// glob: what is left is always what the globs say.
TEST_F(SetFtraceFilterFile, ProbeGlobsAddAndRemoveExactlyTheirFunctions) {
  TRACEBED_COVERS("ftracetest: ftrace/func_set_ftrace_file.tc");
  TRACEBED_REQUIRE(features::function_triggers);
  auto all = fs().available_filter_functions();
  ASSERT_OK(all);
  std::vector<std::string> expected = sorted_unique(matching(*all, "lock"));
  auto drop = [&](const char* re) {
    std::regex r(re);
    std::erase_if(expected, [&](const std::string& n) { return std::regex_search(n, r); });
  };
  auto listed = [&] { return listed_names(inst().files().read("set_ftrace_filter").value()); };
  ASSERT_OK(write("*lock*:traceoff"));
  EXPECT_THAT(listed(), ElementsAreArray(expected));
  ASSERT_OK(write("!*try*lock:traceoff", true));
  drop("^.*try.*lock$");
  EXPECT_THAT(listed(), ElementsAreArray(expected));
  ASSERT_OK(write("!m*lock:traceoff", true));
  drop("^m.*lock$");
  EXPECT_THAT(listed(), ElementsAreArray(expected));
  ASSERT_OK(write("!c*unlock*:traceoff", true));
  drop("^c.*unlock");
  EXPECT_THAT(listed(), ElementsAreArray(expected));
  ASSERT_OK(write("!*:traceoff", true));
  EXPECT_THAT(listed(), IsEmpty());
}

}  // namespace
}  // namespace tracebed::suites
