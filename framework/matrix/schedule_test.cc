#include "framework/matrix/schedule.h"

#include <unistd.h>

#include <fstream>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace tracebed::matrix {
namespace {

namespace fs = std::filesystem;

// The timings a fresh machine schedules its first run by (debian-6.12's
// 26 default suites), read as a cache's would be: a suite's first run
// starts its slowest suites first, not in the order they were built.
TEST(ScheduleSuites, ShippedTimingsPutTheSlowestSuiteFirst) {
  auto shipped = read_suite_timings(fs::path(TRACEBED_SOURCE_DIR) / "vmimages/suite-timings.json");
  ASSERT_GE(shipped.size(), 26u);
  std::vector<SuiteToSchedule> in;
  for (const auto& [name, seconds] : shipped) {
    EXPECT_GT(seconds, 0) << name;
    in.push_back({name, 10, seconds});
  }
  auto runs = schedule_suites(in, 2);
  EXPECT_EQ(in[runs.front().suite].name, "tracebed_suite_perf");
}

TEST(ScheduleSuites, LongestFirstWithoutSplittingWhatFits) {
  auto runs = schedule_suites({{"a", 5, 10}, {"b", 5, 30}, {"c", 5, 20}}, 2);
  ASSERT_EQ(runs.size(), 3u);
  EXPECT_EQ(runs[0].suite, 1u);
  EXPECT_EQ(runs[1].suite, 2u);
  EXPECT_EQ(runs[2].suite, 0u);
  for (const auto& r : runs) EXPECT_EQ(r.shards, 1u);
}

TEST(ScheduleSuites, ASuiteLongerThanAJobsShareIsSharded) {
  // 200 s of 260 s on two jobs: each job's share is 130 s, so two shards.
  auto runs = schedule_suites({{"tooling", 14, 200}, {"kprobe", 27, 30}, {"hist", 12, 30}}, 2);
  ASSERT_EQ(runs.size(), 4u);
  EXPECT_EQ(runs[0].suite, 0u);
  EXPECT_EQ(runs[0].shards, 2u);
  EXPECT_EQ(runs[1].suite, 0u);
  EXPECT_EQ(runs[1].shard, 1u);
  EXPECT_DOUBLE_EQ(runs[0].estimate, 100);
}

TEST(ScheduleSuites, NeverMoreShardsThanCasesOrTheCap) {
  auto runs = schedule_suites({{"perf", 2, 400}, {"x", 1, 1}}, 8, 1, 4);
  size_t perf = 0;
  for (const auto& r : runs) perf += r.suite == 0;
  EXPECT_EQ(perf, 2u);
  runs = schedule_suites({{"big", 100, 400}, {"x", 1, 1}}, 8, 1, 4);
  perf = 0;
  for (const auto& r : runs) perf += r.suite == 0;
  EXPECT_EQ(perf, 4u);
}

TEST(ScheduleSuites, NoHistoryNoSplitAndOneJobNoSplit) {
  for (const auto& r : schedule_suites({{"a", 10, -1}, {"b", 10, -1}}, 2)) EXPECT_EQ(r.shards, 1u);
  for (const auto& r : schedule_suites({{"a", 10, 500}, {"b", 10, 1}}, 1)) EXPECT_EQ(r.shards, 1u);
}

TEST(ScheduleSuites, AnUntimedSuiteCountsAsTheAverage) {
  auto runs = schedule_suites({{"a", 1, 10}, {"new", 1, -1}, {"b", 1, 30}}, 2);
  ASSERT_EQ(runs.size(), 3u);
  EXPECT_EQ(runs[1].suite, 1u);
  EXPECT_DOUBLE_EQ(runs[1].estimate, 20);
}

TEST(SuiteTimings, RoundTripAndDamagedFile) {
  fs::path file = fs::temp_directory_path() / fmt::format("tracebed-timings-{}.json", getpid());
  ASSERT_TRUE(write_suite_timings(file, {{"tracebed_suite_hist", 3.84}, {"tracebed_suite_perf", 26}}).ok());
  auto back = read_suite_timings(file);
  EXPECT_EQ(back.size(), 2u);
  EXPECT_DOUBLE_EQ(back["tracebed_suite_hist"], 3.8);
  std::ofstream(file) << "[1, 2";
  EXPECT_TRUE(read_suite_timings(file).empty());
  fs::remove(file);
}

}  // namespace
}  // namespace tracebed::matrix
