#include "framework/matrix/boot_check.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace tracebed::matrix {
namespace {

using ::testing::HasSubstr;

TEST(BootCheck, TakesTheGuestFlagsTheSuitesTake) {
  auto o = guest_options_from_suite_args("debian-6.1", {"--tracebed_launcher=libvirt", "--tracebed_libvirt_uri=qemu:///x",
                                                        "--tracebed_accel=tcg", "--tracebed_cmdline=a=1 b",
                                                        "--gtest_filter=Smoke.*"});
  EXPECT_EQ(o.kernel, "debian-6.1");
  EXPECT_EQ(o.launcher, "libvirt");
  EXPECT_EQ(o.libvirt_uri, "qemu:///x");
  EXPECT_EQ(o.accel, "tcg");
  EXPECT_EQ(o.cmdline_extra, "a=1 b");
}

TEST(BootCheck, AKernelThatDidNotBootIsNotTestedNotFailed) {
  TestResult row = did_not_boot("my-kernel", Error{"guest did not reach the agent within 90 s"});
  EXPECT_EQ(row.state, State::fail);
  EXPECT_THAT(row.message, HasSubstr("my-kernel"));
  EXPECT_THAT(row.message, HasSubstr("guest did not reach the agent within 90 s"));
  EXPECT_EQ(verdict({row}), Verdict::not_tested);
}

}  // namespace
}  // namespace tracebed::matrix
