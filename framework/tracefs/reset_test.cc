#include "framework/tracefs/reset.h"

#include <unistd.h>

#include <filesystem>
#include <fstream>

#include <gtest/gtest.h>

#include "framework/tracefs/file_ops.h"
#include "framework/tracefs/tracefs.h"

#include "framework/tracefs/testdata_for_tests.h"
#include "framework/tracefs/tracefs_text.h"

namespace tracebed::tracefs {
namespace {

using testlib::testdata;

// Captured in a debian-6.12 guest after "p:tbprobe vfs_read" and
// "r:tbret vfs_read $retval" (the kernel shows maxactive and arg names).
TEST(DynamicEvents, RemovalLinesForCapturedKprobes) {
  std::vector<std::string> dels;
  std::string text = testdata("dynamic_events-kprobes-6.12.txt");
  for (std::string_view line : split_lines(text)) {
    if (auto d = dynamic_event_removal(line)) dels.push_back(*d);
  }
  EXPECT_EQ(dels, (std::vector<std::string>{"-:kprobes/tbprobe", "-:kprobes/tbret"}));
}

TEST(DynamicEvents, UserEventsAreRemovedWithTheirFields) {
  EXPECT_EQ(dynamic_event_removal("u:tb_x u32 a; __data_loc char[] b"), "-:tb_x u32 a; __data_loc char[] b");
  EXPECT_EQ(dynamic_event_removal("u:tb_bare"), "-:tb_bare");
}

TEST(DynamicEvents, NothingToRemoveInCommentsOrBlankLines) {
  EXPECT_FALSE(dynamic_event_removal("").has_value());
  EXPECT_FALSE(dynamic_event_removal("# comment: not an event").has_value());
}

// A directory shaped like a tracefs whose buffer was never expanded, as a
// freshly booted kernel shows it: only the top-level buffer_size_kb names
// the size it will expand to.
class UnexpandedBuffer : public ::testing::Test {
 protected:
  void SetUp() override {
    root_ = std::filesystem::path(::testing::TempDir()) / ("tracefs-" + std::to_string(::getpid()));
    std::filesystem::remove_all(root_);
    put("buffer_size_kb", "7 (expanded: 1408)\n");
    put("per_cpu/cpu0/buffer_size_kb", "7\n");
    put("per_cpu/cpu1/buffer_size_kb", "7\n");
    put("trace_clock", "[local] global counter\n");
    put("trace_options", "print-parent\nnosym-offset\n");
  }
  void TearDown() override { std::filesystem::remove_all(root_); }
  void put(const std::string& rel, const std::string& text) {
    std::filesystem::create_directories((root_ / rel).parent_path());
    std::ofstream(root_ / rel) << text;
  }
  std::filesystem::path root_;
};

TEST_F(UnexpandedBuffer, KnobsSaveTheSizeItExpandsTo) {
  Tracefs fs(std::make_shared<LocalFileOps>(), root_.string());
  auto knobs = Knobs::save(fs.top());
  ASSERT_TRUE(knobs.ok()) << knobs.error().message;
  EXPECT_EQ(knobs->cpu_buffer_kb, (std::vector<std::pair<int, uint64_t>>{{0, 1408}, {1, 1408}}));
}

TEST_F(UnexpandedBuffer, RestoringTheSavedSizeLeavesItUnexpanded) {
  Tracefs fs(std::make_shared<LocalFileOps>(), root_.string());
  auto knobs = Knobs::save(fs.top());
  ASSERT_TRUE(knobs.ok()) << knobs.error().message;
  ASSERT_TRUE(knobs->restore(fs.top()).ok());
  std::ifstream cpu0(root_ / "per_cpu/cpu0/buffer_size_kb");
  std::string text;
  std::getline(cpu0, text);
  EXPECT_EQ(text, "7");
}

TEST_F(UnexpandedBuffer, KnobsKeepASizeSetPerCpu) {
  put("buffer_size_kb", "X\n");  // the CPUs differ
  put("per_cpu/cpu1/buffer_size_kb", "2048\n");
  Tracefs fs(std::make_shared<LocalFileOps>(), root_.string());
  auto knobs = Knobs::save(fs.top());
  ASSERT_TRUE(knobs.ok()) << knobs.error().message;
  EXPECT_EQ(knobs->cpu_buffer_kb, (std::vector<std::pair<int, uint64_t>>{{0, 7}, {1, 2048}}));
}

TEST_F(UnexpandedBuffer, TracingThreshComesBackAfterATestSetIt) {
  put("tracing_thresh", "0\n");
  Tracefs fs(std::make_shared<LocalFileOps>(), root_.string());
  auto knobs = Knobs::save(fs.top());
  ASSERT_TRUE(knobs.ok()) << knobs.error().message;
  EXPECT_EQ(knobs->thresh, "0");
  put("tracing_thresh", "150000\n");
  ASSERT_TRUE(knobs->restore(fs.top()).ok());
  std::ifstream in(root_ / "tracing_thresh");
  std::string text;
  std::getline(in, text);
  EXPECT_EQ(text, "0");
}

}  // namespace
}  // namespace tracebed::tracefs
