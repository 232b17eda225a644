// Test support: a file of the source tree read whole, and a scratch
// directory of its own for each test.
#pragma once

#include <unistd.h>

#include <filesystem>
#include <string>

#include <gtest/gtest.h>

#include "framework/base/files.h"

namespace tracebed::base {

// `relative` to the source tree; a failed read fails the test (naming the
// path and why) and gives "".
inline std::string source_file(const std::string& relative) {
  auto text = read_file(std::filesystem::path(TRACEBED_SOURCE_DIR) / relative);
  EXPECT_TRUE(text.ok()) << text.error().message;
  return text.ok() ? std::move(text).value() : std::string();
}

// dir_ exists, empty, for the test's run, and goes with everything in it.
class ScratchDirTest : public ::testing::Test {
 protected:
  void SetUp() override {
    const auto* test = ::testing::UnitTest::GetInstance()->current_test_info();
    dir_ = std::filesystem::path(::testing::TempDir()) /
           fmt::format("tracebed-{}-{}-{}", test->test_suite_name(), test->name(), getpid());
    std::filesystem::remove_all(dir_);
    std::filesystem::create_directories(dir_);
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }
  std::filesystem::path dir_;
};

}  // namespace tracebed::base
