#include "framework/base/files.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "framework/base/files_for_tests.h"

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

}  // namespace
}  // namespace tracebed::base
