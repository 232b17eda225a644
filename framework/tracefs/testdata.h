// Reads a captured tracefs file from testdata/ (tests only).
#pragma once

#include <fstream>
#include <sstream>
#include <string>

#include <gtest/gtest.h>

namespace tracebed::tracefs::testing {

inline std::string testdata(const std::string& name) {
  std::string path = std::string(TRACEBED_SOURCE_DIR) + "/framework/tracefs/testdata/" + name;
  std::ifstream in(path, std::ios::binary);
  EXPECT_TRUE(in.good()) << "cannot open " << path;
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

}  // namespace tracebed::tracefs::testing
