#include "framework/matrix/suite_pool.h"

#include <cstdlib>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "framework/base/files.h"
#include "framework/base/files_for_tests.h"
#include "framework/matrix/schedule.h"
#include "framework/vm/cache/cache.h"

namespace tracebed::matrix {
namespace {

namespace fs = std::filesystem;
using ::testing::ElementsAre;
using ::testing::HasSubstr;

// Stand-ins for suite binaries: shell scripts that list their cases, and
// when run write gtest's XML report for the shard the environment selects
// (gtest's rule: case i belongs to shard i % total).
class SuitePool : public base::ScratchDirTest {
 protected:
  void SetUp() override {
    ScratchDirTest::SetUp();
    // Timings are read and written in the cache: this test's own.
    setenv("TRACEBED_CACHE", (dir_ / "cache").c_str(), 1);
  }
  void TearDown() override {
    unsetenv("TRACEBED_CACHE");
    ScratchDirTest::TearDown();
  }

  // A suite whose cases `names` all pass; `status` is its exit status.
  fs::path fake_suite(const std::string& binary, const std::string& group, std::vector<std::string> names,
                      int status = 0) {
    std::string list = group + ".\\n";
    std::string cases;
    for (size_t i = 0; i < names.size(); ++i) {
      list += "  " + names[i] + "\\n";
      cases += fmt::format(
          "if [ $(( {} % total )) -eq $index ]; then printf '<testcase classname=\"{}\" name=\"{}\" time=\"0.1\"/>' "
          ">> \"$out\"; fi\n",
          i, group, names[i]);
    }
    std::string script = fmt::format(R"(#!/bin/sh
echo "$@" >> {log}
out=""; list=""; filter=""
for a in "$@"; do case "$a" in --gtest_list_tests) list=1;; --gtest_output=xml:*) out="${{a#--gtest_output=xml:}}";; --gtest_filter=*) filter="${{a#--gtest_filter=}}";; esac; done
if [ -n "$filter" ] && [ "${{filter%%.*}}" != "{group}" ]; then exit 0; fi
if [ -n "$list" ]; then printf '{list}'; exit 0; fi
total=${{GTEST_TOTAL_SHARDS:-1}}; index=${{GTEST_SHARD_INDEX:-0}}
echo "running {binary} shard $index of $total"
printf '<testsuites><testsuite name="{group}">' > "$out"
{cases}printf '</testsuite></testsuites>' >> "$out"
exit {status}
)",
                                     fmt::arg("log", (dir_ / "argv.txt").string()), fmt::arg("list", list),
                                     fmt::arg("binary", binary), fmt::arg("group", group), fmt::arg("cases", cases),
                                     fmt::arg("status", status));
    fs::path p = dir_ / binary;
    EXPECT_TRUE(vm::write_file_atomic(p, script).ok());
    fs::permissions(p, fs::perms::owner_all);
    return p;
  }

  PoolOptions options(std::vector<fs::path> suites, std::vector<std::string> kernels, size_t jobs) {
    PoolOptions o;
    for (auto& k : kernels) o.kernels.push_back({k, {"--for=" + k}});
    o.suites = std::move(suites);
    o.jobs = jobs;
    o.timeout = std::chrono::seconds(30);
    o.work_dir = dir_ / "work";
    return o;
  }

  static std::vector<std::string> names(const SuiteOutcome& o) {
    std::vector<std::string> out;
    for (const auto& t : o.tests) out.push_back(t.full_name());
    return out;
  }
};

TEST_F(SuitePool, ListsCasesInTheBinarysOrder) {
  auto suite = fake_suite("tracebed_suite_a", "A", {"One", "Two", "Three"});
  EXPECT_THAT(listed_cases(suite, ""), ::testing::Optional(ElementsAre("A.One", "A.Two", "A.Three")));
  EXPECT_EQ(listed_cases(dir_ / "missing", ""), std::nullopt);
}

TEST_F(SuitePool, EveryKernelGetsEverySuiteWithItsOwnFlags) {
  auto a = fake_suite("tracebed_suite_a", "A", {"One", "Two"});
  auto b = fake_suite("tracebed_suite_b", "B", {"Only"});
  std::vector<size_t> kernels_done;
  auto o = options({a, b}, {"k1", "k2"}, 2);
  size_t runs = 0;
  o.on_run_done = [&](const PoolRun&, size_t finished, size_t total) {
    EXPECT_EQ(finished, ++runs);
    EXPECT_EQ(total, 4u);
  };
  o.on_kernel_done = [&](size_t k, const std::vector<SuiteOutcome>& outcomes, double) {
    kernels_done.push_back(k);
    EXPECT_EQ(outcomes.size(), 2u);
  };
  auto out = run_suite_pool(o);
  ASSERT_EQ(out.size(), 2u);
  for (const auto& kernel : out) {
    ASSERT_EQ(kernel.size(), 2u);
    EXPECT_THAT(names(kernel[0]), ElementsAre("A.One", "A.Two"));
    EXPECT_THAT(names(kernel[1]), ElementsAre("B.Only"));
  }
  EXPECT_EQ(runs, 4u);
  EXPECT_THAT(kernels_done, ::testing::UnorderedElementsAre(0u, 1u));
  auto argv = base::read_file(dir_ / "argv.txt");
  ASSERT_TRUE(argv.ok());
  EXPECT_THAT(*argv, HasSubstr("--tracebed_kernel=k1 "));
  EXPECT_THAT(*argv, HasSubstr("--for=k2"));
  EXPECT_THAT(*argv, ::testing::Not(HasSubstr("--tracebed_kernel=k1 --gtest_output=xml:" +
                                              (dir_ / "work/k2").string())));
  // Each run's output is in its kernel's log.
  auto log = base::read_file(dir_ / "work/k2/tracebed_suite_b.log");
  ASSERT_TRUE(log.ok());
  EXPECT_THAT(*log, HasSubstr("running tracebed_suite_b shard 0 of 1"));
}

