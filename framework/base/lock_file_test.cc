#include "framework/base/lock_file.h"

#include <sys/wait.h>
#include <unistd.h>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "framework/base/files_for_tests.h"

namespace tracebed::base {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;

class LockFileTest : public ScratchDirTest {
 protected:
  // Whether another process can take the lock now (flock locks belong to
  // open file descriptions, so a second open in this process would do too;
  // a child is what the callers face).
  bool free_for_another_process() {
    pid_t pid = fork();
    if (pid == 0) _exit(LockFile::try_acquire(dir_ / "sub" / ".lock").ok() ? 0 : 1);
    int status = 0;
    waitpid(pid, &status, 0);
    return WIFEXITED(status) && WEXITSTATUS(status) == 0;
  }
};

TEST_F(LockFileTest, HeldUntilTheObjectDies) {
  {
    auto lock = LockFile::acquire(dir_ / "sub" / ".lock");
    ASSERT_TRUE(lock.ok()) << lock.error().message;
    EXPECT_FALSE(free_for_another_process());
    auto again = LockFile::try_acquire(dir_ / "sub" / ".lock");
    ASSERT_FALSE(again.ok());
    EXPECT_THAT(again.error().message, HasSubstr(".lock"));
  }
  EXPECT_TRUE(free_for_another_process());
}

TEST_F(LockFileTest, AMoveHandsTheLockOver) {
  auto lock = LockFile::acquire(dir_ / "sub" / ".lock");
  ASSERT_TRUE(lock.ok());
  LockFile moved = std::move(lock).value();
  EXPECT_FALSE(free_for_another_process());
  moved = LockFile::acquire(dir_ / "other.lock").value();
  EXPECT_TRUE(free_for_another_process());
}

TEST_F(LockFileTest, AnUncreatableFileIsAnError) {
  auto lock = LockFile::acquire("/proc/tracebed-no-such-dir/.lock");
  ASSERT_FALSE(lock.ok());
  EXPECT_THAT(lock.error().message, HasSubstr("/proc/tracebed-no-such-dir/.lock"));
}

}  // namespace
}  // namespace tracebed::base
