#include "framework/vm/kernels/cache_entry.h"

#include <fstream>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "framework/base/files.h"
#include "framework/base/files_for_tests.h"
#include "framework/testing/assert_ok.h"

namespace tracebed::vm {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;

class CacheEntry : public base::ScratchDirTest {
 protected:
  void SetUp() override {
    base::ScratchDirTest::SetUp();
    write("bzImage", std::string(100000, 'k'));
    write("config", "CONFIG_FTRACE=y\n");
  }
  void write(const std::string& name, const std::string& text) { std::ofstream(dir_ / name, std::ios::binary) << text; }
  // One byte changed in the middle, the size kept.
  void damage(const std::string& name) {
    std::fstream f(dir_ / name, std::ios::in | std::ios::out | std::ios::binary);
    f.seekp(static_cast<std::streamoff>(fs::file_size(dir_ / name) / 2));
    f.put('X');
  }
  const std::vector<fs::path> files_ = {"bzImage", "config"};
};

TEST_F(CacheEntry, MarkerHoldsTheReleaseThenEachFilesHash) {
  auto text = completion_text(dir_, "6.12.0-test", files_);
  ASSERT_OK(text);
  // sha256sum of the same bytes, by hand: printf 'CONFIG_FTRACE=y\n' | sha256sum
  EXPECT_THAT(*text, ::testing::StartsWith("6.12.0-test\nsha256 bzImage "));
  EXPECT_THAT(*text, HasSubstr("\nsha256 config b0319cc1ec78bc2dfd5d3611926508e8977a13bb92ace591fd8141f3fd0f7581\n"));
}

TEST_F(CacheEntry, DamagedFileIsFoundAndNamed) {
  auto text = completion_text(dir_, "6.12.0-test", files_);
  ASSERT_OK(text);
  ASSERT_OK(base::write_file_atomic(dir_ / ".complete", *text));
  EXPECT_OK(check_cache_entry(dir_, files_));
  damage("bzImage");
  auto st = check_cache_entry(dir_, files_);
  ASSERT_FALSE(st.ok()) << "one byte of bzImage changed, the same size";
  EXPECT_THAT(st.error().message, HasSubstr((dir_ / "bzImage").string() + " has sha256 "));
  EXPECT_THAT(st.error().message, HasSubstr("it had when it was cached"));
  fs::remove(dir_ / "config");
  EXPECT_THAT(check_cache_entry(dir_, {"config"}).error().message, HasSubstr("config: missing, though"));
}

TEST_F(CacheEntry, OldMarkerGetsTheHashesOfTheFilesAsTheyAre) {
  ASSERT_OK(base::write_file_atomic(dir_ / ".complete", "5.10.0-old\n"));
  EXPECT_OK(check_cache_entry(dir_, files_));
  auto marker = base::read_file(dir_ / ".complete");
  ASSERT_OK(marker);
  EXPECT_THAT(*marker, ::testing::StartsWith("5.10.0-old\nsha256 bzImage "));
  damage("config");
  EXPECT_FALSE(check_cache_entry(dir_, files_).ok());
}

}  // namespace
}  // namespace tracebed::vm
