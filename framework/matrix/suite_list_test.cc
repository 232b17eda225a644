#include "framework/matrix/suite_list.h"

#include <unistd.h>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "framework/base/files.h"

namespace tracebed::matrix {
namespace {

namespace fs = std::filesystem;
using ::testing::ElementsAre;
using ::testing::IsEmpty;

TEST(SuiteList, OnePathALineEmptyLinesSkipped) {
  fs::path file = fs::path(::testing::TempDir()) / fmt::format("tracebed-suites-{}.txt", getpid());
  ASSERT_TRUE(base::write_file_atomic(file, "/b/suites/kprobe/tracebed_suite_kprobe\n\n/b/suites/hist/tracebed_suite_hist").ok());
  EXPECT_THAT(read_suite_list(file),
              ElementsAre(fs::path("/b/suites/kprobe/tracebed_suite_kprobe"), fs::path("/b/suites/hist/tracebed_suite_hist")));
  fs::remove(file);
  EXPECT_THAT(read_suite_list(file), IsEmpty());
}

// The build writes the list beside tracebed, not beside this test binary.
TEST(SuiteList, NoneBesideAProgramOutsideTheBuildDirectory) {
  fs::path self = fs::read_symlink("/proc/self/exe");
  if (fs::exists(self.parent_path() / "tracebed-suites.txt")) GTEST_SKIP() << "a suite list lies beside this test";
  EXPECT_THAT(built_suites(), IsEmpty());
}

}  // namespace
}  // namespace tracebed::matrix
