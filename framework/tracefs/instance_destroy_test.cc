// Instance::destroy against a tracefs whose rmdir answers EBUSY a given
// number of times, as the kernel does while hist triggers hold an instance.
#include <cerrno>
#include <memory>

#include <gtest/gtest.h>

#include "framework/tracefs/tracefs.h"

namespace tracebed::tracefs {
namespace {

class BusyRmdir final : public FileOps {
 public:
  int busy = 0;  // rmdirs still to refuse
  int rmdirs = 0;
  Result<std::string> read(const std::string&) override { return std::string(); }
  Result<std::string> read_available(const std::string&) override { return std::string(); }
  Result<std::string> read_pages(const std::string&, uint32_t, uint32_t, uint32_t) override { return std::string(); }
  Result<int> write(const std::string&, std::string_view, bool) override { return 0; }
  Result<std::vector<std::string>> list(const std::string&) override { return std::vector<std::string>{}; }
  Result<int> mkdir(const std::string&) override { return 0; }
  Result<int> rmdir(const std::string&) override {
    ++rmdirs;
    return busy-- > 0 ? EBUSY : 0;
  }
  Result<FileInfo> stat(const std::string&) override { return FileInfo{true, 0755}; }
  Result<std::string> release() override { return std::string("6.12.0"); }
  uint32_t page_size() override { return 4096; }
};

// The instance "busy" of a tracefs whose rmdir refuses as often as asked.
class InstanceDestroy : public ::testing::Test {
 protected:
  void SetUp() override { ASSERT_TRUE(inst.ok()) << inst.error().message; }
  std::shared_ptr<BusyRmdir> ops = std::make_shared<BusyRmdir>();
  Tracefs fs{ops, "/t"};
  Result<Instance> inst = fs.create_instance("busy");
};

TEST_F(InstanceDestroy, FailedRemovalKeepsOwnershipSoALaterCallRemovesIt) {
  ops->busy = 1;
  EXPECT_FALSE(inst->destroy(/*busy_retries=*/0).ok());
  EXPECT_TRUE(inst->owned()) << "a failed rmdir gave up the directory: it would never be removed";
  EXPECT_TRUE(inst->destroy().ok());
  EXPECT_FALSE(inst->owned());
  EXPECT_EQ(ops->rmdirs, 2);
  EXPECT_TRUE(inst->destroy().ok());  // idempotent once removed
  EXPECT_EQ(ops->rmdirs, 2);
}

TEST_F(InstanceDestroy, BusyIsRetriedOnlyAsOftenAsAsked) {
  ops->busy = 3;
  Status s = inst->destroy(/*busy_retries=*/2);
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.error().message.find("EBUSY"), std::string::npos) << s.error().message;
  EXPECT_EQ(ops->rmdirs, 3);
  EXPECT_TRUE(inst->destroy(/*busy_retries=*/2).ok());
}

}  // namespace
}  // namespace tracebed::tracefs
