#include "framework/base/files.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "framework/base/files_for_tests.h"
#include "framework/base/own_mount_for_tests.h"

namespace tracebed::base {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;

using FilesTest = ScratchDirTest;

TEST_F(FilesTest, WritesThenReadsBackEveryByte) {
  // Sizes around the first buffer and its doublings, with every byte value.
  for (size_t size : {size_t{0}, size_t{1}, size_t{4095}, size_t{4096}, size_t{4097}, size_t{1} << 20}) {
    SCOPED_TRACE(size);
    std::string data(size, '\0');
    for (size_t i = 0; i < size; ++i) data[i] = static_cast<char>(i * 131 % 256);
    fs::path p = dir_ / "a" / "b" / "file";
    ASSERT_TRUE(write_file_atomic(p, data).ok());
    auto back = read_file(p);
    ASSERT_TRUE(back.ok()) << back.error().message;
    EXPECT_EQ(*back, data);
  }
  // No temporary file is left beside it.
  EXPECT_EQ(std::distance(fs::directory_iterator(dir_ / "a" / "b"), fs::directory_iterator()), 1);
}

TEST_F(FilesTest, ReadsFilesThatUnderstateTheirSize) {
  // procfs says 0 bytes; the content is longer than the first buffer.
  auto maps = read_file("/proc/self/maps");
  ASSERT_TRUE(maps.ok()) << maps.error().message;
  EXPECT_THAT(*maps, HasSubstr("[stack]"));
}

TEST_F(FilesTest, ErrorsNameThePathAndTheReason) {
  auto r = read_file(dir_ / "missing");
  ASSERT_FALSE(r.ok());
  EXPECT_THAT(r.error().message, HasSubstr((dir_ / "missing").string()));
  EXPECT_THAT(r.error().message, HasSubstr("No such file or directory"));
  fs::create_directories(dir_);
  r = read_file(dir_);
  ASSERT_FALSE(r.ok());
  EXPECT_THAT(r.error().message, HasSubstr("Is a directory"));
  auto w = write_file_atomic(dir_, "x");
  ASSERT_FALSE(w.ok());
  EXPECT_THAT(w.error().message, HasSubstr(dir_.string()));
}

TEST_F(FilesTest, ReplacesWithoutTearing) {
  fs::path p = dir_ / "f";
  ASSERT_TRUE(write_file_atomic(p, "old contents").ok());
  ASSERT_TRUE(write_file_atomic(p, "new").ok());
  EXPECT_EQ(read_file(p).value(), "new");
}

TEST_F(FilesTest, CopiesEveryByteAndReplacesTheTarget) {
  std::string data(3 << 20, '\0');  // more than one piece of the copy
  for (size_t i = 0; i < data.size(); ++i) data[i] = static_cast<char>(i * 7 + i / 4096);
  ASSERT_TRUE(write_file_atomic(dir_ / "from", data).ok());
  ASSERT_TRUE(write_file_atomic(dir_ / "to", "older and other").ok());
  ASSERT_TRUE(base::copy_file(dir_ / "from", dir_ / "to").ok());
  EXPECT_TRUE(read_file(dir_ / "to").value() == data);
  auto missing = base::copy_file(dir_ / "nothing", dir_ / "to2");
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.error().message, (dir_ / "nothing").string() + ": cannot open: No such file or directory");
}

// A full disk: errno's words (std::filesystem::copy_file says "Input/output
// error" there), and no partial copy left.
TEST_F(FilesTest, CopyToAFullDiskSaysSoAndLeavesNothing) {
  ASSERT_TRUE(write_file_atomic(dir_ / "from", std::string(100000, 'x')).ok());
  auto run = run_on_own_mount(dir_ / "disk", "size=16k", false, [&] {
    auto st = base::copy_file(dir_ / "from", dir_ / "disk" / "to");
    return (st ? std::string("copied") : st.error().message) + (std::filesystem::exists(dir_ / "disk" / "to") ? " (left)" : "");
  });
  if (!run.setup_error.empty()) GTEST_SKIP() << "needs a mount namespace of its own (root): " << run.setup_error;
  EXPECT_EQ(run.result, (dir_ / "disk" / "to").string() + ": write: No space left on device");
}

}  // namespace
}  // namespace tracebed::base
