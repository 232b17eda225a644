// Reads a captured tracefs file from testdata/ (tests only).
#pragma once

#include <string>

#include <gtest/gtest.h>

#include "framework/base/files.h"

namespace tracebed::tracefs::testing {

inline std::string testdata(const std::string& name) {
  auto text = base::read_file(std::string(TRACEBED_SOURCE_DIR) + "/framework/tracefs/testdata/" + name);
  EXPECT_TRUE(text.ok()) << text.error().message;
  return text.ok() ? std::move(text).value() : std::string();
}

}  // namespace tracebed::tracefs::testing
