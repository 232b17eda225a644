#include "framework/vm/kernels/gcov_build.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "framework/base/files.h"
#include "framework/base/files_for_tests.h"

namespace tracebed::vm {
namespace {

namespace fs = std::filesystem;
using ::testing::ElementsAre;
using ::testing::HasSubstr;

using GcovBuildFiles = base::ScratchDirTest;

void write_stub(const fs::path& p, std::string_view text = "x") { ASSERT_TRUE(base::write_file_atomic(p, text)); }

TEST(GcovPaths, ListIsSplitOnCommasWithoutRepeats) {
  auto p = parse_gcov_paths("kernel/trace, kernel/bpf,kernel/trace");
  ASSERT_TRUE(p) << p.error().message;
  EXPECT_THAT(*p, ElementsAre("kernel/trace", "kernel/bpf"));
}

TEST(GcovPaths, PathsOutsideTheTreeAreRefused) {
  for (const char* bad : {"/kernel/trace", "kernel/trace/", "../linux", "kernel/../..", ".", ""}) {
    auto p = parse_gcov_paths(bad);
    ASSERT_FALSE(p) << bad;
    EXPECT_THAT(p.error().message, HasSubstr("--gcov-paths")) << bad;
  }
}

// One variable per object stem, subdirectories too (kernel/trace/rv/rv.c).
TEST_F(GcovBuildFiles, EveryCFileOfThePathsIsNamedByItsStem) {
  fs::path src = dir_;
  write_stub(src / "kernel/trace/trace.c");
  write_stub(src / "kernel/trace/trace.h");
  write_stub(src / "kernel/trace/rv/rv.c");
  write_stub(src / "kernel/bpf/core.c");
  auto v = gcov_make_variables(src, {"kernel/trace"});
  ASSERT_TRUE(v) << v.error().message;
  EXPECT_THAT(*v, ElementsAre("GCOV_PROFILE_rv.o=y", "GCOV_PROFILE_trace.o=y"));
}

TEST_F(GcovBuildFiles, MissingOrEmptyPathIsNamed) {
  fs::path src = dir_;
  write_stub(src / "kernel/trace/Makefile");
  auto missing = gcov_make_variables(src, {"kernel/nothere"});
  ASSERT_FALSE(missing);
  EXPECT_THAT(missing.error().message, HasSubstr("kernel/nothere is no directory"));
  auto empty = gcov_make_variables(src, {"kernel/trace"});
  ASSERT_FALSE(empty);
  EXPECT_THAT(empty.error().message, HasSubstr("holds no C file"));
}

TEST_F(GcovBuildFiles, StagedFilesAreReadBack) {
  fs::path src = dir_ / "src", obj = dir_ / "obj", entry = dir_ / "entry";
  write_stub(src / "kernel/trace/trace.c");
  write_stub(src / "kernel/trace/trace.h");
  write_stub(src / "kernel/trace/Makefile");
  write_stub(obj / "kernel/trace/trace.gcno");
  write_stub(obj / "kernel/trace/trace.o");
  ASSERT_TRUE(stage_gcov_files(src, obj, {"kernel/trace"}, entry / "gcov"));
  auto g = read_gcov_files(entry);
  ASSERT_TRUE(g) << g.error().message;
  EXPECT_EQ(g->objtree, fs::absolute(obj).lexically_normal().string());
  EXPECT_EQ(g->srctree, fs::absolute(src).lexically_normal().string());
  EXPECT_THAT(g->paths, ElementsAre("kernel/trace"));
  EXPECT_TRUE(fs::exists(g->objects() / "kernel/trace/trace.gcno"));
  EXPECT_FALSE(fs::exists(g->objects() / "kernel/trace/trace.o"));
  EXPECT_TRUE(fs::exists(g->sources() / "kernel/trace/trace.c"));
  EXPECT_TRUE(fs::exists(g->sources() / "kernel/trace/trace.h"));
  EXPECT_FALSE(fs::exists(g->sources() / "kernel/trace/Makefile"));
}

TEST_F(GcovBuildFiles, BuildThatProfiledNothingIsAnError) {
  fs::path src = dir_ / "src", obj = dir_ / "obj", entry = dir_ / "entry";
  write_stub(src / "kernel/trace/trace.c");
  write_stub(obj / "kernel/trace/trace.o");
  auto st = stage_gcov_files(src, obj, {"kernel/trace"}, entry / "gcov");
  ASSERT_FALSE(st);
  EXPECT_THAT(st.error().message, HasSubstr("no .gcno file under kernel/trace"));
  auto g = read_gcov_files(entry);
  ASSERT_FALSE(g);
  EXPECT_THAT(g.error().message, HasSubstr("was not built with --gcov"));
}

}  // namespace
}  // namespace tracebed::vm
