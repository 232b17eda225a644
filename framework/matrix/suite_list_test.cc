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

class ChooseSuites : public ::testing::Test {
 protected:
  std::vector<fs::path> all_ = {"/b/tracebed_suite_hist", "/b/tracebed_suite_tooling", "/b/tracebed_suite_kprobe"};
  std::vector<std::string> asked_;
  Result<std::vector<fs::path>> choose(std::vector<std::string> wanted) {
    return choose_suites(all_, wanted, [&](const fs::path& p) {
      asked_.push_back(p.filename().string());
      if (p.filename() == "tracebed_suite_tooling") return std::vector<std::string>{"TraceCmd", "Perf"};
      if (p.filename() == "tracebed_suite_hist") return std::vector<std::string>{"Hist"};
      return std::vector<std::string>{"Kprobe", "KprobeSyntax"};
    });
  }
};

TEST_F(ChooseSuites, ShortOrFullBinaryNamesWithoutListing) {
  auto got = choose({"hist", "tracebed_suite_kprobe", "HIST"});
  ASSERT_TRUE(got.ok()) << got.error().message;
  EXPECT_THAT(*got, ElementsAre(fs::path("/b/tracebed_suite_hist"), fs::path("/b/tracebed_suite_kprobe")));
  EXPECT_THAT(asked_, IsEmpty());
}

TEST_F(ChooseSuites, TheNamesFilterTakesToo) {
  auto got = choose({"tracecmd", "KprobeSyntax"});
  ASSERT_TRUE(got.ok()) << got.error().message;
  EXPECT_THAT(*got, ElementsAre(fs::path("/b/tracebed_suite_tooling"), fs::path("/b/tracebed_suite_kprobe")));
  EXPECT_EQ(asked_.size(), 3u);  // each binary listed once
}

TEST_F(ChooseSuites, AnUnknownNameListsTheValidOnes) {
  auto got = choose({"hist", "histogram"});
  ASSERT_FALSE(got.ok());
  EXPECT_THAT(got.error().message, ::testing::HasSubstr("no suite named histogram (suites: hist, tooling, kprobe;"));
}

// The long or heavy suites run only when named; the others by default.
TEST(DefaultSuites, LeaveOutKselftestAndBpftrace) {
  const std::vector<fs::path> all = {"/b/tracebed_suite_hist", "/b/tracebed_suite_kselftest",
                                     "/b/tracebed_suite_bpftrace", "/b/tracebed_suite_bpf"};
  EXPECT_THAT(default_suites(all), ElementsAre(fs::path("/b/tracebed_suite_hist"), fs::path("/b/tracebed_suite_bpf")));
}

TEST(ShortSuiteName, DropsThePrefix) {
  EXPECT_EQ(short_suite_name("/x/tracebed_suite_user_events"), "user_events");
  EXPECT_EQ(short_suite_name("/x/other"), "other");
}

}  // namespace
}  // namespace tracebed::matrix
