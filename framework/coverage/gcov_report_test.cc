#include "framework/coverage/gcov_report.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "framework/base/files.h"
#include "framework/base/files_for_tests.h"
#include "framework/base/process.h"

namespace tracebed::coverage {
namespace {

namespace fs = std::filesystem;
using namespace std::chrono_literals;
using ::testing::ElementsAre;
using ::testing::HasSubstr;

using GcovReportWriting = base::ScratchDirTest;

void run_in(const fs::path& cwd, const std::vector<std::string>& argv) {
  auto r = base::run_process(argv, 120s, base::Output::capture, cwd);
  ASSERT_TRUE(r) << r.error().message;
  ASSERT_EQ(r->status, 0) << argv[0] << ": " << r->output;
}

// A kernel build in miniature: fixtures/lcov/small.c compiled with gcov in
// an object tree, run once without arguments, its counts laid out as a
// guest leaves them (boot-1/<objtree>/prog/small.gcda) and the build's
// notes and sources kept apart, as a gcov kernel's entry keeps them. The
// report's numbers are lcov --summary's for the same run (fixtures/lcov).
TEST_F(GcovReportWriting, CountsOfAProgramBecomeItsReport) {
  const fs::path root = dir_;
  const fs::path objtree = root / "build", entry = root / "entry", counts = root / "counts";
  fs::create_directories(objtree / "prog");
  ASSERT_TRUE(base::copy_file(fs::path(TRACEBED_SOURCE_DIR) / "fixtures/lcov/small.c", objtree / "prog/small.c"));
  run_in(objtree, {"gcc", "--coverage", "-O0", "-c", "prog/small.c", "-o", "prog/small.o"});
  run_in(objtree, {"gcc", "--coverage", "prog/small.o", "-o", "prog/small"});
  run_in(objtree, {"./prog/small"});
  ProfiledBuild build{objtree.string(), objtree.string(), entry / "obj", entry / "src", {"prog"}};
  fs::create_directories(build.objects / "prog");
  fs::create_directories(build.sources / "prog");
  ASSERT_TRUE(base::copy_file(objtree / "prog/small.gcno", build.objects / "prog/small.gcno"));
  ASSERT_TRUE(base::copy_file(objtree / "prog/small.c", build.sources / "prog/small.c"));
  const fs::path guest = counts / "suite_a/boot-1" / objtree.relative_path() / "prog";
  fs::create_directories(guest);
  ASSERT_TRUE(base::copy_file(objtree / "prog/small.gcda", guest / "small.gcda"));
  // A suite whose guest died before its first copy.
  fs::create_directories(counts / "suite_b");
  ASSERT_TRUE(base::write_file_atomic(counts / "suite_b/missing.txt", "guest 1 died during T.t\n"));

  auto r = write_gcov_report(build, counts, root / "report");
  ASSERT_TRUE(r) << r.error().message;
  ASSERT_EQ(r->files.size(), 2u);
  EXPECT_EQ(r->files[0].file, (build.sources / "prog/small.c").string());
  const FileSummary& total = r->files.back();
  EXPECT_EQ(total.lines_hit, 11u);
  EXPECT_EQ(total.lines, 12u);
  EXPECT_EQ(total.functions_hit, 3u);
  EXPECT_EQ(total.functions, 4u);
  ASSERT_EQ(r->suites.size(), 2u);
  EXPECT_EQ(r->suites[0].suite, "suite_a");
  EXPECT_EQ(r->suites[0].total.lines_hit, 11u);
  EXPECT_THAT(r->suites[1].missing, ElementsAre("guest 1 died during T.t"));
  EXPECT_TRUE(fs::exists(r->html / "index.html"));
  EXPECT_THAT(r->markdown, HasSubstr("| prog/small.c | 11/12 | 91.7 % | 3/4 | 75.0 % |"));
  EXPECT_THAT(r->markdown, HasSubstr("| suite_b |"));
}

TEST_F(GcovReportWriting, NoCountsAtAllIsAnError) {
  const fs::path root = dir_;
  fs::create_directories(root / "counts/suite_a");
  ProfiledBuild build{"/nowhere", "/nowhere", root / "obj", root / "src", {"kernel/trace"}};
  auto r = write_gcov_report(build, root / "counts", root / "report");
  ASSERT_FALSE(r);
  EXPECT_THAT(r.error().message, HasSubstr("no suite brought kernel counts back"));
}

}  // namespace
}  // namespace tracebed::coverage
