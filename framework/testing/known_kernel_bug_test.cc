#include "framework/testing/known_kernel_bug.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace tracebed::testlib {
namespace {

using ::testing::HasSubstr;

const KnownKernelBug kBug{"the stack tracer keeps a maximum without entries", {"(0 entries)", "Depth 0"}, {6, 1},
                          "not seen from 6.1 on"};

tracefs::Features kernel(std::string release) { return tracefs::Features::from_text("", "", "", std::move(release)); }

TEST(KnownKernelBug, ExplainsItsSignOnAnOlderKernel) {
  auto m = kBug.explains(kernel("5.10.0-32-cloud-amd64"), "stack_trace:\n(0 entries)\n");
  ASSERT_TRUE(m.has_value());
  EXPECT_THAT(*m, HasSubstr("known kernel bug on 5.10.0-32-cloud-amd64 (below 6.1: not seen from 6.1 on)"));
  EXPECT_THAT(*m, HasSubstr("keeps a maximum without entries"));
  EXPECT_THAT(*m, HasSubstr("(0 entries)"));  // the failure itself is kept
}

TEST(KnownKernelBug, AnyOfItsSignsShowsIt) {
  EXPECT_TRUE(kBug.explains(kernel("5.10.0"), "entry 0: Depth 0"));
}

TEST(KnownKernelBug, OtherFailuresStillFail) {
  EXPECT_FALSE(kBug.explains(kernel("5.10.0-32-cloud-amd64"), "stack_max_size 1824 vs entry 0's Depth 1700"));
}

TEST(KnownKernelBug, TheSignFailsFromTheReleaseItIsGoneIn) {
  EXPECT_FALSE(kBug.explains(kernel("6.1.0-56-cloud-amd64"), "(0 entries)"));
  EXPECT_FALSE(kBug.explains(kernel("7.3.0-rc7"), "(0 entries)"));
}

TEST(KnownKernelBug, AnUnreadableReleaseIsNotOld) {
  EXPECT_FALSE(kBug.explains(kernel("unknown"), "(0 entries)"));
}

TEST(KnownKernelBug, AnEmptySignMatchesNothing) {
  KnownKernelBug no_sign{"x", {""}, {9, 0}, "y"};
  EXPECT_FALSE(no_sign.explains(kernel("5.10.0"), "anything"));
}

}  // namespace
}  // namespace tracebed::testlib
