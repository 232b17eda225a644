#include "framework/base/install_layout.h"

#include <gtest/gtest.h>

namespace tracebed::base {
namespace {

namespace fs = std::filesystem;

TEST(InstallLayout, ExecutableDirIsThisTestsDirectory) {
  EXPECT_EQ(executable_dir(), fs::read_symlink("/proc/self/exe").parent_path());
}

TEST(InstallLayout, AFileBesideTheExecutableWins) {
  // This test binary itself stands beside itself.
  fs::path self = fs::read_symlink("/proc/self/exe");
  EXPECT_EQ(installed_or_built("/nonexistent/build/" + self.filename().string()), self);
  EXPECT_EQ(installed_or_built("/nonexistent/build/tracebed-no-such-file"), "/nonexistent/build/tracebed-no-such-file");
}

TEST(InstallLayout, SharedDataFallsBackToTheSourceTree) {
  EXPECT_EQ(shared_data("kernels.json", "/src", "vmimages/kernels.json"), "/src/vmimages/kernels.json");
}

}  // namespace
}  // namespace tracebed::base