// A suite long enough to be split runs as shards whose cases come back
// whole and in the binary's order; the timings come from the last run.
TEST_F(SuitePool, ShardsOfASuiteMergeInListedOrder) {
  auto big = fake_suite("tracebed_suite_big", "Big", {"A", "B", "C", "D", "E", "F"});
  auto small = fake_suite("tracebed_suite_small", "Small", {"S"});
  ASSERT_TRUE(write_suite_timings(dir_ / "cache/timings/k1.json",
                                  {{"tracebed_suite_big", 100.0}, {"tracebed_suite_small", 1.0}})
                  .ok());
  auto o = options({big, small}, {"k1"}, 2);
  size_t big_runs = 0;
  o.on_run_done = [&](const PoolRun& r, size_t, size_t) {
    if (r.suite == 0) {
      ++big_runs;
      EXPECT_GT(r.shards, 1u);
    }
  };
  auto out = run_suite_pool(o);
  EXPECT_GT(big_runs, 1u);
  EXPECT_THAT(names(out[0][0]), ElementsAre("Big.A", "Big.B", "Big.C", "Big.D", "Big.E", "Big.F"));
  // This run's times replace the last ones.
  auto timings = read_suite_timings(dir_ / "cache/timings/k1.json");
  EXPECT_LT(timings["tracebed_suite_big"], 100.0);
}

TEST_F(SuitePool, ASuiteTheFilterEmptiesIsNotStarted) {
  auto a = fake_suite("tracebed_suite_a", "A", {"One"});
  auto b = fake_suite("tracebed_suite_b", "B", {"Two"});
  auto o = options({a, b}, {"k1"}, 1);
  o.filter = "B.*";
  auto out = run_suite_pool(o);
  EXPECT_TRUE(out[0][0].tests.empty());
  EXPECT_THAT(names(out[0][1]), ElementsAre("B.Two"));
  auto argv = base::read_file(dir_ / "argv.txt");
  ASSERT_TRUE(argv.ok());
  EXPECT_THAT(*argv, ::testing::Not(HasSubstr("tracebed_suite_a.xml")));
  EXPECT_FALSE(fs::exists(dir_ / "work/k1/tracebed_suite_a.log"));
}

// One job, three suites, the second failing: the third is never started,
// and its outcome is empty. Without the option every suite runs.
TEST_F(SuitePool, StopAfterFailureLeavesTheRestUnstarted) {
  auto a = fake_suite("tracebed_suite_a", "A", {"One"});
  auto b = fake_suite("tracebed_suite_b", "B", {"Two"}, 1);
  auto c = fake_suite("tracebed_suite_c", "C", {"Three"});
  auto o = options({a, b, c}, {"k1"}, 1);
  // With no timings in this test's cache, the runs start in the listed order.
  o.stop_after_failure = true;
  size_t kernels_done = 0;
  o.on_kernel_done = [&](size_t, const std::vector<SuiteOutcome>&, double) { ++kernels_done; };
  auto out = run_suite_pool(o);
  EXPECT_THAT(names(out[0][0]), ElementsAre("A.One"));
  EXPECT_GT(out[0][1].count(State::fail), 0);
  EXPECT_TRUE(out[0][2].tests.empty());
  EXPECT_TRUE(out[0][2].left_out);
  EXPECT_FALSE(out[0][1].left_out);
  EXPECT_FALSE(fs::exists(dir_ / "work/k1/tracebed_suite_c.log"));
  EXPECT_EQ(kernels_done, 1u) << "the kernel is done even with runs left out";

  o.stop_after_failure = false;
  out = run_suite_pool(o);
  EXPECT_THAT(names(out[0][2]), ElementsAre("C.Three"));
  EXPECT_FALSE(out[0][2].left_out);
}

TEST_F(SuitePool, MissingAndFailingSuitesBecomeFailedRows) {
  auto crash = fake_suite("tracebed_suite_crash", "Crash", {"X"}, 134);
  auto o = options({dir_ / "tracebed_suite_gone", crash}, {"k1"}, 1);
  auto out = run_suite_pool(o);
  ASSERT_EQ(out[0][0].tests.size(), 1u);
  EXPECT_EQ(out[0][0].tests[0].state, State::fail);
  EXPECT_THAT(out[0][0].tests[0].message, HasSubstr("suite binary not built"));
  // Its report passes, but it exited with 134: a failed row is added.
  bool failed_row = false;
  for (const auto& t : out[0][1].tests)
    failed_row |= t.state == State::fail && t.message.find("status 134") != std::string::npos;
  EXPECT_TRUE(failed_row);
}

}  // namespace
}  // namespace tracebed::matrix
