// DataFile: bounded reads and read-only mappings of a trace.dat.
#include "framework/decode/data_file.h"

#include <unistd.h>

#include <cstdio>
#include <string>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace tracebed::decode {
namespace {

using ::testing::HasSubstr;

class DataFileTest : public ::testing::Test {
 protected:
  void SetUp() override {
    path_ = ::testing::TempDir() + "datafile-" + std::to_string(::getpid()) + ".bin";
    std::FILE* f = std::fopen(path_.c_str(), "wb");
    ASSERT_NE(f, nullptr);
    // More than a page, so mappings start inside one.
    for (int i = 0; i < 10000; ++i) bytes_.push_back(static_cast<uint8_t>(i * 7 + i / 256));
    ASSERT_EQ(std::fwrite(bytes_.data(), 1, bytes_.size(), f), bytes_.size());
    std::fclose(f);
  }
  void TearDown() override { std::remove(path_.c_str()); }

  std::string path_;
  std::vector<uint8_t> bytes_;
};

TEST_F(DataFileTest, MapShowsTheSameBytesAsRead) {
  auto file = DataFile::open(path_);
  ASSERT_TRUE(file.ok()) << file.error().message;
  for (uint64_t offset : {uint64_t{0}, uint64_t{1}, uint64_t{4095}, uint64_t{4097}, uint64_t{9000}}) {
    const uint64_t size = bytes_.size() - offset;
    auto mapped = (*file)->map(offset, size, "test range");
    ASSERT_TRUE(mapped.ok()) << mapped.error().message;
    std::vector<uint8_t> read(size);
    ASSERT_TRUE((*file)->read(offset, read, "test range").ok());
    EXPECT_EQ(std::vector<uint8_t>(mapped->get(), mapped->get() + size), read) << "offset " << offset;
    EXPECT_EQ(read, std::vector<uint8_t>(bytes_.begin() + static_cast<ptrdiff_t>(offset), bytes_.end()));
  }
}

TEST_F(DataFileTest, MapPastTheEndNamesTheOffset) {
  auto file = DataFile::open(path_);
  ASSERT_TRUE(file.ok());
  auto mapped = (*file)->map(9990, 11, "kallsyms");
  ASSERT_FALSE(mapped.ok());
  EXPECT_THAT(mapped.error().message, HasSubstr("kallsyms: 11 bytes exceed file size 10000"));
  EXPECT_THAT(mapped.error().message, HasSubstr("0x2706"));
}

TEST_F(DataFileTest, MapOfAFileCutShortSinceOpeningFails) {
  auto file = DataFile::open(path_);
  ASSERT_TRUE(file.ok());
  ASSERT_EQ(::truncate(path_.c_str(), 5000), 0);
  auto mapped = (*file)->map(4000, 3000, "kallsyms");
  ASSERT_FALSE(mapped.ok());
  EXPECT_THAT(mapped.error().message, HasSubstr("file ended early"));
}

}  // namespace
}  // namespace tracebed::decode
