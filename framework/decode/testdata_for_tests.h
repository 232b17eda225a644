// Test support: a file of framework/decode/testdata/formats (event formats,
// header_page, kallsyms and printk formats captured from the recorded
// fixtures), read whole; a failed read fails the test.
#pragma once

#include <string>

#include "framework/base/files_for_tests.h"

namespace tracebed::decode {

inline std::string testdata(const std::string& name) {
  return base::source_file("framework/decode/testdata/formats/" + name);
}

}  // namespace tracebed::decode
