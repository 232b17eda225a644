#include "framework/vm/guests/boot_history.h"

#include <cstdlib>

#include <gtest/gtest.h>

#include "framework/base/files_for_tests.h"

namespace tracebed::vm {
namespace {

using namespace std::chrono_literals;

// Each test has a cache of its own and no $TRACEBED_BOOT_TIMEOUT.
class BootHistory : public base::ScratchDirTest {
 protected:
  void SetUp() override {
    ScratchDirTest::SetUp();
    setenv("TRACEBED_CACHE", dir_.c_str(), 1);
    unsetenv("TRACEBED_BOOT_TIMEOUT");
  }
  void TearDown() override {
    unsetenv("TRACEBED_CACHE");
    unsetenv("TRACEBED_BOOT_TIMEOUT");
    ScratchDirTest::TearDown();
  }
};

TEST_F(BootHistory, AKernelNeverBootedGetsTheGenerousDefault) {
  EXPECT_EQ(boot_timeout_for("debian-6.12", "tcg"), kFirstBootTimeout);
  EXPECT_FALSE(slowest_cold_boot("debian-6.12", "tcg"));
}

TEST_F(BootHistory, TheWaitIsAFewTimesTheSlowestBootWithinItsBounds) {
  record_cold_boot("k", "tcg", 30.2);
  EXPECT_EQ(boot_timeout_for("k", "tcg"), std::chrono::seconds(121));  // ceil(4 x 30.2)
  record_cold_boot("fast", "tcg", 6.5);
  EXPECT_EQ(boot_timeout_for("fast", "tcg"), kBootTimeoutFloor);  // 26 s is below the floor
  record_cold_boot("slow", "tcg", 200);
  EXPECT_EQ(boot_timeout_for("slow", "tcg"), kFirstBootTimeout);  // 800 s is above the ceiling
}

TEST_F(BootHistory, TheSlowestBootIsKeptNotTheLast) {
  record_cold_boot("k", "tcg", 40);
  record_cold_boot("k", "tcg", 7);
  EXPECT_DOUBLE_EQ(*slowest_cold_boot("k", "tcg"), 40);
}

TEST_F(BootHistory, KernelsAndAcceleratorsHaveHistoriesOfTheirOwn) {
  record_cold_boot("k", "kvm", 1);
  EXPECT_FALSE(slowest_cold_boot("k", "tcg"));
  EXPECT_FALSE(slowest_cold_boot("other", "kvm"));
}

TEST_F(BootHistory, AnUnreadableHistoryIsNoHistory) {
  std::filesystem::create_directories(boot_history_file("k", "tcg").parent_path());
  ASSERT_TRUE(base::write_file_atomic(boot_history_file("k", "tcg"), "garbage\n"));
  EXPECT_EQ(boot_timeout_for("k", "tcg"), kFirstBootTimeout);
}

TEST_F(BootHistory, TheEnvironmentOverridesTheHistory) {
  record_cold_boot("k", "tcg", 30);
  setenv("TRACEBED_BOOT_TIMEOUT", "17", 1);
  EXPECT_EQ(boot_timeout_for("k", "tcg"), 17s);
  setenv("TRACEBED_BOOT_TIMEOUT", "nonsense", 1);
  EXPECT_EQ(boot_timeout_for("k", "tcg"), 120s);
}

}  // namespace
}  // namespace tracebed::vm
