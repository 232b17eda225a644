// Reads a captured tracefs file from testdata/ (tests only).
#pragma once

#include <string>

#include "framework/base/files_for_tests.h"

namespace tracebed::tracefs::testlib {

inline std::string testdata(const std::string& name) { return base::source_file("framework/tracefs/testdata/" + name); }

}  // namespace tracebed::tracefs::testlib
