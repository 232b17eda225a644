#include "framework/vm/cache/cache_inventory.h"

#include <unistd.h>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "framework/base/files.h"
#include "framework/base/files_for_tests.h"

namespace tracebed::vm {
namespace {

namespace fs = std::filesystem;
using namespace std::chrono_literals;

class CacheInventory : public base::ScratchDirTest {
 protected:
  void file(const std::string& rel, size_t bytes, std::chrono::hours age) {
    fs::path p = dir_ / rel;
    ASSERT_TRUE(base::write_file_atomic(p, std::string(bytes, 'x')).ok());
    auto t = fs::file_time_type::clock::now() - age;
    fs::last_write_time(p, t);
    for (fs::path d = p.parent_path(); d != dir_; d = d.parent_path()) fs::last_write_time(d, t);
  }
};

TEST_F(CacheInventory, ItemsPerKindWithSizeAndNewestTime) {
  file("kernels/debian-6.12-abc/bzImage", 1000, 48h);
  file("kernels/debian-6.12-abc/modules/a.ko", 24, 1h);  // touched recently: the item is recent
  file("snapshots/k1/state", 500, 100h);
  file("apt/lists/x", 7, 100h);
  auto items = cache_items(dir_);
  ASSERT_EQ(items.size(), 3u);
  EXPECT_EQ(items[0].kind, "kernels");
  EXPECT_EQ(items[0].bytes, 1024u);
  EXPECT_LT(fs::file_time_type::clock::now() - items[0].last_used, 2h);
  EXPECT_EQ(items[1].kind, "snapshots");
  EXPECT_EQ(items[2].kind, "apt");
}

TEST_F(CacheInventory, PruneRemovesOnlyOldItemsOfPrunableKinds) {
  file("kernels/old/bzImage", 100, 24h * 40);
  file("kernels/new/bzImage", 100, 24h);
  file("snapshots/old/state", 50, 24h * 40);
  file("apt/lists/x", 7, 24h * 400);  // apt lists are kept
  auto dry = prune_cache(dir_, 30 * 24h, {}, true);
  EXPECT_EQ(dry.removed.size(), 2u);
  EXPECT_EQ(dry.bytes, 150u);
  EXPECT_TRUE(fs::exists(dir_ / "kernels/old"));
  auto only_snapshots = prune_cache(dir_, 30 * 24h, {"snapshots"}, false);
  ASSERT_EQ(only_snapshots.removed.size(), 1u);
  EXPECT_FALSE(fs::exists(dir_ / "snapshots/old"));
  EXPECT_TRUE(fs::exists(dir_ / "kernels/old"));
  auto all = prune_cache(dir_, 30 * 24h, {}, false);
  EXPECT_EQ(all.removed.size(), 1u);
  EXPECT_FALSE(fs::exists(dir_ / "kernels/old"));
  EXPECT_TRUE(fs::exists(dir_ / "kernels/new"));
  EXPECT_TRUE(fs::exists(dir_ / "apt/lists/x"));
}

TEST_F(CacheInventory, ARunDirectoryOfALiveProcessIsInUse) {
  file(fmt::format("run/{}-0/console.log", getpid()), 10, 24h * 400);
  file("run/999999999-0/console.log", 10, 24h * 400);
  auto r = prune_cache(dir_, 1h, {}, false);
  ASSERT_EQ(r.removed.size(), 1u);
  EXPECT_EQ(r.removed[0].path.filename(), "999999999-0");
  EXPECT_TRUE(fs::exists(dir_ / fmt::format("run/{}-0", getpid())));
}

// The names make_run_dir and the test fixtures give, and a path inside one
// as it appears in QEMU's command line.
TEST(RunDirOwner, PidFromTheName) {
  EXPECT_EQ(run_dir_owner("1234-0"), 1234);
  EXPECT_EQ(run_dir_owner("1234-17/agent-serial.sock"), 1234);
  EXPECT_EQ(run_dir_owner("test-987"), 987);
  EXPECT_EQ(run_dir_owner("tracebed-abc"), 0);
  EXPECT_EQ(run_dir_owner(""), 0);
}

TEST(ParseDuration, UnitsAndRefusals) {
  std::chrono::seconds s{};
  EXPECT_TRUE(parse_duration("30d", s));
  EXPECT_EQ(s, std::chrono::seconds(30 * 86400));
  EXPECT_TRUE(parse_duration("90", s));
  EXPECT_EQ(s, 90s);
  EXPECT_TRUE(parse_duration("12h", s));
  EXPECT_EQ(s, 12h);
  EXPECT_FALSE(parse_duration("3w", s));
  EXPECT_FALSE(parse_duration("", s));
  EXPECT_FALSE(parse_duration("-1d", s));
}

}  // namespace
}  // namespace tracebed::vm
