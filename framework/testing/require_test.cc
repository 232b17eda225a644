// TRACEBED_REQUIRE itself: runs on a feature the kernel has, skips with the
// reason on one it lacks, and fails when no features were probed.
#include "framework/testing/require.h"

#include <gmock/gmock.h>
#include <gtest/gtest-spi.h>
#include <gtest/gtest.h>

namespace tracebed::testlib {
namespace {

namespace features = tracefs::features;
using ::testing::HasSubstr;

class RequireTest : public ::testing::Test {
 protected:
  void SetUp() override { set_current_features(&f_); }
  void TearDown() override { set_current_features(nullptr); }
  tracefs::Features f_ = tracefs::Features::from_text("", "blk function nop\n", "[local] global\n", "6.18.44");
};

TEST_F(RequireTest, PresentFeatureRuns) {
  bool ran = false;
  [&] {
    TRACEBED_REQUIRE(features::function_tracer);
    ran = true;
  }();
  EXPECT_TRUE(ran);
}

TEST_F(RequireTest, MissingFeatureSkipsWithTheReason) {
  bool ran = false;
  ::testing::TestPartResultArray results;
  {
    // Catch the skip, so this test checks it instead of being skipped.
    ::testing::ScopedFakeTestPartResultReporter catcher(
        ::testing::ScopedFakeTestPartResultReporter::INTERCEPT_ONLY_CURRENT_THREAD, &results);
    [&] {
      TRACEBED_REQUIRE(features::function_graph_tracer);
      ran = true;
    }();
  }
  EXPECT_FALSE(ran);
  ASSERT_EQ(results.size(), 1);
  EXPECT_TRUE(results.GetTestPartResult(0).skipped());
  EXPECT_THAT(results.GetTestPartResult(0).message(),
              HasSubstr("needs function_graph tracer: not in available_tracers (blk function nop)"));
}

TEST_F(RequireTest, NoFeaturesIsAFailureNotASkip) {
  set_current_features(nullptr);
  ::testing::TestPartResultArray results;
  {
    ::testing::ScopedFakeTestPartResultReporter catcher(
        ::testing::ScopedFakeTestPartResultReporter::INTERCEPT_ONLY_CURRENT_THREAD, &results);
    [&] { TRACEBED_REQUIRE(features::function_tracer); }();
  }
  ASSERT_EQ(results.size(), 1);
  EXPECT_TRUE(results.GetTestPartResult(0).fatally_failed());
  EXPECT_THAT(results.GetTestPartResult(0).message(), HasSubstr("no tracefs features probed"));
}

}  // namespace
}  // namespace tracebed::testlib
